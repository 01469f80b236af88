"""Illegal actions, bad configs and bad set-ups raise the rules' named errors with clear messages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import notation
import pytest

from games.classic.rules.classic import Classic, ClassicConfig, ClassicState
from referee.rules import make_variant
from referee.rules.chance import SeededChance
from referee.rules.config import config_from_mapping
from referee.rules.core import CHANCE
from referee.rules.errors import (
    ConfigError,
    GameOverError,
    IllegalActionError,
    NotPendingError,
    RulesError,
    UnknownVariantError,
)
from referee.rules.registry import find_variant

VARIANT = Classic(ClassicConfig(hands=1))
DEAL = VARIANT.sample_chance(VARIANT.initial_state(), SeededChance(1))
assert isinstance(DEAL, tuple)


def dealing() -> ClassicState:
    return VARIANT.initial_state()


def playing() -> ClassicState:
    """Seat 0 holds 1 and 3, seat 1 holds 2 and 50, …; rows end 10 20 30 40."""
    return VARIANT.position(notation.rows("10 | 20 | 30 | 40"), notation.hands("1 3 | 2 50 | 60 61 | 70 71"))


def choosing() -> ClassicState:
    """Seat 0's 1 is a low card: seat 0 must choose a row."""
    state, _ = VARIANT.apply(playing(), {0: 1, 1: 50, 2: 60, 3: 70})
    return state


def over() -> ClassicState:
    state = VARIANT.position(notation.rows("10 | 20 | 30 | 40"), notation.hands("11 | 21 | 31 | 41"))
    state, _ = VARIANT.apply(state, {0: 11, 1: 21, 2: 31, 3: 41})
    assert VARIANT.outcome(state) is not None
    return state


@dataclass(frozen=True)
class Bad:
    name: str
    state: Callable[[], ClassicState]
    actions: dict[int, Any]
    error: type[RulesError]
    message: str = ""
    """A fragment the message must contain."""


BAD_ACTIONS = [
    # While dealing, only chance acts, with a full deal of distinct cards.
    Bad("a seat acts during the deal", dealing, {0: 5}, NotPendingError, "only chance"),
    Bad("nobody acts during the deal", dealing, {}, NotPendingError),
    Bad("chance and a seat act together", dealing, {CHANCE: DEAL, 0: 5}, NotPendingError),
    Bad("a deal one card short", dealing, {CHANCE: DEAL[:-1]}, IllegalActionError, "44 distinct cards"),
    Bad("a deal with a card twice", dealing, {CHANCE: (DEAL[1], *DEAL[1:])}, IllegalActionError),
    Bad("a deal with card 105", dealing, {CHANCE: (105, *DEAL[1:])}, IllegalActionError, "between 1 and 104"),
    Bad("a deal with card 0", dealing, {CHANCE: (0, *DEAL[1:])}, IllegalActionError),
    Bad("a deal as a list", dealing, {CHANCE: list(DEAL)}, IllegalActionError),
    Bad("a deal as one number", dealing, {CHANCE: 7}, IllegalActionError),
    Bad("a deal holding True", dealing, {CHANCE: (True, *DEAL[1:])}, IllegalActionError),
    # A turn needs one card from every seat, from its own hand.
    Bad("a seat is missing", playing, {0: 1, 1: 2, 2: 60}, NotPendingError, "expected seats 0…3"),
    Bad("a seat that is not at the table", playing, {0: 1, 1: 2, 2: 60, 4: 70}, NotPendingError, "seat 3"),
    Bad("an extra seat", playing, {0: 1, 1: 2, 2: 60, 3: 70, 4: 5}, NotPendingError),
    Bad("chance instead of a seat", playing, {CHANCE: 1, 1: 2, 2: 60, 3: 70}, NotPendingError),
    Bad("a card not in the hand", playing, {0: 5, 1: 2, 2: 60, 3: 70}, IllegalActionError, "seat 0 .* 5"),
    Bad("another seat's card", playing, {0: 2, 1: 2, 2: 60, 3: 70}, IllegalActionError),
    Bad("a card on the table", playing, {0: 10, 1: 2, 2: 60, 3: 70}, IllegalActionError),
    Bad("True for the card 1", playing, {0: True, 1: 2, 2: 60, 3: 70}, IllegalActionError),
    Bad("a card as text", playing, {0: "1", 1: 2, 2: 60, 3: 70}, IllegalActionError),
    Bad("a card with a row", playing, {0: (1, 0), 1: 2, 2: 60, 3: 70}, IllegalActionError),
    # A low card's row is the decision of its owner alone, one of the rows on the table.
    Bad("another seat chooses the row", choosing, {1: 0}, NotPendingError, "only seat 0"),
    Bad("two seats choose", choosing, {0: 0, 1: 0}, NotPendingError),
    Bad("no row chosen", choosing, {}, NotPendingError),
    Bad("row 4 of 4", choosing, {0: 4}, IllegalActionError, "row 0…3"),
    Bad("row -1", choosing, {0: -1}, IllegalActionError),
    Bad("True for row 1", choosing, {0: True}, IllegalActionError),
    Bad("a row as text", choosing, {0: "1"}, IllegalActionError),
    Bad("a card instead of a row", choosing, {0: 3, 1: 2, 2: 61, 3: 71}, NotPendingError),
    # After the end, nothing applies.
    Bad("a card after the end", over, {0: 11}, GameOverError),
    Bad("chance after the end", over, {CHANCE: DEAL}, GameOverError),
]


@pytest.mark.parametrize("bad", BAD_ACTIONS, ids=[bad.name for bad in BAD_ACTIONS])
def test_a_bad_action_raises_its_named_error(bad: Bad) -> None:
    state = bad.state()
    with pytest.raises(bad.error, match=bad.message or None):
        VARIANT.apply(state, bad.actions)
    assert VARIANT.pending(state) == bad.state().pending, "a refused action leaves the state as it was"


def test_the_errors_are_value_errors() -> None:
    for error in (ConfigError, IllegalActionError, NotPendingError, GameOverError, UnknownVariantError):
        assert issubclass(error, RulesError)
        assert issubclass(error, ValueError)


def test_chance_is_drawn_only_when_pending() -> None:
    for state in (playing(), choosing(), over()):
        with pytest.raises(NotPendingError):
            VARIANT.sample_chance(state, SeededChance(1))


@pytest.mark.parametrize("seat", [-1, 4, 10])
def test_a_view_is_only_for_a_seat_at_the_table(seat: int) -> None:
    with pytest.raises(RulesError):
        VARIANT.view(playing(), seat)


# -- configs ---------------------------------------------------------------------------------

BAD_CONFIGS: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    # (name, values, fragments the message must contain: the field, the bounds, the value)
    ("one player", {"players": 1}, ("-o players=…", "between 2 and 10", "got 1")),
    ("eleven players", {"players": 11}, ("-o players=…", "between 2 and 10", "got 11")),
    ("deck too small", {"players": 10, "deck": 100}, ("10 players", "need 104 cards", "has 100 (-o deck=…)")),
    ("hands too big", {"hand_size": 26}, ("26 cards", "need 108 cards", "the deck has 104")),
    ("no end", {"target": None, "hands": None}, ("-o target=…", "-o hands=…", "cannot both be None")),
    ("zero rows", {"rows": 0}, ("-o rows=…", "between 1 and 10", "got 0")),
    ("target zero", {"target": 0}, ("-o target=…", "got 0")),
    ("zero hands", {"hands": 0}, ("-o hands=…", "got 0")),
    ("players as text", {"players": "4"}, ("-o players=…", "integer", "'4'")),
    ("players as a float", {"players": 4.0}, ("-o players=…", "integer", "4.0")),
    ("players as a bool", {"players": True}, ("-o players=…", "True")),
    ("tactics as a number", {"tactics": 1}, ("-o tactics=…", "bool", "got 1")),
    ("professional as text", {"professional": "yes"}, ("-o professional=…", "bool", "'yes'")),
    ("an unknown key", {"player": 4}, ("unknown option -o player=…;", "known: deck, hand_size")),
    ("two unknown keys", {"colour": "red", "speed": 2}, ("unknown options -o colour=…, -o speed=…;",)),
]


@pytest.mark.parametrize(("name", "values", "fragments"), BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_a_bad_config_is_a_config_error(
    name: str, values: dict[str, Any], fragments: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError) as direct:
        config_from_mapping(ClassicConfig, values)
    with pytest.raises(ConfigError) as by_name:
        make_variant("classic", values)
    for fragment in fragments:
        assert fragment in str(direct.value), name
        assert fragment in str(by_name.value), name


@pytest.mark.parametrize("name", ["classic", "6nimmt", "take6", " Classic "])
def test_the_classic_variant_and_its_aliases(name: str) -> None:
    assert find_variant(name) is Classic
    variant = make_variant(name, {"players": 3, "professional": True})
    assert isinstance(variant, Classic)
    assert variant.players == 3
    assert variant.config_json()["professional"] is True


def test_an_unknown_variant_fails_loudly() -> None:
    with pytest.raises(UnknownVariantError, match="unsupported variant: 'chess' \\(known: classic"):
        make_variant("chess")


def test_the_defaults_are_the_rulebooks() -> None:
    config = make_variant("classic").config
    assert (config.players, config.hand_size, config.rows, config.row_capacity) == (4, 10, 4, 5)
    assert (config.deck, config.target, config.hands, config.tactics, config.professional) == (
        104,
        66,
        None,
        False,
        False,
    )


@pytest.mark.parametrize("option", ["row_capacity", "tactics", "professional"])
def test_null_for_an_option_that_cannot_be_null_is_a_config_error(option: str) -> None:
    with pytest.raises(ConfigError, match=option):
        make_variant("classic", {option: None})


def test_null_players_is_a_config_error_naming_the_field() -> None:
    with pytest.raises(ConfigError, match="players"):
        ClassicConfig(players=None)  # type: ignore[arg-type]


# -- positions set up by hand ------------------------------------------------------------------

BAD_POSITIONS: list[tuple[str, str, str]] = [
    ("three rows", "10 | 20 | 30", "1 | 2 | 3 | 4"),
    ("three hands", "10 | 20 | 30 | 40", "1 | 2 | 3"),
    ("a card twice", "10 | 20 | 30 | 40", "1 | 2 | 3 | 10"),
    ("card 105", "10 | 20 | 30 | 105", "1 | 2 | 3 | 4"),
    ("card 0", "10 | 20 | 30 | 40", "0 | 2 | 3 | 4"),
    ("an empty row", "10 | - | 30 | 40", "1 | 2 | 3 | 4"),
    ("a row of six", "10 11 12 13 14 15 | 20 | 30 | 40", "1 | 2 | 3 | 4"),
    ("hands of different sizes", "10 | 20 | 30 | 40", "1 5 | 2 | 3 | 4"),
    ("empty hands", "10 | 20 | 30 | 40", "- | - | - | -"),
]


@pytest.mark.parametrize(("name", "rows", "hands"), BAD_POSITIONS, ids=[c[0] for c in BAD_POSITIONS])
def test_a_bad_position_is_a_config_error(name: str, rows: str, hands: str) -> None:
    with pytest.raises(ConfigError):
        Classic().position(notation.rows(rows), notation.hands(hands))


def test_a_position_with_scores_for_the_wrong_number_of_seats_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        Classic().position(notation.rows("10 | 20 | 30 | 40"), notation.hands("1 | 2 | 3 | 4"), scores=(0, 0))


def test_a_position_with_more_cards_than_a_hand_holds_is_a_config_error() -> None:
    variant = Classic(ClassicConfig(players=2, hand_size=2))
    with pytest.raises(ConfigError):
        variant.position(notation.rows("10 | 20 | 30 | 40"), notation.hands("1 2 3 | 4 5 6"))


def test_a_position_whose_turn_does_not_match_the_hands_is_refused() -> None:
    variant = Classic()
    rows, hands = notation.rows("10 | 20 | 30 | 40"), notation.hands("11 | 21 | 31 | 41")
    try:
        state = variant.position(rows, hands, turn=5)
    except ConfigError:
        return
    state, _ = variant.apply(state, {0: 11, 1: 21, 2: 31, 3: 41})
    assert all(decision.options for decision in variant.pending(state)), "a pending seat has no legal option"
