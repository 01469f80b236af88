"""Reference bots everyone can spar with, by variant and name.

Each installed game names its reference bots in its ``GameSpec`` (``referee.rules.spec``) as
``"module:Class"`` strings, so that listing them imports nothing heavy; this module names no game.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from bot_sdk.bot import Bot
from referee.rules.spec import installed_games, named_game, resolve


def _table() -> dict[str, Mapping[str, str]]:
    table: dict[str, Mapping[str, str]] = {}
    for game in installed_games():
        table.update(game.bots)
    return table


class _ReferenceBots(Mapping[str, Mapping[str, str]]):
    """variant name → bot name → ``"module:Class"``, from the installed games, read on use."""

    def __getitem__(self, variant: str) -> Mapping[str, str]:
        game = named_game(variant)
        if game is not None and variant in game.bots:
            return game.bots[variant]  # no other game's engine imported
        return _table()[variant]

    def __iter__(self) -> Iterator[str]:
        return iter(_table())

    def __len__(self) -> int:
        return len(_table())


REFERENCE_BOTS: Mapping[str, Mapping[str, str]] = _ReferenceBots()
"""variant name → bot name → ``"module:Class"``."""


def reference_bot(variant: str, name: str) -> type[Bot]:
    """The reference bot class ``name`` for ``variant``; unknown names fail with the known ones."""
    bots = REFERENCE_BOTS.get(variant)
    if bots is None:
        raise ValueError(f"no reference bots for variant {variant!r} (known: {', '.join(REFERENCE_BOTS)})")
    target = bots.get(name)
    if target is None:
        raise ValueError(f"no reference bot {name!r} for {variant} (known: {', '.join(bots)})")
    cls: type[Bot] = resolve(target)
    return cls
