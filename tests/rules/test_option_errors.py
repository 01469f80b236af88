"""Errors about a game's options name the option as the user sets it (``-o target=…``), in every
game's config, never the config's class (issue 31: "ClassicConfig.target must be an integer")."""

from __future__ import annotations

from typing import Any

import pytest

from referee.rules.config import describe
from referee.rules.errors import ConfigError
from referee.rules.registry import VARIANTS, make_variant


def wrong(default: Any) -> Any:
    """A value of the wrong type for an option whose default is ``default``."""
    return 3 if isinstance(default, str) else "x"


CASES = [
    (cls.name, option["name"], wrong(option["default"]))
    for cls in VARIANTS
    for option in describe(cls.config_type)
    if not isinstance(option["default"], (dict, list, tuple))
]


@pytest.mark.parametrize(("variant", "name", "value"), CASES, ids=[f"{v}-{n}" for v, n, _ in CASES])
def test_a_bad_value_names_the_option_as_the_user_sets_it(variant: str, name: str, value: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        make_variant(variant, {name: value})
    message = str(caught.value)
    assert f"-o {name}=…" in message, message
    assert "Config" not in message, message


@pytest.mark.parametrize("variant", [cls.name for cls in VARIANTS])
def test_an_unknown_option_is_named_as_the_user_set_it(variant: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_variant(variant, {"colour": "blue"})
    message = str(caught.value)
    assert message.startswith("unknown option -o colour=…; known: "), message
    assert "Config" not in message, message


@pytest.mark.parametrize(
    ("variant", "values"),
    [
        ("classic", {"target": None, "hands": None}),
        ("classic", {"players": 10, "deck": 100}),
        ("anniversary", {"players": 8, "hand_size": 13}),
        ("anniversary", {"players": 8, "specials_each": 4}),
        ("anniversary", {"max_rows": 3}),
        ("junior-basic", {"players": 7}),
        ("junior-experts", {"players": 6, "hand_size": 9}),
        ("junior-basic", {"rows": None}),
    ],
)
def test_the_checks_across_options_name_no_class(variant: str, values: dict[str, Any]) -> None:
    with pytest.raises(ConfigError) as caught:
        make_variant(variant, values)
    assert "Config" not in str(caught.value), caught.value
