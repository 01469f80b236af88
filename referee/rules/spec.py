"""A game's parts, named by lazy reference, and the list of installed games.

Each game is one package with one :class:`GameSpec`; the ``sixnimmt.games`` entry-point group is
the list of installed games (``pyproject.toml`` for the built-in ones, any pip package for
others). A spec names its parts by import path (``"module:attr"`` or a module), resolved only
when a part is used, so that loading a game's rules never imports its wire, SDK or dashboard
parts, and the layer contracts hold per part.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from referee.rules.core import Variant

GROUP = "sixnimmt.games"
"""The entry-point group of installed games: ``NAME = "package:SPEC"``."""

_log = logging.getLogger("sixnimmt.games")


@dataclass(frozen=True)
class GameSpec:
    """One game's parts, each a lazy reference (``"module:attr"``, or a module for ``codec``)."""

    name: str
    variants: tuple[str, ...]
    """The engine classes (``Variant`` subclasses), in the order ``sixnimmt variants`` lists them."""
    names: tuple[str, ...] = ()
    """Every variant name and alias of the game, as its engine classes declare them, so that
    finding the game of a variant (:func:`named_game`) imports no other game's engine; empty: the
    game is found by importing the engines."""
    codec: str = ""
    """The module whose import registers the game's wire codec (``referee.wire.register``)."""
    sdk: tuple[str, ...] = ()
    """The SDK base classes a bot of this game derives from."""
    bots: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """variant name → reference bot name → ``"module:Class"``."""
    replay: str = ""
    """``"module:function"``: the dashboard's board for a replay frame of this game (the
    variant, the frame's state or view, its events) → a JSON-ready dict."""
    envs: Mapping[str, str] = field(default_factory=dict)
    """variant name → ``"module:function"``: the variant's reinforcement-learning environment
    (the ``envs`` package, the ``rl`` extra), ``function(render_mode=None, **options)`` → a
    PettingZoo AEC environment. A name only: the environments sit above the rules and import
    them, never the other way; ``envs`` finds them here (``envs.GAMES``)."""
    docs: str = ""
    """Where the game's rules are documented (a path in the repository or a URL)."""
    check_config: Mapping[str, Any] = field(default_factory=dict)
    """The config ``bot submit`` checks a bot with (a short game; empty: the defaults)."""
    default_field: str = ""
    """``bot test``'s field without ``--against`` (empty: the variant's reference bots)."""
    score_unit: str = "points"
    """What a game's scores count, in words (the dashboard's SPRT page: "2 bull heads per game")."""
    order: int = 100
    """Where the game comes in listings (then by name): the built-in games keep the order they
    were listed in before they were plugins; another game comes after them."""

    def variant_classes(self) -> list[type[Variant[Any, Any]]]:
        """The engine classes, imported."""
        return [resolve(ref) for ref in self.variants]


def resolve(ref: str) -> Any:
    """The object ``"module:attr"`` names (the module itself without ``:attr``)."""
    module, _, attr = ref.partition(":")
    target: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        target = getattr(target, part)
    return target


@dataclass(frozen=True)
class _Loaded:
    specs: tuple[GameSpec, ...]
    variants: tuple[type[Variant[Any, Any]], ...]
    classes: tuple[tuple[type[Variant[Any, Any]], ...], ...]
    """Each spec's variant classes."""


@lru_cache(maxsize=1)
def _load() -> _Loaded:
    specs: list[GameSpec] = []
    variants: list[type[Variant[Any, Any]]] = []
    seen: set[str] = set()
    found: list[tuple[GameSpec, list[type[Variant[Any, Any]]]]] = []
    for point in entry_points(group=GROUP):
        if point.name in seen:
            continue
        seen.add(point.name)
        try:
            spec = point.load()
            if not isinstance(spec, GameSpec):
                raise TypeError(f"{point.value} is a {type(spec).__name__}, not a GameSpec")
            found.append((spec, spec.variant_classes()))
        except Exception as error:  # one broken game must not stop the others
            message = str(error).splitlines()[0] if str(error) else ""
            _log.warning("game %r failed to load (%s): %s: %s", point.name, point.value,
                         type(error).__name__, message)  # fmt: skip
    found.sort(key=lambda item: (item[0].order, item[0].name))
    for spec, classes in found:
        specs.append(spec)
        variants.extend(classes)
    return _Loaded(tuple(specs), tuple(variants), tuple(tuple(classes) for _, classes in found))


def installed_games() -> tuple[GameSpec, ...]:
    """Every game of the ``sixnimmt.games`` group that loads (a broken one is logged, skipped)."""
    return _load().specs


def installed_variants() -> tuple[type[Variant[Any, Any]], ...]:
    """Every installed game's engine classes."""
    return _load().variants


def game_of(variant: str) -> GameSpec | None:
    """The installed game that plays ``variant`` (its name or an alias), or None."""
    wanted = variant.strip().lower()
    for spec, classes in zip(_load().specs, _load().classes, strict=True):
        if any(wanted == cls.name or wanted in cls.aliases for cls in classes):
            return spec
    return None


def declared_games() -> tuple[GameSpec, ...]:
    """Every installed game's spec, in listing order, without importing any game's engine (a spec
    that does not load is left out; :func:`installed_games` logs it)."""
    return _declared()


@lru_cache(maxsize=1)
def _declared() -> tuple[GameSpec, ...]:
    """Every installed game's spec, in listing order, no engine imported (a spec that does not
    load is left out here; :func:`installed_games` reports it)."""
    specs: dict[str, GameSpec] = {}
    for point in entry_points(group=GROUP):
        if point.name in specs:
            continue
        try:
            spec = point.load()
        except Exception:  # reported by the full load
            continue
        if isinstance(spec, GameSpec):
            specs[point.name] = spec
    return tuple(sorted(specs.values(), key=lambda spec: (spec.order, spec.name)))


def named_game(variant: str) -> GameSpec | None:
    """The installed game whose declared ``names`` hold ``variant``, found without importing any
    game's engine (a process that plays one variant loads only that game); ``None`` when no spec
    declares it (then :func:`game_of` imports the engines to find it)."""
    wanted = variant.strip().lower()
    for spec in _declared():
        if wanted in spec.names:
            return spec
    return None


def reload_games() -> None:
    """Forget what was found (after a new game was installed in this process)."""
    _load.cache_clear()
    _declared.cache_clear()


class LazyVariants(Sequence["type[Variant[Any, Any]]"]):
    """The installed variants, found on first use (a sequence, as the registry's list was)."""

    @overload
    def __getitem__(self, index: int) -> type[Variant[Any, Any]]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[type[Variant[Any, Any]]]: ...
    def __getitem__(self, index: int | slice) -> Any:
        return installed_variants()[index]

    def __len__(self) -> int:
        return len(installed_variants())

    def __iter__(self) -> Iterator[type[Variant[Any, Any]]]:
        return iter(installed_variants())

    def __repr__(self) -> str:
        return repr(list(installed_variants()))
