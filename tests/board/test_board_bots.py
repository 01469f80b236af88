"""Brettspiel through the SDK: reference bots in the local arena, transcripts that verify."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence

import pytest

from bot_sdk.arena import play_match
from bot_sdk.board import BrettspielBot, BrettspielView, points_now, tiles_due
from bot_sdk.bots import reference_bot
from bot_sdk.bots.board import HeuristicBot, RandomBot
from referee.rules import CHANCE, make_variant
from referee.rules.brettspiel import Brettspiel
from referee.rules.errors import TranscriptError
from referee.rules.transcript import Transcript, verify


class LowestBot(BrettspielBot):
    """Only ``choose_tiles``: the base class answers luck and pile decisions."""

    def choose_tiles(self, view: BrettspielView) -> Sequence[int]:
        return view.screen[: tiles_due(view)]


def test_the_variant_is_registered_with_its_reference_bots() -> None:
    game = make_variant("brettspiel", {"luck": True, "players": 3})
    assert isinstance(game, Brettspiel) and game.name == "board" and game.config.luck
    assert reference_bot("board", "random") is RandomBot
    assert reference_bot("board", "heuristic") is HeuristicBot


@pytest.mark.parametrize("luck", [False, True])
@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_reference_bots_play_whole_games_and_the_transcripts_verify(players: int, luck: bool) -> None:
    game = make_variant("board", {"players": players, "luck": luck})
    seats = [RandomBot, HeuristicBot, LowestBot, RandomBot, HeuristicBot, LowestBot][:players]
    for seed in range(3):
        result = play_match(game, seats, seed)
        transcript = Transcript.from_json(json.loads(json.dumps(result.transcript.to_json())))
        assert verify(transcript) == result.outcome
        assert transcript.digest() == result.transcript.digest()
        chance_steps = [step for step in transcript.steps if step[0][0] == CHANCE]
        assert len(chance_steps) == (2 if players <= 3 else 1)


def test_a_transcript_with_a_forged_deal_is_rejected() -> None:
    game = make_variant("board", {"players": 2})
    transcript = play_match(game, [RandomBot, RandomBot], 7).transcript
    deal = transcript.steps[0][0][1]
    assert isinstance(deal, tuple)
    forged = Transcript(
        transcript.variant, transcript.engine_version, transcript.config, transcript.seed,
        (((CHANCE, (deal[1], deal[0], *deal[2:])),), *transcript.steps[1:]), transcript.outcome,
    )
    with pytest.raises(TranscriptError, match="step 1: the chance outcome"):
        verify(forged)


def test_points_now_previews_the_forced_attach() -> None:
    game = make_variant("board")
    assert isinstance(game, Brettspiel)
    state = game.position(
        [(10, 11), (20,), (30,), (40,), (), (), (), (), (), ()], [(12,), (21,), (31,), (41,)]
    )
    view = game.view(state, 0)
    # Row 0 is ". . G . -2 R T": the next tile after the 11 lands on the green ox.
    assert points_now(view, 12) == 1
    assert points_now(view, 15) == 2
    assert points_now(view, 21) == 0


@pytest.mark.slow
@pytest.mark.parametrize("luck", [False, True])
def test_the_heuristic_beats_random(luck: bool) -> None:
    game = make_variant("board", {"luck": luck})
    mine, theirs = [], []
    for seed in range(80):
        seat = seed % 4
        seats: list[type[BrettspielBot]] = [RandomBot] * 4
        seats[seat] = HeuristicBot
        scores = play_match(game, seats, 500 + seed).outcome.scores
        mine.append(scores[seat])
        theirs.extend(s for i, s in enumerate(scores) if i != seat)
    assert statistics.fmean(mine) > statistics.fmean(theirs) + 4
