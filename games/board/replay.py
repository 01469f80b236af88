"""The board game's replay: its event lines, worded as the rulebook speaks and counted as people
count (row 1 is the board's top row, space 1 a row's first space). Dashboard layer:
``dashboard.replay`` and ``sixnimmt replay`` find it through the game's ``GameSpec.replay``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.board.rules.brettspiel_view import ActionCard, LuckCard
from games.replay_text import cards_text, row_name, seat_name
from referee.rules.core import Action

LUCK_CARDS = {LuckCard.PLUS_POINTS: "5 Plus Points", LuckCard.POSITIVE_OXEN: "Positive Oxen"}
"""The luck cards by number, as the rulebook names them."""

ACTION_CARDS = {
    ActionCard.STOP: "Stop!",
    ActionCard.TILE_SWAP: "Tile Swap",
    ActionCard.SKIP: "Skip",
    ActionCard.MOVE_TO_FRONT: "Move to the Front",
    ActionCard.ATTACH_ASCENDING: "Attach Ascending",
    ActionCard.ONE_MORE_TILE: "One More Tile",
}
"""The pro version's action cards by number, as the rulebook names them."""

ON_A_ROW = frozenset({ActionCard.STOP, ActionCard.MOVE_TO_FRONT, ActionCard.ATTACH_ASCENDING})
"""Action cards whose target is a row (the others' is a tile, or nothing)."""

SPACES = {
    "take_row": "Take Row",
    "take_tiles": "Take Row (Tiles)",
    "green_ox": "Green Ox",
    "red_ox": "Red Ox",
    "points": "plus or minus points",
    "double_tile": "Play Two Tiles",
    "draw_tile": "Draw Tile",
    "draw_action_card": "Draw Action Card",
}
"""The special spaces by kind (``SpaceKind``'s values), as the rulebook names them."""

REASONS = {
    **SPACES,
    "plus_points": "5 Plus Points",
    "positive_oxen": "Positive Oxen",
    "tiles_left": "tiles left behind the screen",
    "action_cards": "action cards in hand",
}
"""Why points were scored (``PointsScored.reason``)."""


def _card(names: dict[Any, str], number: int, what: str) -> str:
    try:
        return names[number]
    except KeyError:
        return f"{what} {number}"


def _space(effect: str) -> str:
    """What a space did, for the end of a line ("" for a plain space)."""
    return "" if effect == "plain" else f" ({SPACES.get(effect, effect)} space)"


def option_text(kind: str, option: Action, view: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """An option of a board game decision in words: the tile or tiles to play, the row a taken
    row's tile opens, the luck card pile to take from, a luck or action card with its target
    before the seat's tile is attached (or none); None for the generic label."""
    if kind == "card" and isinstance(option, int):
        return f"Play tile {option}"
    if kind == "cards" and isinstance(option, tuple):
        return f"Play tiles {' and '.join(map(str, option))}"
    if kind == "row" and isinstance(option, int):
        opening = view.get("opening")
        return f"Open {row_name(option)} with tile {opening[0]}" if opening else f"Open {row_name(option)}"
    if kind == "pile" and isinstance(option, int):
        return f"Take a {_card(LUCK_CARDS, option, 'luck card')} card"
    if not isinstance(option, tuple) or kind not in ("luck", "action_card"):
        return None
    attaching = view.get("attaching")
    tile = attaching[0] if attaching else None
    if not option:
        return "No luck card" if kind == "luck" else "No action card"
    card, *targets = option
    if kind == "luck":
        name = _card(LUCK_CARDS, card, "luck card")
        if card == LuckCard.POSITIVE_OXEN and targets:
            return f"{name} on tiles {' and '.join(map(str, targets))}"
        return f"{name} on tile {tile}" if tile is not None else name
    name = _card(ACTION_CARDS, card, "action card")
    if card in ON_A_ROW and targets:
        if card == ActionCard.STOP:
            return f"{name} on {row_name(targets[0])}"
        into = "the front of " if card == ActionCard.MOVE_TO_FRONT else ""
        return f"{name}: tile {tile} to {into}{row_name(targets[0])}"
    if card == ActionCard.TILE_SWAP and targets:
        return f"{name}: tile {targets[0]} instead of tile {tile}"
    if card == ActionCard.ONE_MORE_TILE and targets:
        return f"{name}: tile {targets[0]} too"
    if card == ActionCard.SKIP:
        return f"{name}: tile {tile} skips a space"
    return None


def describe(
    kind: str, fields: dict[str, Any], who: str, names: Sequence[str], before: Sequence[dict[str, Any]] = ()
) -> str | None:
    """The line of a board game event (None: the generic line)."""
    if kind == "TilesDealt":
        rows = ", ".join(
            f"{row_name(r)}: {cards_text(tiles)}" for r, tiles in enumerate(fields["rows"]) if tiles
        )
        return f"Tile set {fields['tile_set']} dealt; on the board: {rows}"
    if kind == "TilesRevealed":
        plays = ", ".join(f"{seat_name(names, s)} {t}" for t, s in fields["plays"])
        return f"Tile set {fields['tile_set']}, round {fields['round']}: tiles revealed: {plays}"
    if kind == "TileAttached":
        return (
            f"{who}: tile {fields['tile']} attached to {row_name(fields['row'])},"
            f" space {fields['space'] + 1}{_space(fields['effect'])}"
        )
    if kind == "RowTaken":
        opened = f"; tile opens {row_name(fields['opened'])}" if fields["opened"] >= 0 else ""
        return (
            f"{who} takes {row_name(fields['row'])} ({cards_text(fields['tiles'])}):"
            f" {fields['oxen']} oxen{opened}"
        )
    if kind == "RowOpened":
        return f"{who}: tile {fields['tile']} opens {row_name(fields['row'])}{_space(fields['effect'])}"
    if kind == "RowShifted":
        return (
            f"{who}: tile {fields['tile']} goes to the front of {row_name(fields['row'])};"
            f" the row shifts up to space {fields['space'] + 1}{_space(fields['effect'])}"
        )
    if kind == "LuckCardPlayed":
        card = _card(LUCK_CARDS, fields["card"], "luck card")
        on = f" on tiles {' and '.join(map(str, fields['targets']))}" if fields["targets"] else ""
        return f"{who} plays {card}{on} before attaching tile {fields['tile']}"
    if kind == "ActionCardPlayed":
        card = _card(ACTION_CARDS, fields["card"], "action card")
        targets, tile = fields["targets"], fields["tile"]
        if fields["card"] == ActionCard.TILE_SWAP and targets:
            return f"{who} plays {card}: tile {targets[0]} instead of tile {tile}"
        if fields["card"] == ActionCard.ONE_MORE_TILE and targets:
            return f"{who} plays {card}: tile {targets[0]} too, with tile {tile}"
        on = f" on {row_name(targets[0])}" if targets and fields["card"] in ON_A_ROW else ""
        return f"{who} plays {card}{on} before attaching tile {tile}"
    if kind == "ActionCardsDealt":
        return f"Each seat is dealt {fields['each']} action cards; {fields['pile']} stay in the pile"
    if kind == "StopSignsRemoved":
        rows = ", ".join(str(r + 1) for r in fields["rows"])
        many = len(fields["rows"]) != 1
        return f"A row was taken: the stop sign{'s leave rows' if many else ' leaves row'} {rows}"
    if kind == "TileDrawn":
        return f"{who} draws a tile from the supply"
    if kind == "ActionCardDrawn":
        return f"{who} draws an action card"
    if kind == "ActionCardsReshuffled":
        return f"The action card pile ran out: {fields['cards']} discarded cards shuffled into a new pile"
    if kind == "PointsScored":
        points, kept = fields["points"], fields["kept"]
        lost = f", {kept:+d} kept (the track ends at ±44)" if kept != points else ""
        reason = REASONS.get(fields["reason"], fields["reason"])
        return f"{who} scores {points:+d} ({reason}){lost}: {fields['total']} in all"
    if kind == "LuckCardTaken":
        return f"{who} takes a {_card(LUCK_CARDS, fields['card'], 'luck card')} luck card (a clover)"
    return None
