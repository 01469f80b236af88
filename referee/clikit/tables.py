"""The one table renderer every command uses (Rich), for a terminal and for a pipe alike.

A table is a list of :class:`Column` and rows of cells. Cells are plain text, never Rich markup
(an interval such as ``[1.2, 3.4]`` or a bot called ``[x]`` prints as it is). On a terminal the
table fits the terminal's width and long cells wrap; written anywhere else (a pipe, a file, a
test) the console is as wide as the table, so no cell is cut or wrapped and every row is one
line, and there are never colour codes.

Text that comes from a bot or a stranger (bot names, fault reasons, a process's stderr) goes
through :func:`printable` before it reaches a terminal: every cell of a table does.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

Align = Literal["left", "right", "center"]

_ESCAPES = re.compile(
    r"""
      (?:\x1b\[|\x9b) [0-?]* [ -/]* [@-~]?                          # CSI: colours, cursor, erase
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]) [^\x07\x1b\x9c\n]*    # OSC (links, titles), DCS, SOS,
      (?:\x07|\x1b\\|\x9c)?                                        # PM, APC: up to BEL or ST
    | \x1b [ -/]* [0-~]?                                             # any other escape
    """,
    re.VERBOSE,
)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
"""C0 but tab and newline, DEL, C1, the line and paragraph separators, and the bidirectional
marks and overrides (which reorder what a reader sees)."""
_BREAKS = re.compile("[\t\n]")


def printable(text: object, *, lines: bool = False) -> str:
    """``text`` made safe to show on a terminal: escape sequences and control characters removed.

    Terminal escapes (colours, cursor moves, screen erases, OSC-8 links and window titles) go
    whole, then every other control character; bidirectional overrides too. ``lines`` keeps
    newlines and tabs (a stderr tail shown line by line); otherwise each becomes a space.
    This is the one place that does it: a bot's name, fault reason or stderr is printed through
    it by every command.
    """
    out = _CONTROLS.sub("", _ESCAPES.sub("", str(text)))
    return out if lines else _BREAKS.sub(" ", out)


def printable_json(value: Any) -> Any:
    """``value`` (JSON-ready) with every string, keys too, passed through :func:`printable` (newlines
    kept): JSON printed for a terminal or a script that shows its strings."""
    if isinstance(value, str):
        return printable(value, lines=True)
    if isinstance(value, dict):
        return {printable_json(k): printable_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_json(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Column:
    """A column: its header and how its cells line up (numbers to the right).

    On a terminal too narrow for the table, the widest columns give up width first and their
    cells wrap onto more lines; nothing is cut off.
    """

    header: str
    align: Align = "left"


def left(header: str) -> Column:
    """A column of text, lined up on the left."""
    return Column(header, "left")


def right(header: str) -> Column:
    """A column of numbers, lined up on the right."""
    return Column(header, "right")


Cell = object
"""Anything with a ``str()``; ``None`` prints as ``-``."""

SECTION = None
"""A row that is ``SECTION`` ends a group of rows: a blank line follows it."""


def build(columns: Sequence[Column | str], rows: Iterable[Sequence[Cell] | None]) -> Table:
    """The Rich table of ``columns`` (a bare string is a left-aligned column) and ``rows``."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", expand=False)
    for column in columns:
        col = column if isinstance(column, Column) else Column(column)
        table.add_column(Text(printable(col.header)), justify=col.align, overflow="fold", no_wrap=False)
    for row in rows:
        if row is SECTION:
            table.add_section()
            continue
        if len(row) != len(columns):
            raise ValueError(f"a row of {len(row)} cells for {len(columns)} columns: {row!r}")
        table.add_row(*(Text("-" if cell is None else printable(cell, lines=True)) for cell in row))
    return table


def _console(file: IO[str], terminal: bool, width: int | None = None) -> Console:
    if terminal:
        return Console(file=file, highlight=False, soft_wrap=False)
    # Not a terminal: no colour, no cursor codes, and as wide as the table needs.
    return Console(
        file=file,
        width=width or 10_000,
        force_terminal=False,
        color_system=None,
        highlight=False,
        emoji=False,
        soft_wrap=False,
        legacy_windows=False,
    )


def _is_terminal(file: IO[str]) -> bool:
    try:
        return bool(file.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def render(
    columns: Sequence[Column | str], rows: Iterable[Sequence[Cell] | None], *, width: int | None = None
) -> str:
    """The table as text, as it prints off a terminal (or ``width`` characters wide, wrapping)."""
    buffer = io.StringIO()
    _print(build(columns, rows), buffer, terminal=False, width=width)
    return buffer.getvalue()


def print_table(
    columns: Sequence[Column | str], rows: Iterable[Sequence[Cell] | None], *, file: IO[str] | None = None
) -> None:
    """Print the table on ``file`` (default: standard output, as it is at the time of the call)."""
    out = sys.stdout if file is None else file
    _print(build(columns, rows), out, terminal=_is_terminal(out))


def _print(table: Table, file: IO[str], *, terminal: bool, width: int | None = None) -> None:
    if terminal:
        _console(file, terminal=True).print(table)
        return
    console = _console(file, terminal=False, width=width)
    if width is None:
        # As wide as the table's widest row, so nothing wraps or is cut.
        console = _console(file, terminal=False, width=max(console.measure(table).maximum, 1))
    for line in console.render_lines(table, console.options, pad=False):
        file.write("".join(segment.text for segment in line if not segment.control).rstrip() + "\n")


def value_text(value: object) -> str:
    """An option's or setting's value as ``-o KEY=VALUE`` spells it: ``true``, ``none``, ``""``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value == "":
        return '""'
    return str(value)


def number(value: float | None, digits: int = 2) -> str:
    """A number with ``digits`` decimals, or ``-`` for none."""
    return "-" if value is None else f"{value:.{digits}f}"


def interval_text(low: float | None, high: float | None, too_few: str, digits: int = 2) -> str:
    """``[low, high]``, or ``too_few`` (e.g. "too few games") where no interval can be given."""
    if low is None or high is None:
        return too_few
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def game_summary(game: Any) -> str:
    """A game's variant, its options (players and every option not at its default) and its score's sense.

    For example ``classic, players=4 hands=1 target=none (other options at their defaults);
    score: lower is better``.
    """
    from referee.rules.config import describe

    shown = []
    for option in describe(type(game.config)):
        value = getattr(game.config, option["name"])
        if not isinstance(value, (bool, int, float, str)) and value is not None:
            continue  # a structured option (a Junior deck): named in `sixnimmt variants`
        if option["name"] == "players" or value != option["default"]:
            shown.append(f"{option['name']}={value_text(value)}")
    better = "higher" if game.higher_is_better else "lower"
    return f"{game.name}, {' '.join(shown)} (other options at their defaults); score: {better} is better"
