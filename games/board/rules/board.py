"""The Brettspiel board and tiles as data: rows of spaces, the score track, each tile's oxen.

The rulebook does not print the board (where the special spaces are, how long each row is,
where the clovers lie) nor the oxen on each tile, so they come from data files under
``games/board/rules/data/`` whose defaults are assumptions (``RULES-NOTES.md``); a user who owns the
printed game replaces them with a file of their own.

A layout file is JSON::

    {"side": "blue",
     "rows": [". . G . R T", ...],
     "score_track": {"low": -44, "high": 44, "clovers": [-5, -10, ...]}}

Each row lists its spaces from first to last, separated by blanks, in this notation:

    .        a plain space
    T        Take Row; on the red side "Take Row (Ox)" (only on a row's last space, which must
             be a take-row space: T or TT)
    TT       Take Row (Tiles), red side: the row's tiles go behind the player's screen
    G  GG    green ox, single or double: plus points for the tile's oxen (× 2)
    R  RR    red ox, single or double: minus points for the tile's oxen (× 2)
    +N -N    N plus or minus points
    +t       Draw Tile (red side): a tile from the supply behind the player's screen
    +a       Draw Action Card (red side): an action card to the player's hand
    D        a double-tile space: its row is the "Play Two Tiles" row

Rows, spaces and clovers are numbered from 0, as the engine counts; error messages name the
file, the row and the space.
"""

from __future__ import annotations

import enum
import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from referee.rules.errors import ConfigError

SIDES = ("blue", "red")
"""The two sides of the printed board: blue ox (basic game), red ox (pro version)."""


class SpaceKind(enum.StrEnum):
    """What a space does when a tile is placed on it."""

    PLAIN = "plain"
    """Nothing."""
    TAKE_ROW = "take_row"
    """The row's other tiles score their oxen as minus points and leave; the tile opens a new row.

    On the red side this is "Take Row (Ox)": the player chooses the new row.
    """
    TAKE_TILES = "take_tiles"
    """"Take Row (Tiles)", red side: the row's other tiles go behind the player's screen, no points."""
    GREEN_OX = "green_ox"
    """Plus points: the tile's oxen times ``amount`` (1 or 2)."""
    RED_OX = "red_ox"
    """Minus points: the tile's oxen times ``amount`` (1 or 2)."""
    POINTS = "points"
    """``amount`` points, plus or minus."""
    DOUBLE_TILE = "double_tile"
    """No effect; while one is uncovered in an active row, everyone plays two tiles."""
    DRAW_TILE = "draw_tile"
    """"Draw Tile", red side: the player draws a tile from the supply behind the screen."""
    DRAW_ACTION_CARD = "draw_action_card"
    """"Draw Action Card", red side: the player draws an action card (the discard pile reshuffled)."""


TAKE_KINDS = frozenset({SpaceKind.TAKE_ROW, SpaceKind.TAKE_TILES})
"""Kinds that end a row: exactly the last space of every row is one of them."""

BASIC_KINDS = frozenset(
    {
        SpaceKind.PLAIN,
        SpaceKind.TAKE_ROW,
        SpaceKind.GREEN_OX,
        SpaceKind.RED_OX,
        SpaceKind.POINTS,
        SpaceKind.DOUBLE_TILE,
    }
)
"""The kinds of space of the blue side, which the basic game knows."""
PRO_KINDS = BASIC_KINDS | {SpaceKind.TAKE_TILES, SpaceKind.DRAW_TILE, SpaceKind.DRAW_ACTION_CARD}
"""The kinds of space the pro version knows: the blue side's and the red side's."""

_TOKENS: dict[str, tuple[SpaceKind, int]] = {
    ".": (SpaceKind.PLAIN, 0),
    "T": (SpaceKind.TAKE_ROW, 0),
    "TT": (SpaceKind.TAKE_TILES, 0),
    "G": (SpaceKind.GREEN_OX, 1),
    "GG": (SpaceKind.GREEN_OX, 2),
    "R": (SpaceKind.RED_OX, 1),
    "RR": (SpaceKind.RED_OX, 2),
    "D": (SpaceKind.DOUBLE_TILE, 0),
    "+t": (SpaceKind.DRAW_TILE, 0),
    "+a": (SpaceKind.DRAW_ACTION_CARD, 0),
}
_POINTS = re.compile(r"^[+-][1-9][0-9]?$")


@dataclass(frozen=True, slots=True)
class Space:
    """One space of a row."""

    kind: SpaceKind
    amount: int = 0
    """The oxen multiplier of an ox space (1 or 2), the signed points of a points space, else 0."""

    @property
    def token(self) -> str:
        """The space in the layout notation."""
        if self.kind is SpaceKind.POINTS:
            return f"{self.amount:+d}"
        for token, (kind, amount) in _TOKENS.items():
            if kind is self.kind and amount == self.amount:
                return token
        raise AssertionError(f"no token for {self}")

    @classmethod
    def parse(cls, token: str) -> Space:
        """A space from its token; raises :class:`ValueError` naming the known tokens."""
        if token in _TOKENS:
            kind, amount = _TOKENS[token]
            return cls(kind, amount)
        if _POINTS.match(token):
            return cls(SpaceKind.POINTS, int(token))
        raise ValueError(f"unknown space {token!r} (known: {' '.join(_TOKENS)} +N -N)")


@dataclass(frozen=True, slots=True)
class Row:
    """A row of the board: its spaces from first to last."""

    spaces: tuple[Space, ...]

    @property
    def last(self) -> int:
        """The index of the row's last space (a take-row space)."""
        return len(self.spaces) - 1

    @property
    def double_tile_spaces(self) -> tuple[int, ...]:
        """The indices of the row's double-tile spaces; non-empty on the "Play Two Tiles" row."""
        return tuple(i for i, s in enumerate(self.spaces) if s.kind is SpaceKind.DOUBLE_TILE)

    def notation(self) -> str:
        """The row in the layout notation."""
        return " ".join(s.token for s in self.spaces)


@dataclass(frozen=True, slots=True)
class ScoreTrack:
    """The score track: points beyond its ends are lost; clovers give luck cards."""

    low: int = -44
    high: int = 44
    clovers: tuple[int, ...] = (-5, -10, -15, -20, -25, -30, -35, -40)
    """Scores with a clover; moving onto or past one with minus points gives a luck card."""

    def clamp(self, score: int) -> int:
        """The score kept on the track: excess points are forfeited."""
        return min(self.high, max(self.low, score))

    def clovers_passed(self, old: int, new: int) -> int:
        """Clovers a marker moves onto or past going down from ``old`` to ``new``."""
        return sum(1 for c in self.clovers if new <= c < old)


@dataclass(frozen=True, slots=True)
class Board:
    """One side of the board: its rows, top to bottom, and the score track."""

    side: str
    rows: tuple[Row, ...]
    track: ScoreTrack
    source: str = "<board>"
    """Where the layout came from (a packaged name or a path), for messages."""

    @classmethod
    def parse(
        cls,
        rows: Sequence[str],
        *,
        side: str = "blue",
        track: ScoreTrack | None = None,
        source: str = "<test board>",
    ) -> Board:
        """A board from rows in the layout notation (for tests and puzzles), validated."""
        data: dict[str, Any] = {"side": side, "rows": list(rows)}
        t = track or ScoreTrack()
        data["score_track"] = {"low": t.low, "high": t.high, "clovers": list(t.clovers)}
        return cls.from_json(data, source)

    @classmethod
    def from_json(cls, data: Any, source: str) -> Board:
        """A board from a layout file's content; every mistake is a :class:`ConfigError` naming it."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: a layout is a JSON object, got {type(data).__name__}")
        _no_unknown_keys(data, {"side", "rows", "score_track", "notes"}, source)
        side = data.get("side")
        if side not in SIDES:
            raise ConfigError(f"{source}: side must be one of {', '.join(SIDES)}, got {side!r}")
        raw_rows = data.get("rows")
        if not isinstance(raw_rows, list) or len(raw_rows) < 2:
            raise ConfigError(f"{source}: rows must be a list of at least 2 rows")
        rows = tuple(_parse_row(raw, f"{source}: rows[{i}]") for i, raw in enumerate(raw_rows))
        track = _parse_track(data.get("score_track"), f"{source}: score_track")
        return cls(side, rows, track, source)

    def to_json(self) -> dict[str, Any]:
        """The layout file's content."""
        t = self.track
        return {
            "side": self.side,
            "rows": [row.notation() for row in self.rows],
            "score_track": {"low": t.low, "high": t.high, "clovers": list(t.clovers)},
        }

    def kinds(self) -> frozenset[SpaceKind]:
        """Every kind of space on this side."""
        return frozenset(s.kind for row in self.rows for s in row.spaces)


def _parse_row(raw: Any, where: str) -> Row:
    if not isinstance(raw, str):
        raise ConfigError(f"{where}: a row is a string of space tokens, got {raw!r}")
    tokens = raw.split()
    if len(tokens) < 2:
        raise ConfigError(f"{where}: a row needs at least 2 spaces, got {raw!r}")
    spaces = []
    last = len(tokens) - 1
    for j, token in enumerate(tokens):
        try:
            space = Space.parse(token)
        except ValueError as exc:
            raise ConfigError(f"{where}, space {j}: {exc}") from None
        if (j == last) != (space.kind in TAKE_KINDS):
            what = "the last space must take the row (T, TT)" if j == last else "only the last space may take"
            raise ConfigError(f"{where}, space {j} {token!r}: {what}")
        if space.kind is SpaceKind.DOUBLE_TILE and j == 0:
            raise ConfigError(f"{where}, space 0 'D': a row's first space holds its opening tile")
        spaces.append(space)
    return Row(tuple(spaces))


def _parse_track(raw: Any, where: str) -> ScoreTrack:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected an object with low, high and clovers, got {raw!r}")
    _no_unknown_keys(raw, {"low", "high", "clovers"}, where)
    low, high, clovers = raw.get("low"), raw.get("high"), raw.get("clovers")
    if type(low) is not int or type(high) is not int or not low < 0 < high:
        raise ConfigError(f"{where}: low and high must be integers, low < 0 < high; got {low!r}, {high!r}")
    if not isinstance(clovers, list) or any(type(c) is not int for c in clovers):
        raise ConfigError(f"{where}: clovers must be a list of integers, got {clovers!r}")
    for i, c in enumerate(clovers):
        if not low <= c < 0:
            raise ConfigError(f"{where}: clovers[{i}] = {c} is not a minus score on the track ({low} … -1)")
    if len(set(clovers)) != len(clovers):
        raise ConfigError(f"{where}: clovers lists a score twice: {clovers}")
    return ScoreTrack(low, high, tuple(sorted(clovers, reverse=True)))


def _no_unknown_keys(data: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")


@dataclass(frozen=True, slots=True)
class Tiles:
    """The tiles of the game: numbered 1 … n, each showing some oxen."""

    oxen: tuple[int, ...]
    """Oxen indexed by tile number (index 0 is unused and 0)."""
    source: str = "<tiles>"

    @property
    def numbers(self) -> tuple[int, ...]:
        """Every tile number, ascending."""
        return tuple(range(1, len(self.oxen)))

    @classmethod
    def from_oxen(
        cls, oxen: Mapping[int, int], count: int, *, default: int = 1, source: str = "<test tiles>"
    ) -> Tiles:
        """Tiles 1 … count with ``default`` oxen except those given (for tests)."""
        every = {t: oxen.get(t, default) for t in range(1, count + 1)}
        return cls.from_json({"oxen": _grouped(every)}, source)

    @classmethod
    def from_json(cls, data: Any, source: str) -> Tiles:
        """Tiles from a file's content: ``{"oxen": {"1": [tiles …], "2": [...], ...}}``.

        Every tile 1 … n must be listed exactly once, under the number of oxen it shows.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: a tiles file is a JSON object, got {type(data).__name__}")
        _no_unknown_keys(data, {"oxen", "notes"}, source)
        groups = data.get("oxen")
        if not isinstance(groups, Mapping) or not groups:
            raise ConfigError(f"{source}: oxen must map a number of oxen to the tiles showing it")
        found: dict[int, int] = {}
        for key, tiles in groups.items():
            if not str(key).isdigit() or int(key) < 1:
                raise ConfigError(f"{source}: oxen key {key!r} is not a positive number of oxen")
            if not isinstance(tiles, list) or any(type(t) is not int or t < 1 for t in tiles):
                raise ConfigError(f"{source}: oxen[{key!r}] must be a list of tile numbers (1 or more)")
            for tile in tiles:
                if tile in found:
                    raise ConfigError(
                        f"{source}: tile {tile} is listed twice (under {found[tile]} and {key} oxen)"
                    )
                found[tile] = int(key)
        count = max(found)
        missing = [t for t in range(1, count + 1) if t not in found]
        if missing:
            listed = ", ".join(map(str, missing[:10]))
            raise ConfigError(f"{source}: tiles run 1 … {count} but {listed} are missing")
        return cls((0, *(found[t] for t in range(1, count + 1))), source)

    def to_json(self) -> dict[str, Any]:
        """The tiles file's content."""
        return {"oxen": _grouped(dict(enumerate(self.oxen)))}


def _grouped(oxen: Mapping[int, int]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for tile, count in sorted(oxen.items()):
        if tile > 0:
            groups.setdefault(str(count), []).append(tile)
    return groups


@functools.cache
def load_board(name: str) -> Board:
    """A packaged layout (``"blue"`` → ``data/board_blue.json``) or a layout file's path."""
    return Board.from_json(*_read_json(name, "board"))


@functools.cache
def load_tiles(name: str) -> Tiles:
    """A packaged tile set (``"assumed"`` → ``data/tiles_assumed.json``) or a tiles file's path."""
    return Tiles.from_json(*_read_json(name, "tiles"))


def _read_json(name: str, prefix: str) -> tuple[Any, str]:
    try:
        if name.endswith(".json"):
            text = Path(name).read_text(encoding="utf-8")
        elif re.fullmatch(r"[a-z0-9_-]+", name):
            data = resources.files("games.board.rules").joinpath(f"data/{prefix}_{name}.json")
            text = data.read_text("utf-8")
        else:
            raise ConfigError(f"{prefix} {name!r} is neither a packaged name ([a-z0-9_-]) nor a .json path")
    except OSError as exc:
        raise ConfigError(f"cannot read {prefix} {name!r}: {exc.strerror or exc}") from None
    try:
        return json.loads(text), name
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{name}: not valid JSON: {exc}") from None
