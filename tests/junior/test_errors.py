"""Bad configs, impossible positions and wrong actions are named errors, never crashes."""

from __future__ import annotations

from typing import Any

import pytest

from games.junior.rules.junior import JuniorAdvanced, JuniorAdvancedConfig, JuniorBasic, JuniorExperts
from referee.rules import (
    CHANCE,
    ConfigError,
    GameOverError,
    IllegalActionError,
    NotPendingError,
    SeededChance,
    make_variant,
)

from .games import random_steps
from .notation import Cards


@pytest.mark.parametrize("field", ["players", "rows", "deck"])
def test_a_missing_value_is_a_config_error_naming_the_field(field: str) -> None:
    with pytest.raises(ConfigError, match=f"^-o {field}=… must be set, got None$"):
        make_variant("junior-basic", {field: None})
    with pytest.raises(ConfigError, match="-o hand_size=… must be set"):
        make_variant("junior-experts", {"hand_size": None})


def _basic_position(**kwargs: Any) -> Any:
    game = JuniorBasic()
    return game.position(**{"rows": [[0], [7], [14], [21]], **kwargs})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rows": [[0], [7], [14]]}, "needs 4 rows, 4 hands, 4 albums"),
        ({"collected": [[1], [], []]}, "needs 4 rows, 4 hands, 4 albums"),
        ({"seat": 4}, "a seat 0…3"),
        ({"rows": [[0], [0], [14], [21]]}, "distinct ids"),
        ({"rows": [[0], [52], [14], [21]]}, "distinct ids"),
        ({"hands": [[1], [], [], []]}, "a hand holds at most 0"),
        ({"rows": [[0, 7, 14, 21, 28, 35], [], [], []]}, "would have been collected"),
        ({"rows": [list(range(0, 26)), list(range(26, 52)), [], []]}, "nothing to play"),
    ],
)
def test_impossible_basic_positions_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _basic_position(**kwargs)


def test_impossible_positions_with_hands_are_refused() -> None:
    game = JuniorAdvanced(JuniorAdvancedConfig(players=2))
    cards = Cards(game.deck)
    rows = cards.rows("A / G / I / J")
    with pytest.raises(ConfigError, match="every hand holds 3"):
        game.position(rows, cards.hands("A G / N N N"))
    with pytest.raises(ConfigError, match="at most 3"):
        game.position(rows, [cards.cards("A G I J"), []])
    experts = JuniorExperts()
    with pytest.raises(ConfigError, match="an experts' row holds 1 to 5 cards"):
        experts.position([[0], [], [14], [21]], [[1, 2, 3], [4, 5, 6], [8, 9, 10], [11, 12, 13]])


def test_wrong_actions_are_named_errors() -> None:
    game = JuniorBasic()
    state = game.initial_state()
    with pytest.raises(NotPendingError, match="only chance is pending"):
        game.apply(state, {0: 1})
    with pytest.raises(IllegalActionError, match="a draw is a card id still in the pile"):
        game.apply(state, {CHANCE: 52})
    with pytest.raises(IllegalActionError, match="a draw is a card id"):
        game.apply(state, {CHANCE: True})
    cards = Cards(game.deck)
    state = game.position(cards.rows("A / S / I / J"))
    state, _ = game.apply(state, {CHANCE: cards.card("S")})
    with pytest.raises(IllegalActionError, match=r"legal: \[0, 2, 3\]"):
        game.apply(state, {0: 1})
    with pytest.raises(IllegalActionError):
        game.apply(state, {0: True})  # True == 1, but it is not a row
    with pytest.raises(NotPendingError, match="only seat 0 is pending"):
        game.apply(state, {0: 0, 1: 0})
    with pytest.raises(NotPendingError, match="no chance decision"):
        game.sample_chance(state, SeededChance(1))


def test_deals_must_come_from_the_pile() -> None:
    game = make_variant("junior-experts", {"players": 2})
    state = game.initial_state()
    bad_deals: list[Any] = [(0, 1, 2), (0,) * 10, (*range(9), 99), list(range(10))]
    for bad in bad_deals:
        with pytest.raises(IllegalActionError, match="a deal is 10 distinct card ids"):
            game.apply(state, {CHANCE: bad})


@pytest.mark.parametrize("name", ["junior-basic", "junior-advanced", "junior-experts"])
def test_nothing_applies_after_the_end(name: str) -> None:
    game = make_variant(name)
    *_, (_, _, _, last, _) = random_steps(game, 1)  # type: ignore[arg-type]
    assert game.pending(last) == ()
    with pytest.raises(GameOverError):
        game.apply(last, {0: 0})
    with pytest.raises(NotPendingError):
        game.sample_chance(last, SeededChance(1))
