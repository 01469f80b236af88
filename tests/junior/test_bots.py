"""The SDK base classes, the reference bots, and the referee's default action."""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path
from typing import Any

import pytest

from bot_sdk.bots import reference_bot
from bot_sdk.play import play_match
from games.junior.rules.junior import JuniorBasic, JuniorExperts, JuniorExpertsConfig, JuniorView
from games.junior.sdk import JuniorAdvancedBot, JuniorBasicBot, JuniorExpertsBot
from referee.rules import CHANCE, make_variant

from .games import random_steps
from .notation import Cards


class FirstRowBot(JuniorBasicBot):
    def choose_row(self, view: JuniorView) -> int:
        assert view.decision is not None and view.card is not None
        return int(view.decision.options[0])  # type: ignore[arg-type]


class FirstPlayBot(JuniorAdvancedBot):
    def choose_play(self, view: JuniorView) -> tuple[int, int]:
        assert view.decision is not None
        card, row = view.decision.options[0]  # type: ignore[misc]
        return card, row


class LowestCardBot(JuniorExpertsBot):
    def choose_card(self, view: JuniorView) -> int:
        return min(view.hand)


@pytest.mark.parametrize(
    ("name", "bot"),
    [("junior-basic", FirstRowBot), ("junior-advanced", FirstPlayBot), ("junior-experts", LowestCardBot)],
)
def test_a_minimal_bot_of_each_base_class_plays_a_whole_game(name: str, bot: Any) -> None:
    game = make_variant(name, {"players": 3})
    result = play_match(game, [bot] * 3, 1)
    assert sum(result.decisions) > 0 and result.outcome.termination.value == "cards_exhausted"


def test_the_experts_default_row_collects_the_fewest_cards() -> None:
    game = JuniorExperts(JuniorExpertsConfig(players=2))
    cards = Cards(game.deck)
    galloway = cards.card("S")
    state = game.position(
        cards.rows("G G / A A A / I / J"), [[galloway, *cards.cards("N N")], cards.cards("A G I")]
    )
    state, _ = game.apply(state, {0: galloway})  # no last card shows a Galloway: a row is collected
    view = game.view(state, 0)
    assert view.decision is not None and view.decision.options == (0, 1, 2, 3)
    assert [view.takes(galloway, row) for row in range(4)] == [2, 3, 1, 1]
    assert LowestCardBot().choose_row(view) == 2
    assert game.default_action(state, view.decision) == 2


def _mean_cards(name: str, config: dict[str, Any], bot: str, games: int) -> float:
    game = make_variant(name, {"players": 4, **config})
    mine, rand = reference_bot(name, bot), reference_bot(name, "random")
    scores = []
    for seed in range(games):
        seat = seed % 4
        result = play_match(game, [mine if s == seat else rand for s in range(4)], seed)
        scores.append(result.outcome.scores[seat])
    return statistics.fmean(scores)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("junior-basic", {}),
        ("junior-advanced", {}),
        ("junior-advanced", {"nuisance": True}),
        ("junior-experts", {}),
    ],
)
def test_the_heuristic_beats_random_measurably(name: str, config: dict[str, Any]) -> None:
    """Over 1000 games each (``make bench``) the gap is 8–15 cards; 60 games show it clearly."""
    heuristic = _mean_cards(name, config, "heuristic", 60)
    random_ = _mean_cards(name, config, "random", 60)
    fewest = make_variant(name, config).higher_is_better is False
    gap = random_ - heuristic if fewest else heuristic - random_
    assert gap > 3, (heuristic, random_)


@pytest.mark.parametrize("name", ["junior-basic", "junior-advanced", "junior-experts"])
def test_the_default_action_is_always_legal(name: str) -> None:
    game = make_variant(name)
    for before, decision, _, _, _ in random_steps(game, 2):  # type: ignore[arg-type]
        if decision.seat == CHANCE:
            continue
        action = game.default_action(before, decision)
        assert action in decision.options


def test_the_basic_default_completes_a_row() -> None:
    game = JuniorBasic()
    cards = Cards(game.deck)
    state = game.position(cards.rows("A G I J N / . / . / ."))
    state, _ = game.apply(state, {CHANCE: cards.card("S")})
    assert game.default_action(state, game.pending(state)[0]) == 0


@pytest.mark.slow
def test_the_bench_module_yields_its_figures() -> None:
    path = Path(__file__).parents[2] / "bench" / "bench_junior.py"
    spec = importlib.util.spec_from_file_location("bench_junior", path)  # as bench/run.py loads it
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = list(bench.run(quick=True))
    assert {row["name"] for row in rows} == {
        f"bot.junior.{mode}.{bot}.score"
        for mode in ("basic", "advanced", "advanced-nuisance", "experts")
        for bot in ("random", "heuristic")
    }
    assert all(row["unit"] == "cards/game" and row["value"] >= 0 for row in rows)
