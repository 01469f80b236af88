"""The anniversary variant over the wire: bots as processes under a real referee play the games
they play in-process, without a fault, and the transcripts verify."""

from __future__ import annotations

from typing import Any

import pytest

from arena.matches import MatchPlan, play_matches
from arena.tournament import run_tournament
from referee.rules.transcript import Transcript, verify

REMOTE: list[dict[str, Any]] = [
    {"players": 3},
    {
        "players": 3,
        "specials_per_turn": 2,
        "reshuffle_specials": True,
        "fifth_row_end": "next_take",
        "block_end": "turn",
    },
]


@pytest.mark.parametrize("config", REMOTE, ids=["defaults", "options"])
def test_bots_as_processes_finish_anniversary_games_without_faults(config: dict[str, Any]) -> None:
    plans = [MatchPlan(("a", "b", "c"), 31), MatchPlan(("c", "a", "b"), 32)]
    run = play_matches(
        {"a": "random", "b": "heuristic", "c": "heuristic"}, plans, variant="anniversary", config=config
    )
    assert run.exit_codes == {"a": 0, "b": 0, "c": 0}
    assert len(run.matches) == 2
    for match, plan in zip(run.matches, plans, strict=True):
        assert match.status == "finished" and not match.error
        for seat in match.seats:
            assert seat.faults == {} and seat.defaulted == 0 and not seat.forfeited
        transcript = Transcript.from_json(match.transcript)
        assert transcript.variant == "anniversary" and transcript.seed == plan.seed
        assert match.digest == transcript.digest()
        outcome = verify(transcript)
        assert list(outcome.scores) == [s.score for s in match.seats]
        assert list(outcome.ranks) == [s.rank for s in match.seats]


@pytest.mark.parametrize("config", REMOTE, ids=["defaults", "options"])
def test_remote_anniversary_play_is_the_same_game_as_in_process_play(config: dict[str, Any]) -> None:
    """The heuristic swaps special cards after its takes: over the wire those actions must be the
    ints the options hold (an ``IntEnum`` inside was an illegal fault there, so the games differed)."""
    kwargs: dict[str, Any] = {"variant": "anniversary", "config": config, "table_size": 3, "deals": 1}
    bots = ["random", "heuristic", "heuristic", "random"]
    local_table, local = run_tournament(bots, seed=6, **kwargs)
    remote_table, remote = run_tournament(bots, seed=6, remote=True, **kwargs)
    assert [r.digest for r in remote] == [r.digest for r in local]
    assert [(s.name, s.mean_score) for s in remote_table] == [(s.name, s.mean_score) for s in local_table]
    assert all(f == 0 for r in remote for f in r.faults)
