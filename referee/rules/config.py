"""Variant configs: frozen dataclasses whose fields declare their bounds.

A field's bounds live in its metadata (``bounded(default, lo, hi)``); ``check_bounds`` runs
from ``__post_init__`` and ``config_from_mapping`` builds a config from user input, refusing
unknown keys and wrong types with a message that names the option as the user writes it
(:func:`option`: ``-o target=…``), never the config's class.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from referee.rules.errors import ConfigError

T = TypeVar("T")


def bounded(default: Any, lo: int | None = None, hi: int | None = None, doc: str = "") -> Any:
    """A dataclass field with an inclusive integer range (``None`` values pass unchecked)."""
    return dataclasses.field(default=default, metadata={"lo": lo, "hi": hi, "doc": doc})


def option(name: str) -> str:
    """An option as the user sets it (``-o target=…``: every command's ``-o``, the environments'
    and the wire's keys alike), the one way errors about options name it."""
    return f"-o {name}=…"


def check_bounds(config: Any) -> None:
    """Raise :class:`ConfigError` for the first field outside its declared range or type."""
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        name = option(f.name)
        if value is None:
            if "None" not in str(f.type):
                raise ConfigError(f"{name} must be set (it has no 'none' value)")
            continue
        expected = type(f.default) if f.default is not None else int
        if expected is bool or isinstance(value, bool):
            if not isinstance(value, bool) or expected is not bool:
                kinds = {bool: "a boolean (true or false)", int: "an integer"}
                kind = kinds.get(expected, f"a {expected.__name__}")
                raise ConfigError(f"{name} must be {kind}, got {value!r}")
            continue
        if expected is int and not isinstance(value, int):
            raise ConfigError(f"{name} must be an integer, got {value!r}")
        lo, hi = f.metadata.get("lo"), f.metadata.get("hi")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ConfigError(f"{name} must be between {lo} and {hi}, got {value!r}")


def config_from_mapping(config_type: type[T], values: Mapping[str, Any]) -> T:
    """Build a config from user input (JSON, CLI, the wire) with clear errors."""
    names = {f.name for f in dataclasses.fields(config_type)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(option, unknown))};"
            f" known: {', '.join(sorted(names))}"
        )
    try:
        return config_type(**values)
    except TypeError as exc:
        raise ConfigError(f"bad options: {exc}") from exc


def describe(config_type: type[Any]) -> list[dict[str, Any]]:
    """Each field's name, default, bounds and meaning, for docs and ``--help``."""
    return [
        {
            "name": f.name,
            "default": f.default,
            "min": f.metadata.get("lo"),
            "max": f.metadata.get("hi"),
            "doc": f.metadata.get("doc", ""),
        }
        for f in dataclasses.fields(config_type)
    ]
