"""The board game's wire codec: a declaration, its layout and hand-size ``Special``s."""

from __future__ import annotations

import json
from functools import lru_cache

from games.board.rules import brettspiel_view
from games.board.rules.board import Board, load_board
from referee.rules.errors import RulesError
from referee.wire import Codec, Special, WireError, register
from sixnimmt.v1 import board_pb2

# 6 nimmt! Brettspiel, the basic game or the pro version, with or without luck cards. A view carries
# what a bot needs to compute attachments and points itself: the board layout (a packaged one by its
# name, any other as JSON) and every tile's oxen. That part is the same for every view of a game, so
# its wire form is built once per board and tiles.


@lru_cache(maxsize=16)
def _board_layout(name: str, text: str, source: str) -> Board:
    """The layout a board view names: a packaged layout's ``name``, or the layout as JSON ``text``."""
    if name.endswith(".json"):
        raise WireError(f"a board view names a layout by a path, not a packaged name: {name!r}")
    try:
        if name:
            return load_board(name)
        if text:
            return Board.from_json(json.loads(text), source or "<board view>")
    except (RulesError, ValueError) as exc:
        raise WireError(f"a board view's layout does not load: {exc}") from exc
    raise WireError("a board view names no layout")


def _packaged(board: Board) -> bool:
    """Whether ``board`` is the packaged layout its source names (so the name alone carries it)."""
    if board.source.endswith(".json"):
        return False
    try:
        return load_board(board.source) == board
    except RulesError:
        return False


def _board_to_wire(view: brettspiel_view.BrettspielView, out: board_pb2.BoardView) -> None:
    board = view.board
    if _packaged(board):
        out.board_name = board.source
    else:
        out.board_json = json.dumps(board.to_json(), sort_keys=True, separators=(",", ":"))
        out.board_source = board.source


_BOARD_FIELDS = ("board_name", "board_json", "board_source")


def _board_from_wire(message: board_pb2.BoardView) -> Board:
    return _board_layout(message.board_name, message.board_json, message.board_source)


def _hand_sizes_to_wire(view: brettspiel_view.BrettspielView, out: board_pb2.BoardView) -> None:
    """The action cards in each hand: only the pro version has them (the basic game's view counts
    zeros, which are not sent)."""
    if view.pro:
        out.hand_sizes.extend(view.hand_sizes)


def _hand_sizes_from_wire(message: board_pb2.BoardView) -> tuple[int, ...]:
    return tuple(message.hand_sizes) if message.pro else (0,) * message.players


b = brettspiel_view
register(
    Codec(
        ("board",),
        "board",
        brettspiel_view.BrettspielView,
        (b.TilesDealt, b.TilesRevealed, b.LuckCardPlayed, b.TileAttached, b.RowTaken, b.PointsScored,
         b.LuckCardTaken, b.GameEnded, b.RowOpened, b.RowShifted, b.ActionCardsDealt, b.ActionCardPlayed,
         b.StopSignsRemoved, b.TileDrawn, b.ActionCardDrawn, b.ActionCardsReshuffled),
        shared=("board", "oxen"),
        special={
            b.BrettspielView: {
                "board": Special(_board_to_wire, _board_from_wire, _BOARD_FIELDS),
                "hand_sizes": Special(_hand_sizes_to_wire, _hand_sizes_from_wire, ("hand_sizes",)),
            }
        },
    )
)
