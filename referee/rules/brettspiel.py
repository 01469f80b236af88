"""6 nimmt! Brettspiel, the basic game with or without luck cards: variant ``board``.

A chance step deals the tiles: one opens each of the top rows, twelve go behind each screen.
Every round all seats play a tile at once (two while an active row shows an uncovered
double-tile space), then the engine attaches the revealed tiles lowest first by rules 1–3 and
triggers the space each lands on. With luck cards, the owner of the next tile may play one
before it is attached (a ``LUCK`` decision, asked only when a held card has a legal use), and
minus points that move a marker onto or past clovers give luck cards from the face-up piles (a
``PILE`` decision, asked only while both piles hold cards). With two or three players a second
chance step deals a second set of tiles from the supply when the first runs out.

Open points of the rulebook and the answers here (assumptions, listed in the rules docs):

- The row a taken row's tile opens is the next free row below, else the topmost free row,
  never the row just taken (the pro rules say "any *other* free row").
- A tile that opens a row triggers that row's first space ("whenever you place a tile on a
  special space"); the default blue layout's first spaces are plain, and setup tiles trigger
  nothing.
- A seat with one tile left while two are due plays its last tile.
- "Positive Oxen" nets the two tiles' plus against the other tiles' minus in one change of
  score; clovers count only when that net is minus.
- Luck cards in hand are public: they come from face-up piles and are played face up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar, NamedTuple

from referee.rules.board import TAKE_KINDS, Board, Space, SpaceKind, Tiles, load_board, load_tiles
from referee.rules.brettspiel_attach import (
    attach_points,
    attach_target,
    attach_tile,
    next_free_row,
    play_count,
    space_points,
)
from referee.rules.brettspiel_view import (
    PLUS_POINTS_VALUE,
    POSITIVE_OXEN_TILES,
    BrettspielView,
    GameEnded,
    LuckCard,
    LuckCardPlayed,
    LuckCardTaken,
    PointsScored,
    RowTaken,
    TileAttached,
    TilesDealt,
    TilesRevealed,
)
from referee.rules.chance import SeededChance
from referee.rules.config import bounded, check_bounds
from referee.rules.core import (
    CHANCE,
    Action,
    Decision,
    DecisionKind,
    Event,
    Outcome,
    Termination,
    Variant,
    shared_ranks,
)
from referee.rules.errors import ConfigError, GameOverError, IllegalActionError, NotPendingError

__all__ = [
    "DEAL",
    "LUCK",
    "OVER",
    "PILE",
    "PLAY",
    "Brettspiel",
    "BrettspielConfig",
    "BrettspielState",
    "BrettspielView",
    "GameEnded",
    "LuckCard",
    "LuckCardPlayed",
    "LuckCardTaken",
    "PointsScored",
    "RowTaken",
    "TileAttached",
    "TilesDealt",
    "TilesRevealed",
    "attach_points",
    "attach_target",
    "attach_tile",
    "next_free_row",
    "play_count",
]

DEAL, PLAY, LUCK, PILE, OVER = range(5)
_PHASES = ("deal", "play", "luck", "pile", "over")


@dataclass(frozen=True, slots=True)
class BrettspielConfig:
    """The numbers of a Brettspiel game; the defaults are the rulebook's or ``RULES-NOTES.md``'s."""

    players: int = bounded(4, 2, 6, "seats at the table")
    luck: bool = bounded(False, doc="play with the luck cards")
    board: str = bounded("blue", doc="layout: packaged name (data/board_NAME.json) or .json path")
    tiles: str = bounded("assumed", doc="oxen per tile: packaged name (data/tiles_NAME.json) or .json path")
    tiles_each: int = bounded(12, 1, 24, "tiles behind each screen (per set)")
    active_rows: int = bounded(4, 1, 20, "rows with tiles at all times; the top ones open the game")
    plus_points_cards: int = bounded(8, 0, 99, "'5 Plus Points' luck cards (an assumption)")
    positive_oxen_cards: int = bounded(8, 0, 99, "'Positive Oxen' luck cards (an assumption)")

    def __post_init__(self) -> None:
        check_bounds(self)
        for name in ("board", "tiles"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(f"BrettspielConfig.{name} must be a str, got {getattr(self, name)!r}")


class BrettspielState(NamedTuple):
    """An immutable Brettspiel game state."""

    phase: int
    tile_set: int
    """Sets of tiles dealt so far (a second one with two or three players)."""
    round: int
    """Rounds completed in the current set."""
    rows: tuple[tuple[int, ...], ...]
    """Every row of the board, top to bottom: its tiles from the first space on; ``()`` is free."""
    screens: tuple[tuple[int, ...], ...]
    """The tiles behind each seat's screen, ascending."""
    supply: tuple[int, ...]
    """Face-down tiles not dealt, ascending (the second set comes from here)."""
    boxed: tuple[int, ...]
    """Tiles of taken rows, back in the box (each was face up)."""
    scores: tuple[int, ...]
    luck: tuple[tuple[int, int], ...]
    """Each seat's luck cards: how many "5 Plus Points" and "Positive Oxen"."""
    piles: tuple[int, int]
    """The face-up luck card piles: "5 Plus Points", "Positive Oxen"."""
    revealed: tuple[tuple[int, int], ...]
    """This round's ``(tile, seat)`` pairs, ascending: the order of attaching."""
    attached: int
    """How many of ``revealed`` are attached."""
    draws: int
    """Luck cards the seat that attached last still takes (``PILE`` phase)."""
    outcome: Outcome | None
    pending: tuple[Decision, ...]


# -- the engine ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Table:
    """The mutable working copy of a state while one step is applied."""

    rows: list[tuple[int, ...]]
    screens: list[tuple[int, ...]]
    scores: list[int]
    luck: list[tuple[int, int]]
    piles: list[int]
    boxed: list[int]
    draws: int
    events: list[Event]

    @classmethod
    def of(cls, state: BrettspielState) -> _Table:
        return cls(
            list(state.rows),
            list(state.screens),
            list(state.scores),
            list(state.luck),
            list(state.piles),
            list(state.boxed),
            state.draws,
            [],
        )


_CARD, _CARDS, _LUCK, _PILE = DecisionKind.CARD, DecisionKind.CARDS, DecisionKind.LUCK, DecisionKind.PILE


class Brettspiel(Variant[BrettspielState, BrettspielConfig]):
    """The board game's basic version; ``luck=True`` adds the luck cards."""

    name: ClassVar[str] = "board"
    aliases: ClassVar[tuple[str, ...]] = ("brettspiel",)
    config_type: ClassVar[type[Any]] = BrettspielConfig
    higher_is_better: ClassVar[bool] = True
    second_set_players: ClassVar[int] = 3
    """With at most this many players a second set of tiles is dealt (the rulebook: two or three)."""
    space_kinds: ClassVar[frozenset[SpaceKind]] = frozenset(
        {
            SpaceKind.PLAIN,
            SpaceKind.TAKE_ROW,
            SpaceKind.GREEN_OX,
            SpaceKind.RED_OX,
            SpaceKind.POINTS,
            SpaceKind.DOUBLE_TILE,
        }
    )
    """The kinds of space this version knows how to trigger (the blue side's)."""

    def __init__(
        self,
        config: BrettspielConfig | None = None,
        *,
        board: Board | None = None,
        tiles: Tiles | None = None,
    ) -> None:
        """``board`` and ``tiles`` override the config's files (for tests; transcripts need files)."""
        super().__init__(config)
        cfg = self.config
        self.board = board if board is not None else load_board(cfg.board)
        self.tiles = tiles if tiles is not None else load_tiles(cfg.tiles)
        self._oxen = self.tiles.oxen
        self._sets = 2 if cfg.players <= self.second_set_players else 1
        unknown = self.board.kinds() - self.space_kinds
        if unknown:
            names = ", ".join(sorted(k.value for k in unknown))
            raise ConfigError(f"{self.board.source}: the {self.name} game has no {names} spaces")
        if len(self.board.rows) <= cfg.active_rows:
            raise ConfigError(
                f"{self.board.source}: {len(self.board.rows)} rows leave no free row beside"
                f" {cfg.active_rows} active ones"
            )
        needed = cfg.players * cfg.tiles_each * self._sets + cfg.active_rows
        if needed > len(self.tiles.numbers):
            raise ConfigError(
                f"{cfg.players} players × {cfg.tiles_each} tiles × {self._sets} set(s) + {cfg.active_rows}"
                f" rows need {needed} tiles, {self.tiles.source} has {len(self.tiles.numbers)}"
            )
        self._chance_pending = (Decision(CHANCE, DecisionKind.CHANCE, ()),)

    # -- the interface -------------------------------------------------------------------

    def initial_state(self) -> BrettspielState:
        n = self.config.players
        return BrettspielState(
            DEAL,
            0,
            0,
            ((),) * len(self.board.rows),
            ((),) * n,
            (),
            (),
            (0,) * n,
            ((0, 0),) * n,
            self._full_piles(),
            (),
            0,
            0,
            None,
            self._chance_pending,
        )

    def position(
        self,
        rows: Sequence[Sequence[int]],
        screens: Sequence[Sequence[int]],
        *,
        scores: Sequence[int] | None = None,
        luck: Sequence[tuple[int, int]] | None = None,
    ) -> BrettspielState:
        """A state at the start of a round, set up by hand (tests, puzzles, rulebook examples).

        ``rows`` gives every row of the board (``()`` for a free one); the tiles left over
        form the supply. The game ends when these screens are empty.
        """
        cfg = self.config
        n = cfg.players
        if len(rows) != len(self.board.rows) or len(screens) != n:
            raise ConfigError(f"a position needs {len(self.board.rows)} rows and {n} screens")
        tiles = [t for part in (*rows, *screens) for t in part]
        if len(set(tiles)) != len(tiles) or not set(tiles) <= set(self.tiles.numbers):
            raise ConfigError(f"a position's tiles must be distinct, from 1 to {len(self.tiles.numbers)}")
        if sum(1 for row in rows if row) != cfg.active_rows:
            raise ConfigError(f"a position has exactly {cfg.active_rows} active rows")
        for r, row in enumerate(rows):
            if len(row) >= len(self.board.rows[r].spaces):
                raise ConfigError(f"row {r} holds {len(row)} tiles: a row's last space is never covered")
        if len({len(s) for s in screens}) != 1 or not 0 < len(screens[0]) <= cfg.tiles_each:
            raise ConfigError(f"every screen must hold the same number of tiles, 1 to {cfg.tiles_each}")
        track = self.board.track
        if scores is not None and (len(scores) != n or any(track.clamp(s) != s for s in scores)):
            raise ConfigError(f"a position's scores: one per seat, each from {track.low} to {track.high}")
        held = tuple(luck) if luck is not None else ((0, 0),) * n
        full = self._full_piles()
        piles = (full[0] - sum(h[0] for h in held), full[1] - sum(h[1] for h in held))
        if len(held) != n or min(piles) < 0 or min(min(h) for h in held) < 0:
            raise ConfigError(f"luck cards: one (plus points, positive oxen) pair per seat, within {full}")
        board_rows = tuple(tuple(row) for row in rows)
        hidden = tuple(tuple(sorted(s)) for s in screens)
        state = BrettspielState(
            PLAY,
            self._sets,
            0,
            board_rows,
            hidden,
            tuple(t for t in self.tiles.numbers if t not in set(tiles)),
            (),
            tuple(scores) if scores is not None else (0,) * n,
            held,
            piles,
            (),
            0,
            0,
            None,
            (),
        )
        return state._replace(pending=self._play_pending(hidden, board_rows))

    def pending(self, state: BrettspielState) -> tuple[Decision, ...]:
        return state.pending

    def sample_chance(self, state: BrettspielState, chance: SeededChance) -> Action:
        if state.phase != DEAL:
            raise NotPendingError("no chance decision is pending")
        pool, size = self._deal_pool(state)
        return tuple(chance.sample(pool, size))

    def apply(
        self, state: BrettspielState, actions: Mapping[int, Action]
    ) -> tuple[BrettspielState, tuple[Event, ...]]:
        phase = state.phase
        if phase == PLAY:
            return self._play(state, actions)
        if phase == LUCK:
            return self._luck(state, actions)
        if phase == PILE:
            return self._pile(state, actions)
        if phase == DEAL:
            return self._deal(state, actions)
        raise GameOverError("the game is over")

    def view(self, state: BrettspielState, seat: int) -> BrettspielView:
        cfg = self.config
        if not 0 <= seat < cfg.players:
            raise NotPendingError(f"no seat {seat} in a {cfg.players}-player game")
        mine = [d for d in state.pending if d.seat == seat]
        attaching = None
        if state.phase == LUCK:
            tile = state.revealed[state.attached][0]
            attaching = (tile, *attach_target(state.rows, tile))
        return BrettspielView(
            seat=seat,
            players=cfg.players,
            phase=_PHASES[state.phase],
            tile_set=state.tile_set,
            tile_sets=self._sets,
            tiles_each=cfg.tiles_each,
            round=state.round,
            screen=state.screens[seat],
            screen_sizes=tuple(len(s) for s in state.screens),
            rows=state.rows,
            scores=state.scores,
            luck=state.luck,
            piles=state.piles,
            revealed=state.revealed,
            attached=state.attached,
            boxed=state.boxed,
            supply_size=len(state.supply),
            play_count=play_count(self.board, state.rows),
            attaching=attaching,
            draws=state.draws,
            decision=mine[0] if mine else None,
            board=self.board,
            oxen=self._oxen,
            luck_cards=cfg.luck,
        )

    def outcome(self, state: BrettspielState) -> Outcome | None:
        return state.outcome

    def default_action(self, state: BrettspielState, decision: Decision) -> Action:
        """The lowest tile (or two lowest); no luck card; the "5 Plus Points" pile."""
        return decision.options[0]

    # -- steps ---------------------------------------------------------------------------

    def _full_piles(self) -> tuple[int, int]:
        cfg = self.config
        return (cfg.plus_points_cards, cfg.positive_oxen_cards) if cfg.luck else (0, 0)

    def _deal_pool(self, state: BrettspielState) -> tuple[tuple[int, ...], int]:
        cfg = self.config
        if state.tile_set == 0:
            return self.tiles.numbers, cfg.players * cfg.tiles_each + cfg.active_rows
        return state.supply, cfg.players * cfg.tiles_each

    def _deal(
        self, state: BrettspielState, actions: Mapping[int, Action]
    ) -> tuple[BrettspielState, tuple[Event, ...]]:
        cfg = self.config
        deal = _only(actions, CHANCE)
        pool, size = self._deal_pool(state)
        if (
            not isinstance(deal, tuple)
            or len(deal) != size
            or any(type(t) is not int for t in deal)
            or len(set(deal)) != size
            or not set(deal) <= set(pool)
        ):
            raise IllegalActionError(f"a deal is {size} distinct tiles of the {len(pool)} available")
        rows = state.rows
        rest = deal
        if state.tile_set == 0:
            top = cfg.active_rows
            rows = tuple((t,) for t in deal[:top]) + ((),) * (len(self.board.rows) - top)
            rest = deal[top:]
        each = cfg.tiles_each
        screens = tuple(tuple(sorted(rest[i * each : (i + 1) * each])) for i in range(cfg.players))
        dealt = set(deal)
        tile_set = state.tile_set + 1
        nxt = state._replace(
            phase=PLAY,
            tile_set=tile_set,
            round=0,
            rows=rows,
            screens=screens,
            supply=tuple(t for t in pool if t not in dealt),
            pending=self._play_pending(screens, rows),
        )
        return nxt, (TilesDealt(tile_set, rows),)

    def _play_pending(
        self, screens: Sequence[tuple[int, ...]], rows: Sequence[Sequence[int]]
    ) -> tuple[Decision, ...]:
        count = play_count(self.board, rows)
        out = []
        for seat, screen in enumerate(screens):
            if min(count, len(screen)) == 1:
                out.append(Decision(seat, _CARD, screen))
            else:
                out.append(Decision(seat, _CARDS, tuple(combinations(screen, count))))
        return tuple(out)

    def _play(
        self, state: BrettspielState, actions: Mapping[int, Action]
    ) -> tuple[BrettspielState, tuple[Event, ...]]:
        if set(actions) != {d.seat for d in state.pending}:
            raise NotPendingError(
                f"every seat plays this round: expected seats 0…{len(state.pending) - 1},"
                f" got {sorted(actions)}"
            )
        table = _Table.of(state)
        plays: list[tuple[int, int]] = []
        for seat, kind, options in state.pending:
            action = actions[seat]
            if type(action) is not (int if kind is _CARD else tuple) or action not in options:
                what = "a tile" if kind is _CARD else "a sorted tuple of tiles"
                raise IllegalActionError(f"seat {seat} must play {what} from its screen, got {action!r}")
            tiles = (action,) if isinstance(action, int) else action
            table.screens[seat] = tuple(t for t in table.screens[seat] if t not in tiles)
            plays.extend((tile, seat) for tile in tiles)
        revealed = tuple(sorted(plays))
        table.events.append(TilesRevealed(state.tile_set, state.round + 1, revealed))
        return self._attach_from(state._replace(revealed=revealed), table, 0, None)

    def _luck(
        self, state: BrettspielState, actions: Mapping[int, Action]
    ) -> tuple[BrettspielState, tuple[Event, ...]]:
        decision = state.pending[0]
        action = _only(actions, decision.seat)
        if type(action) is not tuple or action not in decision.options:
            raise IllegalActionError(
                f"seat {decision.seat} may pass () or play a luck card, one of {list(decision.options)};"
                f" got {action!r}"
            )
        return self._attach_from(state, _Table.of(state), state.attached, action)

    def _pile(
        self, state: BrettspielState, actions: Mapping[int, Action]
    ) -> tuple[BrettspielState, tuple[Event, ...]]:
        decision = state.pending[0]
        card = _only(actions, decision.seat)
        if type(card) is not int or card not in decision.options:
            raise IllegalActionError(f"seat {decision.seat} takes a luck card from pile 1 or 2, got {card!r}")
        table = _Table.of(state)
        self._take_luck(table, decision.seat, card)
        if self._draw(table, decision.seat):
            return self._freeze(state, table, PILE, state.attached, (decision,)), tuple(table.events)
        return self._attach_from(state, table, state.attached, None)

    def _attach_from(
        self, state: BrettspielState, table: _Table, index: int, luck: Action | None
    ) -> tuple[BrettspielState, tuple[Event, ...]]:
        """Attach the revealed tiles from ``index`` on; ``luck`` is the first one's answered card."""
        revealed = state.revealed
        while index < len(revealed):
            tile, seat = revealed[index]
            if luck is None and self.config.luck and any(table.luck[seat]):
                options = self._luck_options(table.rows, tile, table.luck[seat])
                if len(options) > 1:
                    ask = (Decision(seat, _LUCK, options),)
                    return self._freeze(state, table, LUCK, index, ask), tuple(table.events)
            self._attach(table, seat, tile, luck or ())
            luck = None
            index += 1
            if table.draws and self._draw(table, seat):
                ask = (Decision(seat, _PILE, tuple(int(c) for c in LuckCard)),)
                return self._freeze(state, table, PILE, index, ask), tuple(table.events)
        return self._end_round(state, table)

    def _luck_options(
        self, rows: Sequence[tuple[int, ...]], tile: int, held: tuple[int, int]
    ) -> tuple[Action, ...]:
        row, space = attach_target(rows, tile)
        options: list[Action] = [()]
        if space < self.board.rows[row].last:
            if held[0]:
                options.append((LuckCard.PLUS_POINTS.value,))
        elif held[1]:
            tiles = sorted(t for t in rows[row] if t)
            k = min(POSITIVE_OXEN_TILES, len(tiles))
            options.extend((LuckCard.POSITIVE_OXEN.value, *pair) for pair in combinations(tiles, k))
        return tuple(options)

    def _attach(self, table: _Table, seat: int, tile: int, luck: Action) -> None:
        assert isinstance(luck, tuple)
        row, space = attach_target(table.rows, tile)
        spaces = self.board.rows[row].spaces
        card = luck[0] if luck else 0
        if card:
            held = list(table.luck[seat])
            held[card - 1] -= 1
            table.luck[seat] = (held[0], held[1])
            table.piles[card - 1] += 1
            table.events.append(LuckCardPlayed(seat, card, tile, luck[1:]))
        if spaces[space].kind in TAKE_KINDS:
            self._take_row(table, seat, tile, row, space, luck[1:])
            return
        table.rows[row] += (tile,)
        if card == LuckCard.PLUS_POINTS:
            table.events.append(TileAttached(seat, tile, row, space, "plus_points"))
            self._score(table, seat, PLUS_POINTS_VALUE, "plus_points")
        else:
            table.events.append(TileAttached(seat, tile, row, space, spaces[space].kind.value))
            self._trigger(table, seat, tile, spaces[space])

    def _trigger(self, table: _Table, seat: int, tile: int, space: Space) -> None:
        points = space_points(space, self._oxen[tile])
        if points:
            self._score(table, seat, points, space.kind.value)

    def _take_row(
        self, table: _Table, seat: int, tile: int, row: int, space: int, positive: tuple[int, ...]
    ) -> None:
        oxen = self._oxen
        taken = tuple(t for t in table.rows[row] if t)
        total = sum(oxen[t] for t in taken)
        table.rows[row] = ()
        opened = next_free_row(table.rows, row)
        table.rows[opened] = (tile,)
        table.boxed.extend(taken)
        table.events.append(TileAttached(seat, tile, row, space, SpaceKind.TAKE_ROW.value))
        table.events.append(RowTaken(seat, row, taken, total, opened))
        if positive:
            plus = sum(oxen[t] for t in positive)
            self._score(table, seat, plus - (total - plus), "positive_oxen")
        else:
            self._score(table, seat, -total, SpaceKind.TAKE_ROW.value)
        self._trigger(table, seat, tile, self.board.rows[opened].spaces[0])

    def _score(self, table: _Table, seat: int, points: int, reason: str) -> None:
        track = self.board.track
        old = table.scores[seat]
        new = track.clamp(old + points)
        table.scores[seat] = new
        table.events.append(PointsScored(seat, points, new - old, new, reason))
        if self.config.luck and new < old:
            table.draws += track.clovers_passed(old, new)

    def _draw(self, table: _Table, seat: int) -> bool:
        """Take the luck cards due where there is no choice; True when the seat must choose a pile."""
        while table.draws:
            stocked = [card for card in LuckCard if table.piles[card - 1]]
            if not stocked:
                table.draws = 0
            elif len(stocked) > 1:
                return True
            else:
                self._take_luck(table, seat, stocked[0])
        return False

    def _take_luck(self, table: _Table, seat: int, card: int) -> None:
        held = list(table.luck[seat])
        held[card - 1] += 1
        table.luck[seat] = (held[0], held[1])
        table.piles[card - 1] -= 1
        table.draws -= 1
        table.events.append(LuckCardTaken(seat, card))

    def _freeze(
        self, state: BrettspielState, table: _Table, phase: int, attached: int, pending: tuple[Decision, ...]
    ) -> BrettspielState:
        return state._replace(
            phase=phase,
            rows=tuple(table.rows),
            screens=tuple(table.screens),
            scores=tuple(table.scores),
            luck=tuple(table.luck),
            piles=(table.piles[0], table.piles[1]),
            boxed=tuple(table.boxed),
            attached=attached,
            draws=table.draws,
            pending=pending,
        )

    def _end_round(self, state: BrettspielState, table: _Table) -> tuple[BrettspielState, tuple[Event, ...]]:
        nxt = self._freeze(state, table, PLAY, 0, ())._replace(round=state.round + 1, revealed=())
        if any(nxt.screens):
            return nxt._replace(pending=self._play_pending(nxt.screens, nxt.rows)), tuple(table.events)
        if nxt.tile_set < self._sets:
            return nxt._replace(phase=DEAL, pending=self._chance_pending), tuple(table.events)
        scores = nxt.scores
        outcome = Outcome(scores, shared_ranks(scores, higher_is_better=True), Termination.TILES_EXHAUSTED)
        table.events.append(GameEnded(scores, outcome.ranks, outcome.termination.value))
        return nxt._replace(phase=OVER, outcome=outcome), tuple(table.events)


def _only(actions: Mapping[int, Action], seat: int) -> Action:
    """The action of the one pending seat; anything else is a :class:`NotPendingError`."""
    if len(actions) != 1 or seat not in actions:
        who = "chance" if seat == CHANCE else f"seat {seat}"
        raise NotPendingError(f"only {who} is pending, got actions for {sorted(actions)}")
    return actions[seat]
