"""6 nimmt! Brettspiel: variant ``board``, the basic game or the pro version, with or without luck cards.

A chance step deals the tiles: one opens each of four rows, twelve go behind each screen (and,
in the pro version, two action cards to each hand). Every round all seats play a tile at once
(two while an active row shows an uncovered double-tile space), then the engine attaches the
revealed tiles lowest first by rules 1–3 and triggers the space each lands on
(:mod:`games.board.rules.brettspiel_round`). Before a tile is attached its owner may play action
cards (pro: ``ACTION_CARD`` decisions, asked while a held card has a legal use) and a luck card
(``LUCK``); a taken row's tile opens a free row (pro: the taker's ``ROW`` decision); "Draw"
spaces draw by chance; clovers give luck cards (``PILE`` while both piles hold cards). With two
or three players the basic game deals a second set of tiles from the supply; the pro version
ends after the round in which a screen empties and scores the tiles and action cards left.

Open points of the rulebook and the answers here (assumptions, listed in the rules docs):

- The row a taken row's tile opens in the basic game is the next free row below, else the
  topmost free row, never the row just taken (the pro rules say "any *other* free row").
- A tile that opens a row triggers that row's first space ("whenever you place a tile on a
  special space"); setup tiles trigger nothing.
- A seat with one tile left while two are due plays its last tile.
- "Positive Oxen" nets the two tiles' plus against the other tiles' minus in one change of
  score; clovers count only when that net is minus.
- Luck cards in hand are public: they come from face-up piles and are played face up.
- The pro-version choices are listed in :mod:`games.board.rules.brettspiel_cards` and the docs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar, NamedTuple

from games.board.rules.board import BASIC_KINDS, PRO_KINDS, Board, SpaceKind, Tiles, load_board, load_tiles
from games.board.rules.brettspiel_attach import (
    FORCED,
    Plan,
    attach_points,
    attach_target,
    attach_tile,
    next_free_row,
    plan_target,
    play_count,
)
from games.board.rules.brettspiel_cards import deck_of, without
from games.board.rules.brettspiel_round import (
    ACTION,
    CHANCE_PENDING,
    DEAL,
    DRAW,
    LUCK,
    OVER,
    PHASES,
    PILE,
    PLACE,
    PLAY,
    ROW,
    TILE,
    Table,
)
from games.board.rules.brettspiel_view import (
    ActionCard,
    ActionCardDrawn,
    ActionCardPlayed,
    ActionCardsDealt,
    ActionCardsReshuffled,
    BrettspielView,
    GameEnded,
    LuckCard,
    LuckCardPlayed,
    LuckCardTaken,
    PointsScored,
    RowOpened,
    RowShifted,
    RowTaken,
    StopSignsRemoved,
    TileAttached,
    TileDrawn,
    TilesDealt,
    TilesRevealed,
)
from referee.rules.chance import SeededChance
from referee.rules.config import bounded, check_bounds, option
from referee.rules.core import (
    CHANCE,
    Action,
    Decision,
    DecisionKind,
    Event,
    ForcedMoves,
    Outcome,
    Termination,
    Variant,
    shared_ranks,
)
from referee.rules.errors import ConfigError, GameOverError, IllegalActionError, NotPendingError

__all__ = [
    "ACTION",
    "DEAL",
    "DRAW",
    "LUCK",
    "OVER",
    "PILE",
    "PLAY",
    "ROW",
    "ActionCard",
    "ActionCardDrawn",
    "ActionCardPlayed",
    "ActionCardsDealt",
    "ActionCardsReshuffled",
    "Brettspiel",
    "BrettspielConfig",
    "BrettspielState",
    "BrettspielView",
    "GameEnded",
    "LuckCard",
    "LuckCardPlayed",
    "LuckCardTaken",
    "Plan",
    "PointsScored",
    "RowOpened",
    "RowShifted",
    "RowTaken",
    "StopSignsRemoved",
    "TileAttached",
    "TileDrawn",
    "TilesDealt",
    "TilesRevealed",
    "attach_points",
    "attach_target",
    "attach_tile",
    "next_free_row",
    "plan_target",
    "play_count",
]


@dataclass(frozen=True, slots=True)
class BrettspielConfig:
    """The numbers of a Brettspiel game; the defaults are the rulebook's or ``RULES-NOTES.md``'s."""

    players: int = bounded(4, 2, 6, "seats at the table")
    luck: bool = bounded(False, doc="play with the luck cards")
    board: str = bounded(
        "", doc="layout: packaged name (data/board_NAME.json) or .json path; empty: blue, or red with pro"
    )
    tiles: str = bounded("assumed", doc="oxen per tile: packaged name (data/tiles_NAME.json) or .json path")
    tiles_each: int = bounded(12, 1, 24, "tiles behind each screen (per set)")
    active_rows: int = bounded(4, 1, 20, "rows with tiles at all times; the top ones open the game")
    plus_points_cards: int = bounded(8, 0, 99, "'5 Plus Points' luck cards (an assumption)")
    positive_oxen_cards: int = bounded(8, 0, 99, "'Positive Oxen' luck cards (an assumption)")
    pro: bool = bounded(False, doc="the pro version: red side, action cards, stop signs")
    action_cards_each: int = bounded(2, 0, 10, "pro: action cards dealt to each hand")
    stop_cards: int = bounded(6, 0, 99, "pro: 'Stop!' action cards (an assumption)")
    tile_swap_cards: int = bounded(6, 0, 99, "pro: 'Tile Swap' action cards (an assumption)")
    skip_cards: int = bounded(6, 0, 99, "pro: 'Skip' action cards (an assumption)")
    move_to_front_cards: int = bounded(6, 0, 99, "pro: 'Move to the Front' action cards (an assumption)")
    attach_ascending_cards: int = bounded(6, 0, 99, "pro: 'Attach Ascending' action cards (an assumption)")
    one_more_tile_cards: int = bounded(6, 0, 99, "pro: 'One More Tile' action cards (an assumption)")
    stop_signs: int = bounded(2, 0, 19, "pro: stop signs that may lie on the board at once")
    round_limit: int = bounded(60, 1, 999, "pro: the game ends after this many rounds at most (a safeguard)")

    def __post_init__(self) -> None:
        check_bounds(self)
        for name in ("board", "tiles"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(f"{option(name)} must be a str, got {getattr(self, name)!r}")

    @property
    def action_card_counts(self) -> tuple[int, ...]:
        """How many action cards of each kind, in :class:`ActionCard` order."""
        return (
            self.stop_cards,
            self.tile_swap_cards,
            self.skip_cards,
            self.move_to_front_cards,
            self.attach_ascending_cards,
            self.one_more_tile_cards,
        )


class BrettspielState(NamedTuple):
    """An immutable Brettspiel game state."""

    phase: int
    tile_set: int
    """Sets of tiles dealt so far (a second one with two or three players in the basic game)."""
    round: int
    """Rounds completed in the current set."""
    rows: tuple[tuple[int, ...], ...]
    """Every row of the board, top to bottom: its tiles from the first space on; ``()`` is free;
    0 marks a skipped space."""
    screens: tuple[tuple[int, ...], ...]
    """The tiles behind each seat's screen, ascending."""
    supply: tuple[int, ...]
    """Face-down tiles not dealt, ascending (the second set and "Draw Tile" come from here)."""
    boxed: tuple[int, ...]
    """Tiles of taken rows, back in the box (each was face up)."""
    scores: tuple[int, ...]
    luck: tuple[tuple[int, int], ...]
    """Each seat's luck cards: how many "5 Plus Points" and "Positive Oxen"."""
    piles: tuple[int, int]
    """The face-up luck card piles: "5 Plus Points", "Positive Oxen"."""
    revealed: tuple[tuple[int, int], ...]
    """This round's ``(tile, seat)`` pairs in the order of attaching (ascending unless action
    cards changed it)."""
    attached: int
    """How many of ``revealed`` are attached."""
    draws: int
    """Luck cards the seat that attached last still takes (``PILE`` phase)."""
    outcome: Outcome | None
    pending: tuple[Decision, ...]
    stops: tuple[int, ...] = ()
    """Pro: the rows with a stop sign."""
    hands: tuple[tuple[int, ...], ...] = ()
    """Pro: each seat's action cards, ascending :class:`ActionCard` numbers."""
    action_pile: tuple[int, ...] = ()
    """Pro: the face-down action cards, as a sorted multiset (their order is drawn by chance)."""
    discard: tuple[int, ...] = ()
    """Pro: the face-up discard pile, ascending."""
    plan: Plan = FORCED
    """Pro: what the action cards played so far do to the tile about to be attached."""
    opening: tuple[int, int] | None = None
    """Pro, ``ROW`` phase: ``(tile, taken row)``, the tile that opens the row the seat chooses."""
    draw: int = 0
    """``DRAW`` phase: what a "Draw" space draws (1 a tile, 2 an action card)."""


_CARD, _CARDS = DecisionKind.CARD, DecisionKind.CARDS


class Brettspiel(Variant[BrettspielState, BrettspielConfig]):
    """The board game: the basic version; ``luck=True`` adds luck cards, ``pro=True`` the pro version."""

    name: ClassVar[str] = "board"
    aliases: ClassVar[tuple[str, ...]] = ("brettspiel",)
    config_type: ClassVar[type[Any]] = BrettspielConfig
    higher_is_better: ClassVar[bool] = True
    forced_moves: ClassVar[ForcedMoves] = ForcedMoves.PLAY
    """A lone decision with one option (pass, the one free row, the one stocked pile) is not asked."""
    second_set_players: ClassVar[int] = 3
    """Basic game: with at most this many players a second set of tiles is dealt (the rulebook: 2 or 3)."""
    bottom_rows_players: ClassVar[int] = 4
    """Pro version: with at least this many players the setup tiles open the bottom rows, not the top ones."""
    sides: ClassVar[dict[bool, str]] = {False: "blue", True: "red"}
    """The packaged layout each version plays on unless the config names another (by ``pro``)."""
    space_kinds: ClassVar[dict[bool, frozenset[SpaceKind]]] = {False: BASIC_KINDS, True: PRO_KINDS}
    """The kinds of space each version knows how to trigger (by ``pro``)."""

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
        self.board = board if board is not None else load_board(cfg.board or self.sides[cfg.pro])
        self.tiles = tiles if tiles is not None else load_tiles(cfg.tiles)
        self._oxen = self.tiles.oxen
        self._sets = 2 if cfg.players <= self.second_set_players and not cfg.pro else 1
        self.deck = deck_of(cfg.action_card_counts) if cfg.pro else ()
        """Pro: every action card, a sorted multiset of :class:`ActionCard` numbers."""
        unknown = self.board.kinds() - self.space_kinds[cfg.pro]
        if unknown:
            names = ", ".join(sorted(k.value for k in unknown))
            version = "pro version" if cfg.pro else "basic game (the pro version has them: pro=true)"
            raise ConfigError(f"{self.board.source}: the {version} has no {names} spaces")
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
        if cfg.pro and cfg.players * cfg.action_cards_each > len(self.deck):
            raise ConfigError(
                f"{cfg.players} players × {cfg.action_cards_each} action cards need"
                f" {cfg.players * cfg.action_cards_each}, the deck has {len(self.deck)}"
            )
        if cfg.pro and cfg.stop_signs >= cfg.active_rows:
            raise ConfigError(f"{cfg.stop_signs} stop signs could close all {cfg.active_rows} active rows")

    # -- the interface -------------------------------------------------------------------

    def initial_state(self) -> BrettspielState:
        n = self.config.players
        return BrettspielState(
            phase=DEAL,
            tile_set=0,
            round=0,
            rows=((),) * len(self.board.rows),
            screens=((),) * n,
            supply=(),
            boxed=(),
            scores=(0,) * n,
            luck=((0, 0),) * n,
            piles=self._full_piles(),
            revealed=(),
            attached=0,
            draws=0,
            outcome=None,
            pending=CHANCE_PENDING,
            hands=((),) * n,
            action_pile=self.deck,
        )

    def position(
        self,
        rows: Sequence[Sequence[int]],
        screens: Sequence[Sequence[int]],
        *,
        scores: Sequence[int] | None = None,
        luck: Sequence[tuple[int, int]] | None = None,
        action_cards: Sequence[Sequence[int]] | None = None,
        discard: Sequence[int] = (),
        stops: Sequence[int] = (),
    ) -> BrettspielState:
        """A state at the start of a round, set up by hand (tests, puzzles, rulebook examples).

        ``rows`` gives every row of the board (``()`` for a free one, 0 for a skipped space);
        the tiles left over form the supply. Pro: ``action_cards`` are the hands, ``discard``
        the discard pile, the rest of the deck the face-down pile; ``stops`` the stop signs.
        In the basic game the game ends when these screens are empty.
        """
        cfg = self.config
        n = cfg.players
        if len(rows) != len(self.board.rows) or len(screens) != n:
            raise ConfigError(f"a position needs {len(self.board.rows)} rows and {n} screens")
        tiles = [t for part in (*rows, *screens) for t in part if t]
        if len(set(tiles)) != len(tiles) or not set(tiles) <= set(self.tiles.numbers):
            raise ConfigError(f"a position's tiles must be distinct, from 1 to {len(self.tiles.numbers)}")
        if sum(1 for row in rows if row) != cfg.active_rows:
            raise ConfigError(f"a position has exactly {cfg.active_rows} active rows")
        for r, row in enumerate(rows):
            if len(row) >= len(self.board.rows[r].spaces) or (row and not (row[0] and row[-1])):
                raise ConfigError(
                    f"row {r}: starts and ends with a tile; a row's last space is never covered"
                )
        sizes = {len(s) for s in screens}
        if cfg.pro and min(sizes) < 1:  # taken rows and draws fill screens beyond tiles_each
            raise ConfigError("every screen must hold a tile")
        if not cfg.pro and (len(sizes) != 1 or not 0 < min(sizes) <= cfg.tiles_each):
            raise ConfigError(f"every screen must hold the same number of tiles, 1 to {cfg.tiles_each}")
        track = self.board.track
        if scores is not None and (len(scores) != n or any(track.clamp(s) != s for s in scores)):
            raise ConfigError(f"a position's scores: one per seat, each from {track.low} to {track.high}")
        held = tuple(luck) if luck is not None else ((0, 0),) * n
        full = self._full_piles()
        piles = (full[0] - sum(h[0] for h in held), full[1] - sum(h[1] for h in held))
        if len(held) != n or min(piles) < 0 or min(min(h) for h in held) < 0:
            raise ConfigError(f"luck cards: one (plus points, positive oxen) pair per seat, within {full}")
        hands = tuple(tuple(sorted(h)) for h in action_cards) if action_cards is not None else ((),) * n
        pile = without(self.deck, [c for hand in (*hands, discard) for c in hand])
        if len(hands) != n or pile is None:
            raise ConfigError(f"action cards: one hand per seat, with the discard pile within {self.deck}")
        open_rows = [r for r, row in enumerate(rows) if row]
        if len(stops) > cfg.stop_signs or len(set(stops)) != len(stops) or not set(stops) <= set(open_rows):
            raise ConfigError(f"stop signs: at most {cfg.stop_signs}, on distinct active rows")
        board_rows = tuple(tuple(row) for row in rows)
        hidden = tuple(tuple(sorted(s)) for s in screens)
        state = BrettspielState(
            phase=PLAY,
            tile_set=self._sets,
            round=0,
            rows=board_rows,
            screens=hidden,
            supply=tuple(t for t in self.tiles.numbers if t not in set(tiles)),
            boxed=(),
            scores=tuple(scores) if scores is not None else (0,) * n,
            luck=held,
            piles=piles,
            revealed=(),
            attached=0,
            draws=0,
            outcome=None,
            pending=(),
            stops=tuple(sorted(stops)),
            hands=hands,
            action_pile=pile,
            discard=tuple(sorted(discard)),
        )
        return state._replace(pending=self._play_pending(hidden, board_rows))

    def pending(self, state: BrettspielState) -> tuple[Decision, ...]:
        return state.pending

    def sample_chance(self, state: BrettspielState, chance: SeededChance) -> Action:
        if state.phase == DRAW:
            return chance.sample(state.supply if state.draw == TILE else state.action_pile, 1)[0]
        if state.phase != DEAL:
            raise NotPendingError("no chance decision is pending")
        pool, size = self._deal_pool(state)
        deal = chance.sample(pool, size)
        cards = self._cards_dealt() if state.tile_set == 0 else 0
        if cards:
            deal += chance.sample(state.action_pile, cards)
        return tuple(deal)

    def chance_outcomes(self, state: BrettspielState) -> tuple[tuple[Action, float], ...] | None:
        """A draw: each tile of the supply, or each kind in the action card pile by its count.
        A deal is too many to list."""
        if state.phase == DRAW:
            pool = state.supply if state.draw == TILE else state.action_pile
            counts = Counter(pool)
            return tuple((item, counts[item] / len(pool)) for item in sorted(counts))
        return super().chance_outcomes(state)

    def apply(
        self, state: BrettspielState, actions: Mapping[int, Action]
    ) -> tuple[BrettspielState, tuple[Event, ...]]:
        phase = state.phase
        if phase == PLAY:
            return self._play(state, actions)
        if phase == DEAL:
            return self._deal(state, actions)
        if phase == OVER:
            raise GameOverError("the game is over")
        return self._answer(state, actions)

    def view(self, state: BrettspielState, seat: int) -> BrettspielView:
        cfg = self.config
        if not 0 <= seat < cfg.players:
            raise NotPendingError(f"no seat {seat} in a {cfg.players}-player game")
        mine = [d for d in state.pending if d.seat == seat]
        attaching = None
        if state.phase in (LUCK, ACTION):
            tile = state.revealed[state.attached][0]
            attaching = (tile, *plan_target(state.rows, tile, state.plan, state.stops))
        return BrettspielView(
            seat=seat,
            players=cfg.players,
            phase=PHASES[state.phase],
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
            pro=cfg.pro,
            stops=state.stops,
            stop_signs=cfg.stop_signs if cfg.pro else 0,
            action_cards=state.hands[seat],
            hand_sizes=tuple(len(h) for h in state.hands),
            action_pile_size=len(state.action_pile),
            discard=state.discard,
            opening=state.opening if state.phase == ROW else None,
        )

    def outcome(self, state: BrettspielState) -> Outcome | None:
        return state.outcome

    def default_action(self, state: BrettspielState, decision: Decision) -> Action:
        """The lowest tile (or two lowest); no card; the "5 Plus Points" pile; the basic game's new row."""
        if decision.kind is DecisionKind.ROW and state.opening is not None:
            return next_free_row(state.rows, state.opening[1])
        return decision.options[0]

    # -- steps ---------------------------------------------------------------------------

    def _full_piles(self) -> tuple[int, int]:
        cfg = self.config
        return (cfg.plus_points_cards, cfg.positive_oxen_cards) if cfg.luck else (0, 0)

    def _cards_dealt(self) -> int:
        return self.config.players * self.config.action_cards_each if self.config.pro else 0

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
        cards = self._cards_dealt() if state.tile_set == 0 else 0
        if (
            not isinstance(deal, tuple)
            or len(deal) != size + cards
            or any(type(t) is not int for t in deal)
            or len(set(deal[:size])) != size
            or not set(deal[:size]) <= set(pool)
            or without(state.action_pile, deal[size:]) is None
        ):
            extra = f", then {cards} action cards of the pile" if cards else ""
            raise IllegalActionError(f"a deal is {size} distinct tiles of the {len(pool)} available{extra}")
        tiles, dealt_cards = deal[:size], deal[size:]
        rows = state.rows
        rest = tiles
        if state.tile_set == 0:
            top = cfg.active_rows
            first = len(self.board.rows) - top if cfg.pro and cfg.players >= self.bottom_rows_players else 0
            rows = tuple(
                (tiles[r - first],) if first <= r < first + top else () for r in range(len(self.board.rows))
            )
            rest = tiles[top:]
        each = cfg.tiles_each
        screens = tuple(tuple(sorted(rest[i * each : (i + 1) * each])) for i in range(cfg.players))
        dealt = set(tiles)
        tile_set = state.tile_set + 1
        events: list[Event] = [TilesDealt(tile_set, rows)]
        hands = state.hands
        pile = state.action_pile
        if cards:
            k = cfg.action_cards_each
            hands = tuple(tuple(sorted(dealt_cards[i * k : (i + 1) * k])) for i in range(cfg.players))
            pile = without(pile, dealt_cards) or ()
            events.append(ActionCardsDealt(k, len(pile)))
        nxt = state._replace(
            phase=PLAY,
            tile_set=tile_set,
            round=0,
            rows=rows,
            screens=screens,
            supply=tuple(t for t in pool if t not in dealt),
            hands=hands,
            action_pile=pile,
            pending=self._play_pending(screens, rows),
        )
        return nxt, tuple(events)

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
        table = Table.of(state, self)
        plays: list[tuple[int, int]] = []
        for seat, kind, options in state.pending:
            action = actions[seat]
            if type(action) is not (int if kind is _CARD else tuple) or action not in options:
                what = "a tile" if kind is _CARD else "a sorted tuple of tiles"
                raise IllegalActionError(f"seat {seat} must play {what} from its screen, got {action!r}")
            tiles = (action,) if isinstance(action, int) else action
            table.screens[seat] = tuple(t for t in table.screens[seat] if t not in tiles)
            plays.extend((tile, seat) for tile in tiles)
        table.revealed = sorted(plays)
        table.attached = 0
        table.stage = ACTION if self.config.pro else LUCK
        table.events.append(TilesRevealed(state.tile_set, state.round + 1, tuple(table.revealed)))
        return self._run(state, table)

    def _answer(
        self, state: BrettspielState, actions: Mapping[int, Action]
    ) -> tuple[BrettspielState, tuple[Event, ...]]:
        """One seat's (or chance's) answer in the middle of the attach phase."""
        decision = state.pending[0]
        action = _only(actions, decision.seat)
        table = Table.of(state, self)
        phase = state.phase
        if phase == DRAW:
            pool = state.supply if state.draw == TILE else state.action_pile
            if type(action) is not int or action not in pool:
                raise IllegalActionError(f"a draw is one of {sorted(set(pool))}, got {action!r}")
            table.drawn(action)
            table.stage = PILE
            return self._run(state, table)
        if action not in decision.options or type(action) is not type(decision.options[0]):
            raise IllegalActionError(
                f"seat {decision.seat} must answer its {decision.kind.value} decision with one of"
                f" {list(decision.options)}; got {action!r}"
            )
        if phase == ACTION:
            assert isinstance(action, tuple)
            if action:
                table.play_action_card(action)
            else:
                table.stage = LUCK
        elif phase == LUCK:
            assert isinstance(action, tuple)
            table.luck_card = action
            table.stage = PLACE
        elif phase == ROW:
            assert isinstance(action, int)
            table.open_row(action)
            table.stage = DRAW
        else:
            assert phase == PILE and isinstance(action, int)
            table.take_luck(action)
        return self._run(state, table)

    def _run(self, state: BrettspielState, table: Table) -> tuple[BrettspielState, tuple[Event, ...]]:
        pending = table.run()
        if pending:
            return table.freeze(state, pending), tuple(table.events)
        return self._end_round(state, table)

    def _end_round(self, state: BrettspielState, table: Table) -> tuple[BrettspielState, tuple[Event, ...]]:
        cfg = self.config
        table.revealed, table.attached = [], 0
        screens = table.screens
        # The pro version ends after the round in which a screen empties; the basic game's sets run out.
        more = all(screens) and state.round + 1 < cfg.round_limit if cfg.pro else any(screens)
        if more:
            nxt = table.freeze(state, self._play_pending(screens, table.rows))
            return nxt._replace(round=state.round + 1), tuple(table.events)
        if not cfg.pro and state.tile_set < self._sets:
            table.stage = DEAL
            return table.freeze(state, CHANCE_PENDING)._replace(round=state.round + 1), tuple(table.events)
        if cfg.pro:
            table.final_scoring()
        termination = Termination.TILES_EXHAUSTED if not all(screens) else Termination.HANDS_PLAYED
        scores = tuple(table.scores)
        outcome = Outcome(scores, shared_ranks(scores, higher_is_better=True), termination)
        table.events.append(GameEnded(scores, outcome.ranks, termination.value))
        table.stage = OVER
        nxt = table.freeze(state, ())._replace(round=state.round + 1, outcome=outcome)
        return nxt, tuple(table.events)


def _only(actions: Mapping[int, Action], seat: int) -> Action:
    """The action of the one pending seat; anything else is a :class:`NotPendingError`."""
    if len(actions) != 1 or seat not in actions:
        who = "chance" if seat == CHANCE else f"seat {seat}"
        raise NotPendingError(f"only {who} is pending, got actions for {sorted(actions)}")
    return actions[seat]
