"""The "attach a tile" phase of a Brettspiel round as a resumable sequence of stages.

For each revealed tile, lowest first: action cards (pro), a luck card, the placement and the
space it triggers, the new row a taken row's tile opens (the player's choice in the pro
version), a tile or action card drawn (chance), luck cards taken for clovers; then the next
tile. A stage that needs a decision stops the run; the answer moves the stage on and the run
resumes. :class:`Table` is the mutable working copy of a state while one step is applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from games.board.rules.board import TAKE_KINDS, Space, SpaceKind
from games.board.rules.brettspiel_attach import (
    FORCED,
    Plan,
    free_rows,
    next_free_row,
    plan_target,
    put_tile,
    shift_to_front,
    space_points,
)
from games.board.rules.brettspiel_cards import action_card_options, luck_options
from games.board.rules.brettspiel_view import (
    ACTION_CARD_VALUE,
    PLUS_POINTS_VALUE,
    ActionCard,
    ActionCardDrawn,
    ActionCardPlayed,
    ActionCardsReshuffled,
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
)
from referee.rules.core import CHANCE, Action, Decision, DecisionKind, Event

if TYPE_CHECKING:
    from games.board.rules.brettspiel import Brettspiel, BrettspielState

DEAL, PLAY, LUCK, PILE, OVER, ACTION, ROW, DRAW = range(8)
"""The phases of a state: what its pending decisions are for."""
PHASES = ("deal", "play", "luck", "pile", "over", "action", "row", "draw")
PLACE, NEXT = 8, 9
"""Stages that never wait for a decision, so no state is ever in them."""

NOTHING, TILE, CARD = range(3)
"""What a "Draw" space left to draw."""

CHANCE_PENDING = (Decision(CHANCE, DecisionKind.CHANCE, ()),)


@dataclass(slots=True)
class Table:
    """The mutable working copy of a state while one step is applied."""

    game: Brettspiel
    stage: int
    rows: list[tuple[int, ...]]
    screens: list[tuple[int, ...]]
    supply: list[int]
    scores: list[int]
    luck: list[tuple[int, int]]
    piles: list[int]
    boxed: list[int]
    hands: list[tuple[int, ...]]
    action_pile: list[int]
    discard: list[int]
    stops: list[int]
    revealed: list[tuple[int, int]]
    attached: int
    plan: Plan
    opening: tuple[int, int] | None
    draw: int
    draws: int
    events: list[Event] = field(default_factory=list)
    luck_card: tuple[int, ...] = ()
    """The luck card answered for the tile being placed (``()``: none)."""

    @classmethod
    def of(cls, state: BrettspielState, game: Brettspiel) -> Table:
        return cls(
            game,
            state.phase,
            list(state.rows),
            list(state.screens),
            list(state.supply),
            list(state.scores),
            list(state.luck),
            list(state.piles),
            list(state.boxed),
            list(state.hands),
            list(state.action_pile),
            list(state.discard),
            list(state.stops),
            list(state.revealed),
            state.attached,
            state.plan,
            state.opening,
            state.draw,
            state.draws,
        )

    def freeze(self, state: BrettspielState, pending: tuple[Decision, ...]) -> BrettspielState:
        """The state with this table's contents, waiting for ``pending``."""
        return state._replace(
            phase=self.stage,
            rows=tuple(self.rows),
            screens=tuple(self.screens),
            supply=tuple(self.supply),
            scores=tuple(self.scores),
            luck=tuple(self.luck),
            piles=(self.piles[0], self.piles[1]),
            boxed=tuple(self.boxed),
            hands=tuple(self.hands),
            action_pile=tuple(self.action_pile),
            discard=tuple(self.discard),
            stops=tuple(self.stops),
            revealed=tuple(self.revealed),
            attached=self.attached,
            plan=self.plan,
            opening=self.opening,
            draw=self.draw,
            draws=self.draws,
            pending=pending,
        )

    # -- the run ---------------------------------------------------------------------------

    def run(self) -> tuple[Decision, ...]:
        """Go on attaching until a decision is due (returned) or every tile is attached (``()``)."""
        game = self.game
        # A decision with one option (pass; the one free row; the one stocked pile) is a forced
        # move: the core's policy (game.forced) says whether it is asked or made here.
        forced = game.forced
        while True:
            stage = self.stage
            if stage == ACTION:
                ask = (Decision(self.seat, DecisionKind.ACTION_CARD, self.action_options()),)
                if forced(ask) is None:
                    return ask
                self.stage = LUCK  # the only option is to pass
            elif stage == LUCK:
                ask = (Decision(self.seat, DecisionKind.LUCK, self.luck_options()),)
                if forced(ask) is None:
                    return ask
                self.stage = PLACE  # the only option is to pass
            elif stage == PLACE:
                self.place(self.luck_card)
                self.luck_card = ()
                self.stage = ROW
            elif stage == ROW:
                if self.opening is not None:
                    free = free_rows(self.rows, self.opening[1])
                    ask = (Decision(self.placer, DecisionKind.ROW, free),)
                    if forced(ask) is None:
                        return ask
                    self.open_row(free[0])
                self.stage = DRAW
            elif stage == DRAW:
                if self.draw and self.can_draw():
                    return CHANCE_PENDING
                self.draw = NOTHING
                self.stage = PILE
            elif stage == PILE:
                while self.draws:
                    stocked = tuple(int(card) for card in LuckCard if self.piles[card - 1])
                    if not stocked:  # both piles empty: the cards due are lost
                        self.draws = 0
                        break
                    ask = (Decision(self.placer, DecisionKind.PILE, stocked),)
                    if forced(ask) is None:
                        return ask
                    self.take_luck(stocked[0])
                self.stage = NEXT
            else:
                self.plan = FORCED
                if self.attached == len(self.revealed):
                    self.stage = PLAY
                    return ()
                self.stage = ACTION if game.config.pro else LUCK

    @property
    def seat(self) -> int:
        """The seat whose tile is about to be attached."""
        return self.revealed[self.attached][1]

    @property
    def placer(self) -> int:
        """The seat whose tile was attached last (it chooses the new row, draws, takes luck cards)."""
        return self.revealed[self.attached - 1][1]

    # -- before the placement: cards -------------------------------------------------------

    def action_options(self) -> tuple[Action, ...]:
        tile, seat = self.revealed[self.attached]
        if not self.hands[seat]:
            return ((),)
        return action_card_options(
            self.game.board,
            self.rows,
            tile,
            self.hands[seat],
            self.screens[seat],
            self.plan,
            self.stops,
            self.game.config.stop_signs,
        )

    def luck_options(self) -> tuple[Action, ...]:
        tile, seat = self.revealed[self.attached]
        if not self.game.config.luck or not any(self.luck[seat]):
            return ((),)
        return luck_options(self.game.board, self.rows, tile, self.luck[seat], self.plan, self.stops)

    def play_action_card(self, action: tuple[int, ...]) -> None:
        """Play an action card (a legal option) on the tile about to be attached."""
        tile, seat = self.revealed[self.attached]
        card, *targets = action
        hand = list(self.hands[seat])
        hand.remove(card)
        self.hands[seat] = tuple(hand)
        self.discard = sorted([*self.discard, card])
        self.events.append(ActionCardPlayed(seat, card, tile, tuple(targets)))
        plan = self.plan
        if card == ActionCard.STOP:
            self.stops = sorted([*self.stops, targets[0]])
        elif card == ActionCard.SKIP:
            self.plan = plan._replace(skips=plan.skips + 1)
        elif card == ActionCard.MOVE_TO_FRONT:
            self.plan = Plan(targets[0], front=True)
        elif card == ActionCard.ATTACH_ASCENDING:
            self.plan = Plan(targets[0])
        else:
            new = targets[0]
            screen = [t for t in self.screens[seat] if t != new]
            if card == ActionCard.TILE_SWAP:
                self.screens[seat] = tuple(sorted([*screen, tile]))
                self.revealed[self.attached] = (new, seat)
            else:  # One More Tile: all of the seat's played tiles are attached now, lowest first
                self.screens[seat] = tuple(screen)
                rest = self.revealed[self.attached :]
                mine = sorted([*(p for p in rest if p[1] == seat), (new, seat)])
                self.revealed[self.attached :] = [*mine, *(p for p in rest if p[1] != seat)]

    # -- the placement ---------------------------------------------------------------------

    def place(self, luck: tuple[int, ...]) -> None:
        """Attach the next tile as its plan says, with the luck card answered for it."""
        tile, seat = self.revealed[self.attached]
        self.attached += 1
        card = luck[0] if luck else 0
        if card:
            held = list(self.luck[seat])
            held[card - 1] -= 1
            self.luck[seat] = (held[0], held[1])
            self.piles[card - 1] += 1
            self.events.append(LuckCardPlayed(seat, card, tile, luck[1:]))
        board = self.game.board
        plan = self.plan
        if plan.front:
            row = plan.row
            shifted, space = shift_to_front(self.rows[row], tile)
            landing = shifted[space]
            self.rows[row] = (*shifted[:space], 0, *shifted[space + 1 :])
            effect = board.rows[row].spaces[space].kind.value
            self.events.append(RowShifted(seat, tile, row, space, effect))
        else:
            row, space = plan_target(self.rows, tile, plan, self.stops)
            landing = tile
            kind = board.rows[row].spaces[space].kind
            plus = card == LuckCard.PLUS_POINTS and kind not in TAKE_KINDS
            self.events.append(TileAttached(seat, tile, row, space, "plus_points" if plus else kind.value))
        self.land(seat, landing, row, space, luck)

    def land(self, seat: int, tile: int, row: int, space: int, luck: tuple[int, ...]) -> None:
        """``tile`` lands on ``space`` of ``row`` and triggers it (a luck card changes that)."""
        spaces = self.game.board.rows[row].spaces
        if spaces[space].kind in TAKE_KINDS:
            self.take(seat, tile, row, space, luck[1:])
            return
        self.rows[row] = put_tile(self.rows[row], space, tile)
        if luck and luck[0] == LuckCard.PLUS_POINTS:
            self.score(seat, PLUS_POINTS_VALUE, "plus_points")
        else:
            self.trigger(seat, tile, spaces[space])

    def take(self, seat: int, tile: int, row: int, space: int, positive: tuple[int, ...]) -> None:
        """A take-row space: the row's tiles leave; ``tile`` opens a new row (pro: chosen next)."""
        game = self.game
        oxen = game.tiles.oxen
        taken = tuple(t for t in self.rows[row] if t)
        total = sum(oxen[t] for t in taken)
        self.rows[row] = ()
        to_screen = game.board.rows[row].spaces[space].kind is SpaceKind.TAKE_TILES
        opened = -1
        if game.config.pro:
            self.opening = (tile, row)
        else:
            opened = next_free_row(self.rows, row)
            self.rows[opened] = (tile,)
        if not to_screen:
            self.boxed.extend(taken)
        self.events.append(RowTaken(seat, row, taken, total, opened))
        plus = sum(oxen[t] for t in positive)
        if to_screen:
            if positive:
                self.score(seat, plus, "positive_oxen")
            self.screens[seat] = tuple(sorted((*self.screens[seat], *taken)))
        elif positive:
            self.score(seat, plus - (total - plus), "positive_oxen")
        else:
            self.score(seat, -total, SpaceKind.TAKE_ROW.value)
        if self.stops:
            self.events.append(StopSignsRemoved(tuple(self.stops)))
            self.stops = []
        if opened >= 0:
            self.trigger(seat, tile, game.board.rows[opened].spaces[0])

    def open_row(self, row: int) -> None:
        """Pro version: the taken row's tile opens ``row`` (a free row) and triggers its first space."""
        assert self.opening is not None
        tile = self.opening[0]
        self.opening = None
        self.rows[row] = (tile,)
        first = self.game.board.rows[row].spaces[0]
        self.events.append(RowOpened(self.placer, tile, row, first.kind.value))
        self.trigger(self.placer, tile, first)

    def trigger(self, seat: int, tile: int, space: Space) -> None:
        kind = space.kind
        if kind is SpaceKind.DRAW_TILE:
            self.draw = TILE
        elif kind is SpaceKind.DRAW_ACTION_CARD:
            self.draw = CARD
        else:
            points = space_points(space, self.game.tiles.oxen[tile])
            if points:
                self.score(seat, points, kind.value)

    def score(self, seat: int, points: int, reason: str, *, clovers: bool = True) -> None:
        track = self.game.board.track
        old = self.scores[seat]
        new = track.clamp(old + points)
        self.scores[seat] = new
        self.events.append(PointsScored(seat, points, new - old, new, reason))
        if clovers and self.game.config.luck and new < old:
            self.draws += track.clovers_passed(old, new)

    # -- after the placement: draws --------------------------------------------------------

    def can_draw(self) -> bool:
        """Whether there is something to draw; an empty action card pile takes the discard pile."""
        if self.draw == TILE:
            return bool(self.supply)
        if not self.action_pile and self.discard:
            self.events.append(ActionCardsReshuffled(len(self.discard)))
            self.action_pile, self.discard = self.discard, []
        return bool(self.action_pile)

    def drawn(self, item: int) -> None:
        """The chance outcome of a "Draw" space: a tile from the supply or an action card."""
        seat = self.placer
        if self.draw == TILE:
            self.supply.remove(item)
            self.screens[seat] = tuple(sorted((*self.screens[seat], item)))
            self.events.append(TileDrawn(seat))
        else:
            self.action_pile.remove(item)
            self.hands[seat] = tuple(sorted((*self.hands[seat], item)))
            self.events.append(ActionCardDrawn(seat))
        self.draw = NOTHING

    def take_luck(self, card: int) -> None:
        seat = self.placer
        held = list(self.luck[seat])
        held[card - 1] += 1
        self.luck[seat] = (held[0], held[1])
        self.piles[card - 1] -= 1
        self.draws -= 1
        self.events.append(LuckCardTaken(seat, card))

    # -- the end ---------------------------------------------------------------------------

    def final_scoring(self) -> None:
        """Pro version: minus points for the oxen behind each screen, then one plus per action card."""
        oxen = self.game.tiles.oxen
        for seat, screen in enumerate(self.screens):
            if screen:
                self.score(seat, -sum(oxen[t] for t in screen), "tiles_left", clovers=False)
            if self.hands[seat]:
                self.score(seat, ACTION_CARD_VALUE * len(self.hands[seat]), "action_cards", clovers=False)
