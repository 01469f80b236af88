"""The variants by name: the installed games' variants and a lookup that fails loudly."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from referee.rules.config import config_from_mapping
from referee.rules.core import Variant
from referee.rules.errors import UnknownVariantError
from referee.rules.spec import LazyVariants, named_game

VARIANTS: LazyVariants = LazyVariants()
"""Every installed game's variants (the ``sixnimmt.games`` entry points), found on first use."""


def find_variant(name: str) -> type[Variant[Any, Any]]:
    """The variant class registered under ``name`` or one of its aliases."""
    wanted = name.strip().lower()
    game = named_game(wanted)
    if game is not None:
        # Only that game's engines: the others are imported only when a lookup needs them.
        try:
            classes = game.variant_classes()
        except Exception:  # a broken game: the full lookup below logs and skips it
            classes = []
        for cls in classes:
            if wanted == cls.name or wanted in cls.aliases:
                return cls
    for cls in VARIANTS:
        if wanted == cls.name or wanted in cls.aliases:
            return cls
    known = ", ".join(cls.name for cls in VARIANTS)
    raise UnknownVariantError(f"unsupported variant: {name!r} (known: {known})")


def make_variant(name: str, config: Mapping[str, Any] | None = None) -> Variant[Any, Any]:
    """A variant instance from its name and a user-supplied config mapping."""
    cls = find_variant(name)
    return cls(config_from_mapping(cls.config_type, config or {}))
