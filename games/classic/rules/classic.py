"""Classic 6 nimmt!: 2–10 players, rules 1–4, the Tactics and Professional options.

A *hand* (the rulebook's "round") deals ``hand_size`` cards to each seat and starts the rows;
a *turn* is one card from everyone, revealed together and placed lowest first. A card below
every row's last card (rule 4) stops the placement: its owner chooses the row to take, with
all of the turn's cards revealed, before any later card is placed.

Where a card goes is :mod:`referee.rules.placement`'s, shared with the bots. Performance matters
here (a league plays millions of turns), so states are named tuples of tuples and the placement
loop works on plain lists; see ``make bench``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from itertools import combinations, permutations
from math import comb, perm
from typing import Any, ClassVar, NamedTuple

from referee.rules.cards import bull_table
from referee.rules.chance import SeededChance
from referee.rules.config import bounded, check_bounds, option
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
from referee.rules.core import GameEnded as GameEnded  # the core's game-over event, among this game's
from referee.rules.errors import ConfigError, GameOverError, IllegalActionError, NotPendingError
from referee.rules.placement import LOW, ascending_run, placement

DEAL, PLAY, ROW, OVER = 0, 1, 2, 3
_PHASES = ("deal", "play", "row", "over")


@dataclass(frozen=True, slots=True)
class ClassicConfig:
    """The numbers of a classic game; defaults are the rulebook's."""

    players: int = bounded(4, 2, 10, "seats at the table")
    hand_size: int = bounded(10, 1, 50, "cards dealt to each seat per hand")
    rows: int = bounded(4, 1, 10, "rows on the table")
    row_capacity: int = bounded(5, 1, 20, "cards a row holds; the next one takes it (rule 3)")
    deck: int = bounded(104, 5, 1000, "highest card; cards run 1 … deck")
    target: int | None = bounded(66, 1, 10_000, "the game ends once a seat has this many bull heads")
    hands: int | None = bounded(None, 1, 10_000, "the game ends after this many hands")
    tactics: bool = bounded(False, doc="Tactics: only cards 1 … players·hand_size + rows")
    professional: bool = bounded(False, doc="Professional: a card may also go left of a row")

    def __post_init__(self) -> None:
        check_bounds(self)
        if self.target is None and self.hands is None:
            raise ConfigError(
                f"{option('target')} and {option('hands')} cannot both be None:"
                " the game needs a target score, a number of hands, or both"
            )
        needed = self.players * self.hand_size + self.rows
        if needed > self.deck:
            raise ConfigError(
                f"{self.players} players × {self.hand_size} cards + {self.rows} rows"
                f" need {needed} cards, the deck has {self.deck} ({option('deck')})"
            )

    @property
    def top_card(self) -> int:
        """The highest card in play (smaller under Tactics)."""
        if self.tactics:
            return self.players * self.hand_size + self.rows
        return self.deck


class ClassicState(NamedTuple):
    """An immutable classic game state."""

    phase: int
    hand_no: int
    """Hands dealt so far (the current hand is number ``hand_no``, counting from 1)."""
    turn: int
    """Turns completed in the current hand."""
    rows: tuple[tuple[int, ...], ...]
    hands: tuple[tuple[int, ...], ...]
    """Each seat's cards, ascending."""
    piles: tuple[tuple[int, ...], ...]
    """Cards each seat took this hand (every one of them was face up before)."""
    scores: tuple[int, ...]
    """Bull heads per seat over the whole game so far."""
    revealed: tuple[tuple[int, int], ...]
    """This turn's ``(card, seat)`` pairs, ascending by card."""
    placed: int
    """How many of ``revealed`` are on the table already."""
    outcome: Outcome | None
    pending: tuple[Decision, ...]
    """The decisions this state waits for (computed once, when the state is made)."""


class CardsRevealed(NamedTuple):
    """Everyone's card of a turn, turned face up at once."""

    hand: int
    turn: int
    plays: tuple[tuple[int, int], ...]
    """``(card, seat)`` pairs, ascending by card: the order of placement."""


class RowChosen(NamedTuple):
    """The owner of a low card (rule 4) chose the row to take."""

    seat: int
    card: int
    row: int


class CardPlaced(NamedTuple):
    """A card went to a row; if it took the row, ``taken`` holds the cards and ``bulls`` their heads."""

    seat: int
    card: int
    row: int
    left: bool
    """Placed at the row's left end (Professional option)."""
    taken: tuple[int, ...]
    bulls: int


class HandDealt(NamedTuple):
    """A new hand was dealt; the rows start with these cards (the hands are secret)."""

    hand: int
    rows: tuple[tuple[int, ...], ...]


class HandScored(NamedTuple):
    """A hand ended: each seat's bull heads of the hand and the game totals."""

    hand: int
    bulls: tuple[int, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ClassicView:
    """What one seat knows: its hand, the table, every card taken, everyone's score."""

    seat: int
    players: int
    phase: str
    hand_no: int
    turn: int
    hand: tuple[int, ...]
    rows: tuple[tuple[int, ...], ...]
    piles: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    revealed: tuple[tuple[int, int], ...]
    """This turn's face-up ``(card, seat)`` pairs; filled only while a low card's row is chosen."""
    decision: Decision | None
    """This seat's pending decision, if any."""
    top_card: int
    row_capacity: int
    hand_size: int
    professional: bool

    def unseen(self) -> tuple[int, ...]:
        """Cards this seat has not seen this hand: the other hands and the undealt cards."""
        seen = set(self.hand)
        for row in self.rows:
            seen.update(row)
        for pile in self.piles:
            seen.update(pile)
        seen.update(card for card, _ in self.revealed)
        return tuple(c for c in range(1, self.top_card + 1) if c not in seen)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form of the view."""
        return {
            "seat": self.seat,
            "players": self.players,
            "phase": self.phase,
            "hand_no": self.hand_no,
            "turn": self.turn,
            "hand": list(self.hand),
            "rows": [list(r) for r in self.rows],
            "piles": [list(p) for p in self.piles],
            "scores": list(self.scores),
            "revealed": [list(p) for p in self.revealed],
            "decision": None
            if self.decision is None
            else {"kind": self.decision.kind.value, "options": list(self.decision.options)},
        }


_new = tuple.__new__
"""Named tuples built through ``tuple.__new__`` skip a Python-level ``__new__``: twice as fast."""


def _slotted_maker(cls: type) -> Callable[..., Any]:
    """``cls(*values)`` for a frozen slotted dataclass, each slot set through its descriptor: the
    dataclass's own ``__init__`` looks ``object.__setattr__`` up again for every field (a view is
    built for every request; this takes a third less). The same object: no ``__post_init__``."""
    names = [field.name for field in fields(cls)]
    if hasattr(cls, "__post_init__") or list(getattr(cls, "__slots__", ())) != names:
        raise TypeError(f"{cls.__name__} is not a plain frozen slotted dataclass")
    setters = {f"_set_{name}": vars(cls)[name].__set__ for name in names}
    source = (
        f"def make({', '.join(names)}, _new=_new, _cls=_cls, {', '.join(f'{k}={k}' for k in setters)}):\n"
        "    o = _new(_cls)\n" + "".join(f"    _set_{name}(o, {name})\n" for name in names) + "    return o\n"
    )
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls, **setters}
    exec(compile(source, f"<{cls.__name__} maker>", "exec"), scope)
    maker: Callable[..., Any] = scope["make"]
    return maker


_make_view = _slotted_maker(ClassicView)
_CARD = DecisionKind.CARD
_ROW = DecisionKind.ROW
# Enum members and their values are slow to look up (a descriptor call each); these are not.
_TARGET_REACHED = Termination.TARGET_REACHED
_HANDS_PLAYED = Termination.HANDS_PLAYED
_TERMINATION_NAMES = {t: t.value for t in Termination}


class Classic(Variant[ClassicState, ClassicConfig]):
    """The classic card game."""

    name: ClassVar[str] = "classic"
    aliases: ClassVar[tuple[str, ...]] = ("6nimmt", "take6")
    config_type: ClassVar[type[Any]] = ClassicConfig
    higher_is_better: ClassVar[bool] = False
    lowest_score: ClassVar[float | None] = 0.0
    listed_deals: ClassVar[int] = 10_000
    """:meth:`chance_outcomes` lists the deals when there are at most this many."""

    def __init__(self, config: ClassicConfig | None = None) -> None:
        super().__init__(config)
        cfg = self.config
        n = cfg.players
        self._bulls = bull_table(cfg.top_card)
        self._deck = tuple(range(1, cfg.top_card + 1))
        self._deck_set = frozenset(self._deck)
        self._deal_size = n * cfg.hand_size + cfg.rows
        self._hand_slices = tuple(
            slice(cfg.rows + seat * cfg.hand_size, cfg.rows + (seat + 1) * cfg.hand_size) for seat in range(n)
        )
        self._row_options: tuple[Action, ...] = tuple(range(cfg.rows))
        # A low card's row decision depends only on its seat: made once, shared by every state.
        self._row_asks = tuple((Decision(seat, _ROW, self._row_options),) for seat in range(n))
        # The core's forced-move policy, applied once: a low card's row is made by the engine
        # only under ForcedMoves.PLAY with a single row (the classic default asks it).
        self._row_forced = self.forced(self._row_asks[0]) is not None
        self._chance_pending = (Decision(CHANCE, DecisionKind.CHANCE, ()),)
        self._drawn: tuple[int, ...] | None = None
        self._professional = cfg.professional
        # Read on every turn: plain attributes are quicker than the config's slots.
        self._capacity = cfg.row_capacity
        self._hand_size = cfg.hand_size
        self._no_piles: tuple[tuple[int, ...], ...] = ((),) * n

    # -- the interface -------------------------------------------------------------------

    def initial_state(self) -> ClassicState:
        n = self.config.players
        return _new(
            ClassicState,
            (DEAL, 0, 0, (), self._no_piles, self._no_piles, (0,) * n, (), 0, None, self._chance_pending),
        )

    def position(
        self,
        rows: Sequence[Sequence[int]],
        hands: Sequence[Sequence[int]],
        *,
        scores: Sequence[int] | None = None,
        hand_no: int = 1,
        turn: int = 0,
    ) -> ClassicState:
        """A state at the start of a turn, set up by hand (for tests, puzzles and examples).

        The cards need not form a complete deal; they must be distinct and in the deck, and
        every seat must hold the same number of cards.
        """
        cfg = self.config
        if len(rows) != cfg.rows or len(hands) != cfg.players:
            raise ConfigError(f"a position needs {cfg.rows} rows and {cfg.players} hands")
        cards = [c for part in (*rows, *hands) for c in part]
        if len(set(cards)) != len(cards) or not set(cards) <= self._deck_set:
            raise ConfigError(f"a position's cards must be distinct and between 1 and {cfg.top_card}")
        if any(not row or len(row) > cfg.row_capacity for row in rows):
            raise ConfigError(f"each row holds 1 to {cfg.row_capacity} cards")
        if len({len(hand) for hand in hands}) != 1 or not hands[0]:
            raise ConfigError("every seat must hold the same, non-zero number of cards")
        held = len(hands[0])
        if held > cfg.hand_size:
            raise ConfigError(f"a hand holds at most {cfg.hand_size} cards, got {held}")
        if turn and turn != cfg.hand_size - held:
            raise ConfigError(f"after {turn} turns a seat holds {cfg.hand_size - turn} cards, not {held}")
        if scores is not None and (len(scores) != cfg.players or min(scores) < 0):
            raise ConfigError(f"scores need one non-negative number per seat ({cfg.players})")
        sorted_hands = tuple(tuple(sorted(hand)) for hand in hands)
        return ClassicState(
            PLAY,
            hand_no,
            cfg.hand_size - held,
            tuple(tuple(row) for row in rows),
            sorted_hands,
            self._no_piles,
            tuple(scores) if scores is not None else (0,) * cfg.players,
            (),
            0,
            None,
            self._card_pending(sorted_hands),
        )

    def from_view(self, view: ClassicView, hands: Sequence[Sequence[int]]) -> ClassicState:
        """The state ``view`` was taken from, given every seat's hand: what a search needs.

        ``hands[view.seat]`` must be the view's hand; the others, as many cards each, must be
        cards the view has not seen (a determinization samples them from ``view.unseen()``). The
        cards no hand holds are the undealt ones. The view must wait for a card or a low card's
        row (its phase ``play`` or ``row``); the state's view for ``view.seat`` is ``view``.
        """
        cfg = self.config
        phase = {"play": PLAY, "row": ROW}.get(view.phase)
        if phase is None:
            raise NotPendingError(
                f"a search starts from a card or row decision, not the {view.phase!r} phase"
            )
        shape = (cfg.players, cfg.rows, cfg.row_capacity, cfg.hand_size, cfg.top_card, cfg.professional)
        seen = (view.players, len(view.rows), view.row_capacity, view.hand_size, view.top_card)
        if (*seen, view.professional) != shape:
            raise ConfigError("the view is of a game with another config")
        held = tuple(tuple(sorted(hand)) for hand in hands)
        if len(held) != cfg.players or held[view.seat] != view.hand:
            raise ConfigError(f"need {cfg.players} hands, seat {view.seat}'s being the view's {view.hand}")
        if any(len(hand) != len(view.hand) for hand in held):
            raise ConfigError(f"every seat holds {len(view.hand)} cards here")
        unseen = set(view.unseen())
        others = [c for seat, hand in enumerate(held) if seat != view.seat for c in hand]
        if len(set(others)) != len(others) or not unseen.issuperset(others):
            raise ConfigError("the other hands must be distinct cards the view has not seen")
        revealed: tuple[tuple[int, int], ...] = ()
        placed = 0
        pending = self._card_pending(held)
        if phase == ROW:
            revealed = view.revealed
            on_table = {c for part in (*view.rows, *view.piles) for c in part}
            placed = next((i for i, (card, _) in enumerate(revealed) if card not in on_table), len(revealed))
            if (
                placed == len(revealed)
                or placement(revealed[placed][0], view.rows, cfg.professional)[0] != LOW
            ):
                raise ConfigError("a row decision waits for a card that fits no row")
            pending = self._row_asks[revealed[placed][1]]
        return _new(
            ClassicState,
            (
                phase,
                view.hand_no,
                view.turn,
                view.rows,
                held,
                view.piles,
                view.scores,
                revealed,
                placed,
                None,
                pending,
            ),
        )

    def chance_outcomes(self, state: ClassicState) -> tuple[tuple[Action, float], ...] | None:
        """Every distinct deal with its probability, when there are at most :attr:`listed_deals`
        (tiny configs); else ``None``. A deal is listed once per state: the rows in order, each
        hand ascending."""
        if state.phase != DEAL:
            raise NotPendingError("no chance decision is pending")
        cfg = self.config
        size = len(self._deck)
        count = perm(size, cfg.rows)
        for seat in range(cfg.players):
            count *= comb(size - cfg.rows - seat * cfg.hand_size, cfg.hand_size)
        if count > self.listed_deals:
            return None
        p = 1.0 / count
        return tuple((deal, p) for deal in _deals(self._deck, cfg.rows, cfg.players, cfg.hand_size))

    def pending(self, state: ClassicState) -> tuple[Decision, ...]:
        return state.pending

    def sample_chance(self, state: ClassicState, chance: SeededChance) -> Action:
        if state.phase != DEAL:
            raise NotPendingError("no chance decision is pending")
        deal = tuple(chance.sample(self._deck, self._deal_size))
        # A deal this engine just drew is valid by construction: applying it (the usual next
        # step) skips the validation an untrusted deal gets. A tuple cannot change, so the
        # identity check is enough.
        self._drawn = deal
        return deal

    def apply(
        self, state: ClassicState, actions: Mapping[int, Action]
    ) -> tuple[ClassicState, tuple[Event, ...]]:
        phase = state.phase
        if phase == PLAY:
            return self._play(state, actions)
        if phase == ROW:
            return self._choose_row(state, actions)
        if phase == DEAL:
            return self._deal(state, actions)
        raise GameOverError("the game is over")

    def view(self, state: ClassicState, seat: int) -> ClassicView:
        cfg = self.config
        if not 0 <= seat < cfg.players:
            raise NotPendingError(f"no seat {seat} in a {cfg.players}-player game")
        phase = state.phase
        mine = None
        for decision in state.pending:
            if decision.seat == seat:
                mine = decision
                break
        # Positional, in the fields' order: keywords cost a third more, on every decision.
        view: ClassicView = _make_view(
            seat,
            cfg.players,
            _PHASES[phase],
            state.hand_no,
            state.turn,
            state.hands[seat],
            state.rows,
            state.piles,
            state.scores,
            state.revealed if phase == ROW else (),
            mine,
            cfg.top_card,
            cfg.row_capacity,
            cfg.hand_size,
            cfg.professional,
        )
        return view

    def outcome(self, state: ClassicState) -> Outcome | None:
        return state.outcome

    def default_action(self, state: ClassicState, decision: Decision) -> Action:
        """The lowest card; for a low card, the row with the fewest bull heads (first on a tie)."""
        if decision.kind == _ROW:
            bulls = self._bulls
            heads = [sum(bulls[c] for c in row) for row in state.rows]
            return heads.index(min(heads))
        return min(decision.options)

    # -- steps ---------------------------------------------------------------------------

    def _card_pending(self, hands: tuple[tuple[int, ...], ...]) -> tuple[Decision, ...]:
        """Every seat's card decision, its options the seat's hand."""
        pending = []
        seat = 0
        for hand in hands:
            pending.append(_new(Decision, (seat, _CARD, hand)))
            seat += 1  # noqa: SIM113 -- a counter is cheaper than enumerate's tuples
        return tuple(pending)

    def _deal(
        self, state: ClassicState, actions: Mapping[int, Action]
    ) -> tuple[ClassicState, tuple[Event, ...]]:
        if len(actions) != 1 or CHANCE not in actions:
            raise _not_pending(CHANCE, actions)
        drawn = self._drawn
        deal = actions[CHANCE]
        cards = drawn if deal is drawn and drawn is not None else self._checked_deal(deal)
        starts = []
        for card in cards[: self.config.rows]:
            starts.append((card,))
        rows = tuple(starts)
        hands = []
        for part in self._hand_slices:
            hand = list(cards[part])
            hand.sort()
            hands.append(tuple(hand))
        hands_t = tuple(hands)
        hand_no = state.hand_no + 1
        pending = self._card_pending(hands_t)
        nxt = _new(
            ClassicState,
            (PLAY, hand_no, 0, rows, hands_t, self._no_piles, state.scores, (), 0, None, pending),
        )
        return nxt, (_new(HandDealt, (hand_no, rows)),)

    def _checked_deal(self, deal: Action) -> tuple[int, ...]:
        """``deal`` if it is a tuple of distinct cards of the deck, else :class:`IllegalActionError`."""
        needed = self._deal_size
        if (
            not isinstance(deal, tuple)
            or len(deal) != needed
            or set(map(type, deal)) != {int}
            or len(cards := frozenset(deal)) != needed
            or not cards <= self._deck_set
        ):
            raise IllegalActionError(
                f"a deal is {needed} distinct cards between 1 and {self.config.top_card}"
            )
        return deal

    def _play(
        self, state: ClassicState, actions: Mapping[int, Action]
    ) -> tuple[ClassicState, tuple[Event, ...]]:
        hands = state.hands
        if len(actions) != len(hands):
            raise NotPendingError(
                f"every seat plays a card this turn: expected seats 0…{len(hands) - 1}, got {sorted(actions)}"
            )
        new_hands = []
        plays = []
        seat = 0
        for hand in hands:
            try:
                card = actions[seat]
                if type(card) is not int:
                    raise ValueError
                i = hand.index(card)
            except (KeyError, ValueError):
                if seat not in actions:
                    raise NotPendingError(f"seat {seat} must play a card this turn") from None
                raise IllegalActionError(
                    f"seat {seat} cannot play {actions[seat]!r}: not in its hand"
                ) from None
            new_hands.append(hand[:i] + hand[i + 1 :])
            plays.append((card, seat))
            seat += 1  # noqa: SIM113 -- a counter is cheaper than enumerate's tuples
        plays.sort()
        revealed = tuple(plays)
        hand_no = state.hand_no
        turn = state.turn
        shown = _new(CardsRevealed, (hand_no, turn + 1, revealed))
        rows = state.rows
        hands = tuple(new_hands)
        piles = state.piles
        scores = state.scores
        if self._professional:
            return self._place_professional(
                hand_no, turn, list(rows), hands, piles, scores, revealed, 0, [shown]
            )
        # A placed card only raises its row's last card, so only the turn's lowest card can be
        # a low card (rule 4), and its owner chooses a row before anything is placed.
        lowest, owner = plays[0]
        for row in rows:
            if row[-1] < lowest:
                return self._place(hand_no, turn, list(rows), hands, piles, scores, revealed, 0, [shown])
        ask = self._row_asks[owner]
        state = _new(ClassicState, (ROW, hand_no, turn, rows, hands, piles, scores, revealed, 0, None, ask))
        if self._row_forced:
            state, chosen = self._choose_row(state, {owner: 0})
            return state, (shown, *chosen)
        return state, (shown,)

    def _choose_row(
        self, state: ClassicState, actions: Mapping[int, Action]
    ) -> tuple[ClassicState, tuple[Event, ...]]:
        placed = state.placed
        revealed = state.revealed
        card, seat = revealed[placed]
        if len(actions) != 1 or seat not in actions:
            raise _not_pending(seat, actions)
        row = actions[seat]
        rows = list(state.rows)
        if type(row) is not int or not 0 <= row < len(rows):
            raise IllegalActionError(f"seat {seat} must choose a row 0…{len(rows) - 1}, got {row!r}")
        taken = rows[row]
        rows[row] = (card,)
        heads, piles, scores = self._take(taken, seat, state.piles, state.scores)
        events: list[Event] = [
            _new(RowChosen, (seat, card, row)),
            _new(CardPlaced, (seat, card, row, False, taken, heads)),
        ]
        place = self._place_professional if self._professional else self._place
        return place(
            state.hand_no, state.turn, rows, state.hands, piles, scores, revealed, placed + 1, events
        )

    def _take(
        self, row: tuple[int, ...], seat: int, piles: tuple[tuple[int, ...], ...], scores: tuple[int, ...]
    ) -> tuple[int, tuple[tuple[int, ...], ...], tuple[int, ...]]:
        """``seat`` takes ``row``: its bull heads, and the piles and scores after the take."""
        bulls = self._bulls
        heads = 0
        for c in row:
            heads += bulls[c]
        new_piles = list(piles)
        new_piles[seat] += row
        new_scores = list(scores)
        new_scores[seat] += heads
        return heads, tuple(new_piles), tuple(new_scores)

    def _place(
        self,
        hand_no: int,
        turn: int,
        rows: list[tuple[int, ...]],
        hands: tuple[tuple[int, ...], ...],
        piles: tuple[tuple[int, ...], ...],
        scores: tuple[int, ...],
        revealed: tuple[tuple[int, int], ...],
        placed: int,
        events: list[Event],
    ) -> tuple[ClassicState, tuple[Event, ...]]:
        """Place the revealed cards from ``placed`` on, lowest first (none of them is a low card).

        Each card goes where :func:`~referee.rules.placement.ascending_run` says; as the cards
        ascend, its answer holds up to the ``limit`` it returns, so a new row is looked up only
        when a card passes the next row's last card.
        """
        capacity = self._capacity
        append = events.append
        best = bound = 0
        for card, seat in revealed[placed:] if placed else revealed:
            if card > bound:
                best, bound = ascending_run(card, rows)
            row = rows[best]
            if len(row) < capacity:
                # Concatenation is twice as fast as unpacking into a new tuple here.
                rows[best] = row + (card,)  # noqa: RUF005
                append(_new(CardPlaced, (seat, card, best, False, (), 0)))
                continue
            # Rule 3: the full row goes to the player; the card starts it anew.
            rows[best] = (card,)
            heads, piles, scores = self._take(row, seat, piles, scores)
            append(_new(CardPlaced, (seat, card, best, False, row, heads)))
        turn += 1
        if turn < self._hand_size:
            pending = self._card_pending(hands)
            state = _new(
                ClassicState, (PLAY, hand_no, turn, tuple(rows), hands, piles, scores, (), 0, None, pending)
            )
            return state, tuple(events)
        return self._end_hand(hand_no, turn, tuple(rows), hands, piles, scores, events)

    def _place_professional(
        self,
        hand_no: int,
        turn: int,
        rows: list[tuple[int, ...]],
        hands: tuple[tuple[int, ...], ...],
        piles: tuple[tuple[int, ...], ...],
        scores: tuple[int, ...],
        revealed: tuple[tuple[int, int], ...],
        placed: int,
        events: list[Event],
    ) -> tuple[ClassicState, tuple[Event, ...]]:
        """:meth:`_place` when a card may also go left of a row: the nearest row end wins."""
        capacity = self._capacity
        append = events.append
        for index in range(placed, len(revealed)):
            card, seat = revealed[index]
            best, left = placement(card, rows, True)
            if best == LOW:
                state = _new(
                    ClassicState,
                    (
                        ROW,
                        hand_no,
                        turn,
                        tuple(rows),
                        hands,
                        piles,
                        scores,
                        revealed,
                        index,
                        None,
                        self._row_asks[seat],
                    ),
                )
                if self._row_forced:
                    state, chosen = self._choose_row(state, {seat: 0})
                    return state, (*events, *chosen)
                return state, tuple(events)
            row = rows[best]
            if len(row) < capacity:
                rows[best] = (card, *row) if left else (*row, card)
                append(_new(CardPlaced, (seat, card, best, left, (), 0)))
                continue
            rows[best] = (card,)
            heads, piles, scores = self._take(row, seat, piles, scores)
            append(_new(CardPlaced, (seat, card, best, left, row, heads)))
        return self._end_turn(hand_no, turn, rows, hands, piles, scores, events)

    def _end_turn(
        self,
        hand_no: int,
        turn: int,
        rows: list[tuple[int, ...]],
        hands: tuple[tuple[int, ...], ...],
        piles: tuple[tuple[int, ...], ...],
        scores: tuple[int, ...],
        events: list[Event],
    ) -> tuple[ClassicState, tuple[Event, ...]]:
        turn += 1
        if turn < self._hand_size:
            state = _new(
                ClassicState,
                (
                    PLAY,
                    hand_no,
                    turn,
                    tuple(rows),
                    hands,
                    piles,
                    scores,
                    (),
                    0,
                    None,
                    self._card_pending(hands),
                ),
            )
            return state, tuple(events)
        return self._end_hand(hand_no, turn, tuple(rows), hands, piles, scores, events)

    def _end_hand(
        self,
        hand_no: int,
        turn: int,
        rows: tuple[tuple[int, ...], ...],
        hands: tuple[tuple[int, ...], ...],
        piles: tuple[tuple[int, ...], ...],
        scores: tuple[int, ...],
        events: list[Event],
    ) -> tuple[ClassicState, tuple[Event, ...]]:
        cfg = self.config
        bulls = self._bulls
        hand_bulls = []
        for pile in piles:
            heads = 0
            for card in pile:
                heads += bulls[card]
            hand_bulls.append(heads)
        events.append(_new(HandScored, (hand_no, tuple(hand_bulls), scores)))
        if cfg.target is not None and max(scores) >= cfg.target:
            termination = _TARGET_REACHED
        elif cfg.hands is not None and hand_no >= cfg.hands:
            termination = _HANDS_PLAYED
        else:
            state = _new(
                ClassicState,
                (DEAL, hand_no, turn, rows, hands, piles, scores, (), 0, None, self._chance_pending),
            )
            return state, tuple(events)
        outcome = Outcome(scores, shared_ranks(scores, higher_is_better=False), termination)
        events.append(_new(GameEnded, (scores, outcome.ranks, _TERMINATION_NAMES[termination])))
        state = _new(ClassicState, (OVER, hand_no, turn, rows, hands, piles, scores, (), 0, outcome, ()))
        return state, tuple(events)


def _deals(deck: tuple[int, ...], rows: int, players: int, size: int) -> Iterator[tuple[int, ...]]:
    """Every distinct deal: ``rows`` row cards in order, then each seat's ``size`` cards ascending."""

    def hands(rest: tuple[int, ...], seats: int) -> Iterator[tuple[int, ...]]:
        if not seats:
            yield ()
            return
        for hand in combinations(rest, size):
            left = tuple(c for c in rest if c not in hand)
            for later in hands(left, seats - 1):
                yield hand + later

    for starts in permutations(deck, rows):
        rest = tuple(c for c in deck if c not in starts)
        for dealt in hands(rest, players):
            yield starts + dealt


def _not_pending(seat: int, actions: Mapping[int, Action]) -> NotPendingError:
    """The error for actions that are not exactly the one pending seat's."""
    who = "chance" if seat == CHANCE else f"seat {seat}"
    return NotPendingError(f"only {who} is pending, got actions for {sorted(actions)}")
