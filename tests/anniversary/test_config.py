"""Anniversary configs: the defaults are the edition's, bad values stop with a message naming the option."""

from __future__ import annotations

import pytest

from games.anniversary.rules.anniversary import Anniversary, AnniversaryConfig
from referee.rules.errors import ConfigError
from referee.rules.registry import find_variant, make_variant


def test_the_defaults_are_the_editions() -> None:
    config = AnniversaryConfig()
    assert (config.players, config.hand_size, config.specials_each, config.rounds) == (4, 12, 3, 2)
    assert config.special_counts == (4,) * 7 and sum(config.special_counts) == 28
    assert (config.rows, config.row_capacity, config.deck, config.max_rows) == (4, 5, 104, 5)


def test_the_variant_is_registered_under_its_name_and_aliases() -> None:
    assert find_variant("anniversary") is Anniversary
    assert find_variant("Jubilaeum") is Anniversary
    assert make_variant("anniversary", {"players": 8}).players == 8


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"players": 1}, "-o players=… must be between 2 and 8, got 1"),
        ({"players": 9}, "-o players=… must be between 2 and 8, got 9"),
        ({"players": 8, "hand_size": 13}, "8 players × 13 cards + 4 rows need 108 number cards"),
        ({"players": 8, "specials_each": 4}, "8 players × 4 special cards need 32, there are 28"),
        ({"players": 2, "specials_each": 3, "block_cards": 0, "insert_cards": 0, "shift_cards": 0,
          "replace_cards": 0, "seven_nimmt_cards": 0, "fifth_row_cards": 1}, "need 6, there are 5"),
        ({"rounds": 0}, "-o rounds=… must be between 1 and 100, got 0"),
        ({"max_rows": 3}, "-o max_rows=… must be at least rows (4), got 3"),
        ({"fifth_row_end": "never"}, "-o fifth_row_end=… must be one of round, next_take, got 'never'"),
        ({"block_end": "game"}, "-o block_end=… must be one of take, turn, round, got 'game'"),
        ({"swap": 1}, "-o swap=… must be a boolean (true or false), got 1"),
        ({"players": "four"}, "-o players=… must be an integer, got 'four'"),
        ({"specials_per_turn": 0}, "-o specials_per_turn=… must be between 1 and 10, got 0"),
    ],
)  # fmt: skip
def test_a_bad_config_is_a_config_error_that_says_why(values: dict, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        AnniversaryConfig(**values)
    assert message in str(caught.value)


def test_unknown_options_are_refused_with_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"^unknown option -o tactics=…; known: .*block_end"):
        make_variant("anniversary", {"tactics": True})


def test_a_bad_position_is_a_config_error() -> None:
    variant = Anniversary(AnniversaryConfig(players=2))
    with pytest.raises(ConfigError, match="distinct"):
        variant.position(rows=[(5,)], hands=[(5,), (6,)], specials=[(), ()])
    with pytest.raises(ConfigError, match="kinds"):
        variant.position(rows=[(5,)], hands=[(7,), (6,)], specials=[(8,), ()])
    with pytest.raises(ConfigError, match="none below 0"):
        variant.position(rows=[(5,)], hands=[(7,), (6,)], specials=[(1,) * 5, ()])
