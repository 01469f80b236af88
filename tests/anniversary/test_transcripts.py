"""Anniversary transcripts: every deal and draw recorded, replayed, verified; tampering is caught;
``sixnimmt play --transcripts`` writes games that ``sixnimmt verify`` passes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import annkit
import pytest
from hypothesis import given
from hypothesis import strategies as st
from testkit import sixnimmt

from games.anniversary.rules.anniversary import DRAW, Anniversary, AnniversaryConfig
from referee.rules.core import CHANCE
from referee.rules.errors import TranscriptError
from referee.rules.transcript import Transcript, replay, verify


@annkit.GAMES
@given(config=annkit.configs(), seed=annkit.seeds, policy_seed=st.integers(0, 2**32))
def test_a_transcript_replays_and_verifies(config: AnniversaryConfig, seed: int, policy_seed: int) -> None:
    game, steps = annkit.play(Anniversary(config), seed, annkit.random_policy(policy_seed))
    transcript = game.transcript()
    state, events = replay(transcript)
    assert state == game.state
    assert events == [s.events for s in steps]
    assert verify(transcript) == game.outcome()
    again = Transcript.from_json(json.loads(json.dumps(transcript.to_json())))
    assert again == transcript and again.digest() == transcript.digest()
    assert verify(again) == game.outcome()


def played(seed: int = 4) -> tuple[Transcript, list[annkit.Step]]:
    game, steps = annkit.play(Anniversary(AnniversaryConfig(players=4)), seed, annkit.random_policy(seed))
    return game.transcript(), steps


def test_every_chance_outcome_is_a_step_of_the_transcript() -> None:
    transcript, steps = played()
    chance = [s for s in steps if CHANCE in s.actions]
    assert len(chance) == 2 + sum(1 for s in steps if s.before.phase == DRAW), "two deals and every draw"
    assert any(s.before.phase == DRAW for s in steps), "guard: this game has a swap"
    assert sum(1 for step in transcript.steps if step[0][0] == CHANCE) == len(chance)


def _tampered(transcript: Transcript, index: int, step: tuple) -> Transcript:
    steps = list(transcript.steps)
    steps[index] = step
    return dataclasses.replace(transcript, steps=tuple(steps))


def test_verify_rejects_a_tampered_transcript() -> None:
    transcript, steps = played()
    ((seat, deal),) = transcript.steps[0]
    assert isinstance(deal, tuple)
    kinds = deal[-12:]
    other_kinds = (
        (kinds[-1], *kinds[1:-1], kinds[0]) if kinds[0] != kinds[-1] else (*kinds[:-1], kinds[-1] % 7 + 1)
    )
    draw = next(i for i, s in enumerate(steps) if s.before.phase == DRAW)
    ((_, drawn),) = transcript.steps[draw]
    assert isinstance(drawn, int)
    special = next(i for i, s in enumerate(steps) if s.before.pending[0].kind.value == "action_card")
    ((who, _),) = transcript.steps[special]
    forgeries = {
        "special cards dealt otherwise": _tampered(transcript, 0, ((seat, (*deal[:-12], *other_kinds)),)),
        "a special card not in the box": _tampered(transcript, 0, ((seat, (*deal[:-1], 8)),)),
        "another card drawn": _tampered(transcript, draw, ((CHANCE, drawn % 7 + 1),)),
        "a special card never held": _tampered(transcript, special, ((who, (99, 0)),)),
        "seed changed": dataclasses.replace(transcript, seed=transcript.seed + 1),
        "a round cut": dataclasses.replace(transcript, steps=transcript.steps[: len(transcript.steps) // 2]),
        "config changed": dataclasses.replace(transcript, config={**transcript.config, "rounds": 1}),
    }
    for name, forged in forgeries.items():
        assert forged.digest() != transcript.digest(), name
        with pytest.raises(TranscriptError):
            verify(forged)


def test_sixnimmt_play_writes_transcripts_that_sixnimmt_verify_passes(tmp_path: Path) -> None:
    out = tmp_path / "games"
    result = sixnimmt(
        tmp_path, "play", "--variant", "anniversary", "--bots", "heuristic,random,random", "--games", "2",
        "--transcripts", str(out), "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    files = sorted(out.glob("*.json"))
    assert len(files) == 2
    for path in files:
        checked = sixnimmt(tmp_path, "verify", str(path))
        assert checked.returncode == 0 and checked.stdout.startswith("ok: sha256:"), checked.stderr
    body = json.loads(files[0].read_text())
    body["steps"][0][0][1][-1] = 8  # a special card kind that does not exist
    files[0].write_text(json.dumps(body))
    forged = sixnimmt(tmp_path, "verify", str(files[0]))
    assert forged.returncode != 0 and "step 1" in forged.stderr + forged.stdout
