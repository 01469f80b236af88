"""Brettspiel through the SDK: reference bots in the local arena, transcripts that verify."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence

import pytest

from bot_sdk.bots import reference_bot
from bot_sdk.play import play_match
from games.board.bots import HeuristicBot, RandomBot
from games.board.rules.brettspiel import Brettspiel
from games.board.sdk import BrettspielBot, BrettspielView, points_now, tiles_due
from referee.rules import CHANCE, make_variant
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


@pytest.mark.parametrize("pro", [False, True])
@pytest.mark.parametrize("luck", [False, True])
@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_reference_bots_play_whole_games_and_transcripts_verify(players: int, luck: bool, pro: bool) -> None:
    game = make_variant("board", {"players": players, "luck": luck, "pro": pro})
    seats = [RandomBot, HeuristicBot, LowestBot, RandomBot, HeuristicBot, LowestBot][:players]
    for seed in range(3):
        result = play_match(game, seats, seed)
        transcript = Transcript.from_json(json.loads(json.dumps(result.transcript.to_json())))
        assert verify(transcript) == result.outcome
        assert transcript.digest() == result.transcript.digest()
        deals = [step for step in transcript.steps if step[0][0] == CHANCE and isinstance(step[0][1], tuple)]
        assert len(deals) == (2 if players <= 3 and not pro else 1)


def test_a_transcript_with_a_forged_deal_is_rejected() -> None:
    game = make_variant("board", {"players": 2})
    transcript = play_match(game, [RandomBot, RandomBot], 7).transcript
    deal = transcript.steps[0][0][1]
    assert isinstance(deal, tuple)
    forged = Transcript(
        transcript.variant,
        transcript.engine_version,
        transcript.config,
        transcript.seed,
        (((CHANCE, (deal[1], deal[0], *deal[2:])),), *transcript.steps[1:]),
        transcript.outcome,
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


def test_the_sdk_defaults_answer_the_pro_decisions() -> None:
    """A bot with only ``choose_tiles`` passes on action cards and opens the best first space."""
    game = make_variant("board", {"players": 3, "pro": True, "luck": True})
    result = play_match(game, [LowestBot, LowestBot, RandomBot], 4)
    assert verify(result.transcript) == result.outcome
    assert isinstance(game, Brettspiel)
    state = game.position(
        [(10,), (20,), (30,), (40, 41, 42, 43), (), (), (), (), (), ()], [(44,), (50,), (60,)]
    )
    # Row 3 of the red side is ". . R . +t . . TT": the 44 lands on the draw tile space.
    state, _ = game.apply(state, {0: 44, 1: 50, 2: 60})
    assert state.pending[0].seat == CHANCE


def test_the_default_row_is_the_best_first_space_for_the_tile() -> None:
    game = make_variant("board", {"players": 2, "pro": True})
    assert isinstance(game, Brettspiel)
    # Row 5 of the red side is "RR . +4 . +a TT": the 46 takes it; of the free rows 2 ("."),
    # 4 ("+a") and 5 ("RR" once taken) row 4's action card is worth most.
    rows = [(10,), (20,), (), (30,), (), (40, 41, 42, 43, 45), (), (), (), ()]
    state = game.position(rows, [(46, 1), (50, 2)])
    state, _ = game.apply(state, {0: 46, 1: 50})
    view = game.view(state, 0)
    assert view.decision is not None and view.decision.options == (2, 4, 6, 7, 8, 9)
    assert LowestBot().decide(view) == 4


@pytest.mark.slow
@pytest.mark.parametrize(("luck", "pro"), [(False, False), (True, False), (False, True), (True, True)])
def test_the_heuristic_beats_random(luck: bool, pro: bool) -> None:
    game = make_variant("board", {"luck": luck, "pro": pro})
    mine, theirs = [], []
    for seed in range(80):
        seat = seed % 4
        seats: list[type[BrettspielBot]] = [RandomBot] * 4
        seats[seat] = HeuristicBot
        scores = play_match(game, seats, 500 + seed).outcome.scores
        mine.append(scores[seat])
        theirs.extend(s for i, s in enumerate(scores) if i != seat)
    assert statistics.fmean(mine) > statistics.fmean(theirs) + 4
