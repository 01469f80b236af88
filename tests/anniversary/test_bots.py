"""Anniversary reference bots: legal in every decision, the heuristic spends special cards to avoid
takes and beats random play; their actions are plain ints, so they play the same over gRPC
(``test_anniversary_wire.py``)."""

from __future__ import annotations

import json
import statistics
from enum import IntEnum
from pathlib import Path

import pytest
from annkit import step
from testkit import sixnimmt

from bot_sdk.bot import is_action
from bot_sdk.loader import load_bot
from bot_sdk.play import BotError, play_match
from games.anniversary.bots import HeuristicBot, RandomBot, cost_after
from games.anniversary.rules.anniversary import SPECIAL, TAKE, Anniversary, AnniversaryConfig, Special
from games.anniversary.rules.anniversary_cards import Table
from referee.rules.core import CHANCE
from referee.rules.transcript import Playthrough

FULL = (10, 11, 12, 13, 14)


def test_the_reference_bots_are_found_by_name() -> None:
    assert load_bot("random", "anniversary") is RandomBot
    assert load_bot("heuristic", "jubilaeum") is HeuristicBot


def test_random_and_heuristic_bots_play_whole_games_legally() -> None:
    """The local arena stops with a BotError on any illegal answer."""
    for players in (2, 5, 8):
        variant = Anniversary(AnniversaryConfig(players=players, specials_per_turn=2))
        bots = [RandomBot if seat % 2 else HeuristicBot for seat in range(players)]
        for seed in range(3):
            result = play_match(variant, bots, seed)
            assert result.outcome.termination.value == "hands_played"


def test_the_heuristic_beats_random_play() -> None:
    variant = Anniversary(AnniversaryConfig(players=4))
    heuristic, random_ = [], []
    for seed in range(12):
        scores = play_match(variant, [HeuristicBot, RandomBot, HeuristicBot, RandomBot], seed).outcome.scores
        heuristic += [scores[0], scores[2]]
        random_ += [scores[1], scores[3]]
    assert statistics.fmean(heuristic) + 10 < statistics.fmean(random_)


def decide(bot_class: type, variant: Anniversary, state, seat: int = 0):  # type: ignore[no-untyped-def]
    bot = bot_class()
    bot.seat = seat
    return bot.decide(variant.view(state, seat))


def test_the_heuristic_plays_a_special_card_that_avoids_a_take() -> None:
    variant = Anniversary(AnniversaryConfig(players=2))
    for kind in (Special.SEVEN_NIMMT, Special.FIFTH_ROW, Special.INSERT, Special.SHIFT, Special.BLOCK):
        state = variant.position(rows=[FULL, (50,), (90,)], hands=[(15, 1), (60, 2)], specials=[(kind,), ()])
        state, _ = step(variant, state, {0: 15, 1: 60})
        assert state.phase == SPECIAL
        action = decide(HeuristicBot, variant, state)
        assert isinstance(action, tuple) and action[:1] == (kind,), kind
        state, _ = step(variant, state, {0: action})
        assert state.scores[0] == 0, kind


def test_the_heuristic_keeps_its_special_card_when_nothing_is_at_stake() -> None:
    variant = Anniversary(AnniversaryConfig(players=2))
    state = variant.position(rows=[(10,), (50,)], hands=[(15, 1), (60, 2)], specials=[(Special.INSERT,), ()])
    state, _ = step(variant, state, {0: 15, 1: 60})
    assert state.phase == SPECIAL and decide(HeuristicBot, variant, state) == ()


def test_the_heuristic_plays_negative_equals_positive_on_the_most_heads() -> None:
    variant = Anniversary(AnniversaryConfig(players=2, swap=False))
    state = variant.position(
        rows=[FULL, (50,)], hands=[(15, 1), (60, 2)], specials=[(Special.NEGATIVE_POSITIVE,), ()]
    )
    state, _ = step(variant, state, {0: 15, 1: 60})
    assert state.phase == TAKE
    assert decide(HeuristicBot, variant, state) == (Special.NEGATIVE_POSITIVE, 11)


def test_cost_after_simulates_each_special_card() -> None:
    table = Table((FULL, (50,)), (False, False), (False, False))
    assert cost_after(table, 15, (), 5) == 11
    assert cost_after(table, 15, (Special.SHIFT, 14, 1), 5) == 0
    assert cost_after(table, 15, (Special.REPLACE, 60), 5) == 0
    assert cost_after(table, 15, (Special.BLOCK, 0), 5) == 3, "15 is low then: it takes the 50 (three heads)"
    assert cost_after(table, 5, (), 5) == 3, "a low card takes the cheapest row: the 50"


def test_the_heuristic_swaps_with_the_option_itself_never_a_special() -> None:
    """An action is ints: ``(0, Special.BLOCK)`` equals the option but the wire refuses it."""
    variant = Anniversary(AnniversaryConfig(players=2))
    state = variant.position(rows=[FULL, (50,)], hands=[(15, 1), (60, 2)], specials=[(Special.BLOCK,), ()])
    state, _ = step(variant, state, {0: 15, 1: 60})
    while state.phase == SPECIAL:
        state, _ = step(variant, state, {state.pending[0].seat: ()})
    assert state.phase == TAKE
    action = decide(HeuristicBot, variant, state)
    assert action == (0, 7) and is_action(action) and all(type(v) is int for v in action)


def test_every_option_the_engine_offers_and_every_answer_of_the_bots_is_plain_ints() -> None:
    """The arena refuses any other action (as the wire does), so whole games prove the bots'."""
    variant = Anniversary(AnniversaryConfig(players=4, specials_per_turn=2, reshuffle_specials=True))
    for seed in range(4):
        play_match(variant, [HeuristicBot, RandomBot, HeuristicBot, RandomBot], seed)
    game = Playthrough(variant, 5)
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            game.resolve_chance()
            continue
        assert all(is_action(option) for decision in pending for option in decision.options)
        game.apply({d.seat: d.options[-1] for d in pending})


def test_the_arena_refuses_an_action_that_is_not_plain_ints() -> None:
    class Enumerated(HeuristicBot):
        def choose_card(self, view):  # type: ignore[no-untyped-def]
            return IntEnum("Card", {"C": super().choose_card(view)}).C

    variant = Anniversary(AnniversaryConfig(players=2))
    with pytest.raises(BotError, match="not an action"):
        play_match(variant, [Enumerated, RandomBot], 1)


def test_bot_play_runs_anniversary_games_over_grpc(tmp_path: Path) -> None:
    result = sixnimmt(
        tmp_path, "bot", "play", "heuristic", "--variant", "anniversary", "--against", "random,random",
        "--games", "3", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "not an action" not in result.stderr
    data = json.loads(result.stdout)
    assert data["variant"] == "anniversary" and data["games"] == 3
    entrants = {e["name"]: e for e in data["entrants"]}
    assert set(entrants) == {"heuristic", "random", "random#2"}
    for entrant in entrants.values():
        assert entrant["games"] == 3 and entrant["faults"] == {} and entrant["defaulted"] == 0
        assert entrant["decisions"] >= 3 * 24 and entrant["exit_code"] == 0
    assert entrants["heuristic"]["mean_score"] < entrants["random"]["mean_score"]
