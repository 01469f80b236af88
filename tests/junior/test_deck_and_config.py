"""The default deck as data, deck validation, and the modes' configs."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from games.junior.rules.junior import JuniorAdvanced, JuniorAdvancedConfig, JuniorBasic, JuniorConfig
from games.junior.rules.junior_deck import load_deck, parse_deck
from referee.rules import ConfigError, find_variant, make_variant


def test_the_default_deck_is_the_one_in_the_rules_notes() -> None:
    deck = load_deck("junior_deck.json")
    assert deck.source == "junior_deck.json" and len(deck) == 52
    assert [c.key for c in deck.cows] == ["zebu", "holstein", "water_buffalo", "wagyu", "bison", "galloway"]
    assert Counter(len(card) for card in deck.cards) == {1: 42, 2: 6, 3: 4}
    assert all(sum(1 for card in deck.cards if cow in card) == 11 for cow in range(6))
    keys = {tuple(deck.cow_keys(c)) for c in range(52) if len(deck.cards[c]) > 1}
    assert ("zebu", "holstein", "water_buffalo") in keys and ("wagyu", "bison", "galloway") in keys
    assert deck.players == (2, 6) and JuniorConfig().deck == deck


def _deck(**changes: Any) -> dict[str, Any]:
    return {**load_deck("junior_deck.json").to_json(), **changes}


BAD_DECKS = [
    ("not an object", [], "expected a JSON object"),
    ("unknown key", _deck(colour="red"), "unknown key"),
    ("no cows", _deck(cows=[]), '"cows" must be a non-empty list'),
    ("a cow without key", _deck(cows=[{"name": "x"}]), 'non-empty "key"'),
    ("two cows, one key", _deck(cows=[{"key": "a"}, {"key": "a"}], cards=[["a"]]), "share a key"),
    ("no cards", _deck(cards=[]), '"cards" must be a list'),
    ("an empty card", _deck(cards=[[]]), "card 0 must be a non-empty list"),
    ("an unknown cow", _deck(cards=[["zebu", "yak"]]), "unknown cow"),
    ("a cow twice", _deck(cards=[["zebu", "zebu"]]), "shows a cow twice"),
    ("a cow on no card", _deck(cards=[["zebu"]]), "no card shows holstein"),
    ("bad players", _deck(players={"min": 3, "max": 2}), '"players" must be'),
]


@pytest.mark.parametrize(("name", "data", "message"), BAD_DECKS, ids=[d[0] for d in BAD_DECKS])
def test_a_bad_deck_is_a_clear_config_error(name: str, data: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_deck(data)
    if isinstance(data, dict):
        with pytest.raises(ConfigError, match="bad Junior deck in the inline deck"):
            make_variant("junior-basic", {"deck": data})


def test_deck_files_that_cannot_be_read_or_parsed(tmp_path: Any) -> None:
    with pytest.raises(ConfigError, match="cannot read the Junior deck file"):
        make_variant("junior-basic", {"deck": str(tmp_path / "missing.json")})
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ConfigError, match="is not JSON"):
        make_variant("junior-basic", {"deck": str(broken)})
    with pytest.raises(ConfigError, match="a file name, a path or a JSON object"):
        load_deck(7)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "config", "message"),
    [
        ("junior-basic", {"players": 7}, "is for 2–6 players \\(-o players=…\\)"),
        ("junior-basic", {"players": 1}, "between 2 and"),
        ("junior-basic", {"nuisance": True}, "unknown option -o nuisance=…; known: deck, players, rows"),
        ("junior-experts", {"players": 6, "hand_size": 9}, "needs 58 cards, the deck has 52"),
        ("junior-advanced", {"nuisance": 1}, "-o nuisance=… must be a bool"),
        ("junior-basic", {"deck": True}, "-o deck=… must be a str"),
    ],
)
def test_bad_configs(name: str, config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make_variant(name, config)


def test_a_deck_may_allow_other_tables() -> None:
    deck = _deck(players={"min": 2, "max": 8})
    assert make_variant("junior-basic", {"players": 8, "deck": deck}).players == 8


def test_names_aliases_and_the_ranking_direction() -> None:
    assert find_variant("junior") is JuniorBasic and find_variant("Junior-Advanced") is JuniorAdvanced
    assert make_variant("junior-basic").higher_is_better
    assert make_variant("junior-advanced").higher_is_better
    assert not make_variant("junior-advanced", {"nuisance": True}).higher_is_better
    assert JuniorAdvanced.higher_is_better  # the class answers with the rulebook's default
    assert not make_variant("junior-experts").higher_is_better
    assert JuniorAdvanced(JuniorAdvancedConfig(nuisance=True)).fewest_wins
    assert json.dumps(make_variant("junior-advanced").config_json())
