"""6 nimmt! 25th-anniversary variant (``anniversary``): the classic rules plus 28 special cards.

2–8 players, each dealt 12 number cards and 3 special cards (seven kinds × 4, see
:class:`~games.anniversary.rules.anniversary_cards.Special`); a game is two rounds and the fewest bull
heads win. A turn is classic's: everyone plays a number card, they are revealed together and
placed lowest first by rules 1–4. At its own placement, after the reveal, a card's owner may play
special cards (an ``ACTION_CARD`` decision: ``()`` to pass, or ``(kind, *targets)``); whoever
takes a row may then play "Negative = Positive" on a taken card and swap one special card for the
special deck's top card (another ``ACTION_CARD`` decision; a swap is ``(0, kind)``). Deals and
draws are chance steps, so every card that moves is in the transcript.

Where the published text is silent the engine follows a config value; each one is written down
as an assumption in ``docs/rules.md`` ("Anniversary variant").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from games.anniversary.rules.anniversary_cards import (
    KINDS,
    PASS,
    SWAP,
    Special,
    Table,
    capacity_of,
    insert_position,
    open_rows,
    row_heads,
    set_aside,
    special_options,
    take_options,
    target_row,
)
from games.anniversary.rules.anniversary_view import (
    AnniversaryView,
    BlocksRemoved,
    CardPlaced,
    CardShifted,
    CardsRevealed,
    CardsSetAside,
    GameEnded,
    RoundDealt,
    RoundScored,
    RowChosen,
    SpecialDrawn,
    SpecialPlayed,
    SpecialsReshuffled,
    SpecialSwapped,
)
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
from referee.rules.errors import ConfigError, GameOverError, IllegalActionError, NotPendingError

__all__ = [
    "Anniversary",
    "AnniversaryConfig",
    "AnniversaryState",
    "AnniversaryView",
    "BlocksRemoved",
    "CardPlaced",
    "CardShifted",
    "CardsRevealed",
    "CardsSetAside",
    "GameEnded",
    "RoundDealt",
    "RoundScored",
    "RowChosen",
    "Special",
    "SpecialDrawn",
    "SpecialPlayed",
    "SpecialSwapped",
    "SpecialsReshuffled",
]

DEAL, PLAY, SPECIAL, ROW, TAKE, DRAW, OVER = range(7)
PHASES = ("deal", "play", "special", "row", "take", "draw", "over")

FIFTH_ROW_ENDS = ("round", "next_take")
"""``round``: a 5th row stays until the round ends; ``next_take``: the next take closes a row."""
BLOCK_ENDS = ("take", "turn", "round")
"""When "Block" cards leave the table: once a row is taken, at the end of the turn, of the round."""

_SEVEN = int(Special.SEVEN_NIMMT)
_BLOCK = int(Special.BLOCK)
_TAKEN_NEG_POS = 1
_TAKEN_SWAPPED = 2
"""Bits of :attr:`AnniversaryState.take_done`: what the taker did with this take already."""


@dataclass(frozen=True, slots=True)
class AnniversaryConfig:
    """The numbers of an Anniversary game; defaults are the edition's or the project's assumptions."""

    players: int = bounded(4, 2, 8, "seats at the table (2–8 with the special cards)")
    hand_size: int = bounded(12, 1, 50, "number cards dealt to each seat per round")
    rows: int = bounded(4, 1, 10, "rows on the table at the start of a round")
    row_capacity: int = bounded(5, 1, 20, "cards a row holds; the next one takes it (rule 3)")
    deck: int = bounded(104, 5, 1000, "highest number card; cards run 1 … deck")
    rounds: int = bounded(2, 1, 100, "rounds in a game")
    specials_each: int = bounded(3, 0, 20, "special cards dealt to each seat")
    fifth_row_cards: int = bounded(4, 0, 99, "'5th Row' special cards")
    seven_nimmt_cards: int = bounded(4, 0, 99, "'7 nimmt!' special cards")
    insert_cards: int = bounded(4, 0, 99, "'Insert' special cards")
    replace_cards: int = bounded(4, 0, 99, "'Replace' special cards")
    shift_cards: int = bounded(4, 0, 99, "'Shift' special cards")
    negative_positive_cards: int = bounded(4, 0, 99, "'Negative = Positive' special cards")
    block_cards: int = bounded(4, 0, 99, "'Block' special cards")
    max_rows: int = bounded(5, 1, 20, "'5th Row' is playable only while fewer rows lie on the table")
    specials_per_turn: int = bounded(1, 1, 10, "special cards a seat may play per turn (assumption)")
    swap: bool = bounded(True, doc="whoever takes a row may swap one special card for the deck's top card")
    reshuffle_specials: bool = bounded(
        False, doc="the face-up special cards become the deck when it runs out (assumption: they stay out)"
    )
    keep_specials: bool = bounded(
        False, doc="unplayed special cards stay in hand for the next round (assumption: re-dealt)"
    )
    fifth_row_end: str = bounded(
        "round", doc="when a 5th row goes: 'round' (stays) or 'next_take' (the next take closes it)"
    )
    block_end: str = bounded("take", doc="when 'Block' cards leave the table: 'take', 'turn' or 'round'")
    positive_row_first: bool = bounded(
        True, doc="'Negative = Positive' cancels the other taken cards first, then earlier ones"
    )

    def __post_init__(self) -> None:
        check_bounds(self)
        for name, choices in (("fifth_row_end", FIFTH_ROW_ENDS), ("block_end", BLOCK_ENDS)):
            value = getattr(self, name)
            if value not in choices:
                raise ConfigError(
                    f"{option(name)} must be one of {', '.join(choices)}, got {value!r}"
                )
        needed = self.players * self.hand_size + self.rows
        if needed > self.deck:
            raise ConfigError(
                f"{self.players} players × {self.hand_size} cards + {self.rows} rows"
                f" need {needed} number cards, the deck has {self.deck} ({option('deck')})"
            )
        dealt = self.players * self.specials_each
        if dealt > sum(self.special_counts):
            raise ConfigError(
                f"{self.players} players × {self.specials_each} special cards need"
                f" {dealt}, there are {sum(self.special_counts)} ({option('specials_each')})"
            )
        if self.max_rows < self.rows:
            raise ConfigError(
                f"{option('max_rows')} must be at least rows ({self.rows}), got {self.max_rows}"
            )

    @property
    def special_counts(self) -> tuple[int, ...]:
        """How many special cards of each kind, in :class:`Special` order."""
        return (
            self.fifth_row_cards,
            self.seven_nimmt_cards,
            self.insert_cards,
            self.replace_cards,
            self.shift_cards,
            self.negative_positive_cards,
            self.block_cards,
        )


class AnniversaryState(NamedTuple):
    """An immutable Anniversary game state."""

    phase: int
    round_no: int
    """Rounds dealt so far (the current one is number ``round_no``, counting from 1)."""
    turn: int
    """Turns completed in the current round."""
    rows: tuple[tuple[int, ...], ...]
    blocked: tuple[bool, ...]
    sevens: tuple[bool, ...]
    hands: tuple[tuple[int, ...], ...]
    """Each seat's number cards, ascending."""
    specials: tuple[tuple[int, ...], ...]
    """Each seat's special cards (kinds), ascending."""
    deck: tuple[int, ...]
    """Face-down special cards left, as a count per kind (the pile's order is chance's)."""
    discard: tuple[int, ...]
    """Special cards face up beside the deck, in the order they went there."""
    piles: tuple[tuple[int, ...], ...]
    """Number cards each seat took this round and still holds."""
    set_aside: tuple[int, ...]
    """Cards "Negative = Positive" took out of piles this round."""
    scores: tuple[int, ...]
    """Bull heads per seat over the game so far (this round's pile included)."""
    revealed: tuple[tuple[int, int], ...]
    """This turn's ``(card, seat)`` pairs, ascending by card: the order of placement."""
    placed: int
    """How many of ``revealed`` are placed already; ``revealed[placed]`` is being placed."""
    playing: int
    """The number card placed for ``revealed[placed]`` ("Replace" may have changed it)."""
    played: tuple[int, ...]
    """Special cards each seat played this turn."""
    taken: tuple[int, ...]
    """In the ``take`` phase: the cards just taken."""
    take_done: int
    """In the ``take`` phase: what the taker did already (bits: negative = positive, swap)."""
    outcome: Outcome | None
    pending: tuple[Decision, ...]
    """The decisions this state waits for (computed when the state is made)."""

    @property
    def seat(self) -> int:
        """The seat whose card is being placed."""
        return self.revealed[self.placed][1]

    @property
    def table(self) -> Table:
        """The rows as the placement rules see them."""
        return Table(self.rows, self.blocked, self.sevens)


_CHANCE_PENDING = (Decision(CHANCE, DecisionKind.CHANCE, ()),)


class Anniversary(Variant[AnniversaryState, AnniversaryConfig]):
    """The 25th-anniversary edition's game with the special cards."""

    name: ClassVar[str] = "anniversary"
    aliases: ClassVar[tuple[str, ...]] = ("25th-anniversary", "jubilaeum")
    config_type: ClassVar[type[Any]] = AnniversaryConfig
    higher_is_better: ClassVar[bool] = False

    def __init__(self, config: AnniversaryConfig | None = None) -> None:
        super().__init__(config)
        cfg = self.config
        self._bulls = bull_table(cfg.deck)
        self._numbers = tuple(range(1, cfg.deck + 1))
        self._full_deck = cfg.special_counts
        self._no_piles: tuple[tuple[int, ...], ...] = ((),) * cfg.players

    # -- the interface -------------------------------------------------------------------

    def initial_state(self) -> AnniversaryState:
        n = self.config.players
        return AnniversaryState(
            DEAL, 0, 0, (), (), (), self._no_piles, self._no_piles, self._full_deck, (),
            self._no_piles, (), (0,) * n, (), 0, 0, (0,) * n, (), 0, None, _CHANCE_PENDING,
        )  # fmt: skip

    def position(
        self,
        rows: Sequence[Sequence[int]],
        hands: Sequence[Sequence[int]],
        specials: Sequence[Sequence[int]],
        *,
        piles: Sequence[Sequence[int]] | None = None,
        deck: Sequence[int] | None = None,
        blocked: Sequence[bool] | None = None,
        sevens: Sequence[bool] | None = None,
        round_no: int = 1,
    ) -> AnniversaryState:
        """A state at the start of a turn, set up by hand (for tests, puzzles and examples).

        ``specials`` are kinds per seat; ``deck`` the face-down special cards per kind (by
        default the box's cards that no seat holds); ``piles`` the cards each seat took already.
        """
        cfg = self.config
        n = cfg.players
        if len(hands) != n or len(specials) != n or not rows or len(rows) > cfg.max_rows:
            raise ConfigError(f"a position needs 1 to {cfg.max_rows} rows, and {n} hands and special hands")
        pile_parts = [tuple(p) for p in piles] if piles is not None else [()] * n
        cards = [c for part in (*rows, *hands, *pile_parts) for c in part]
        if len(set(cards)) != len(cards) or not set(cards) <= set(self._numbers):
            raise ConfigError(f"a position's cards must be distinct and between 1 and {cfg.deck}")
        if len({len(hand) for hand in hands}) != 1 or not hands[0] or len(hands[0]) > cfg.hand_size:
            raise ConfigError(f"every seat must hold the same number of cards, 1 to {cfg.hand_size}")
        if any(not row or len(row) > cfg.row_capacity + 1 for row in rows):
            raise ConfigError(f"each row holds 1 to {cfg.row_capacity} cards (one more with '7 nimmt!')")
        if any(k not in KINDS for part in specials for k in part):
            raise ConfigError(f"special cards are kinds {KINDS[0]}…{KINDS[-1]}")
        held = [sum(k == kind for part in specials for k in part) for kind in KINDS]
        left = tuple(deck) if deck is not None else _minus(self._full_deck, held)
        if len(left) != len(KINDS) or min(left) < 0:
            raise ConfigError(f"the special deck needs a count per kind ({len(KINDS)}), none below 0")
        scores = tuple(sum(self._bulls[c] for c in pile) for pile in pile_parts)
        hands_t = tuple(tuple(sorted(hand)) for hand in hands)
        state = AnniversaryState(
            PLAY, round_no, cfg.hand_size - len(hands[0]), tuple(tuple(r) for r in rows),
            tuple(blocked) if blocked is not None else (False,) * len(rows),
            tuple(sevens) if sevens is not None else (False,) * len(rows),
            hands_t, tuple(tuple(sorted(s)) for s in specials), left, (), tuple(pile_parts), (),
            scores, (), 0, 0, (0,) * n, (), 0, None, (),
        )  # fmt: skip
        return state._replace(pending=self._pending(state))

    def pending(self, state: AnniversaryState) -> tuple[Decision, ...]:
        return state.pending

    def sample_chance(self, state: AnniversaryState, chance: SeededChance) -> Action:
        cfg = self.config
        if state.phase == DEAL:
            numbers = chance.sample(self._numbers, cfg.rows + cfg.players * cfg.hand_size)
            if not self._deals_specials(state):
                return tuple(numbers)
            kinds = chance.sample(_as_list(self._full_deck), cfg.players * cfg.specials_each)
            return (*numbers, *kinds)
        if state.phase == DRAW:
            pool = state.deck if any(state.deck) else _counts(state.discard)
            return int(chance.sample(_as_list(pool), 1)[0])
        raise NotPendingError("no chance decision is pending")

    def apply(
        self, state: AnniversaryState, actions: Mapping[int, Action]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        phase = state.phase
        if phase == OVER:
            raise GameOverError("the game is over")
        if phase == PLAY:
            return self._play(state, actions)
        (decision,) = state.pending
        if len(actions) != 1 or decision.seat not in actions:
            who = "chance" if decision.seat == CHANCE else f"seat {decision.seat}"
            raise NotPendingError(f"only {who} is pending, got actions for {sorted(actions)}")
        action = actions[decision.seat]
        if phase == DEAL:
            return self._deal(state, action)
        if phase == DRAW:
            return self._draw(state, action)
        if action not in decision.options:
            raise IllegalActionError(
                f"seat {decision.seat} cannot answer {action!r} to its {PHASES[phase]} decision"
                f" (legal: {list(decision.options)})"
            )
        events: list[Event] = []
        if phase == SPECIAL:
            assert isinstance(action, tuple)
            return self._special(state, action, events)
        if phase == ROW:
            assert isinstance(action, int)
            events.append(RowChosen(state.seat, state.playing, action))
            return self._take(state, action, events)
        assert isinstance(action, tuple)
        return self._after_take(state, action, events)

    def view(self, state: AnniversaryState, seat: int) -> AnniversaryView:
        cfg = self.config
        if not 0 <= seat < cfg.players:
            raise NotPendingError(f"no seat {seat} in a {cfg.players}-player game")
        mine = [d for d in state.pending if d.seat == seat]
        placing = state.phase in (SPECIAL, ROW, TAKE, DRAW)
        return AnniversaryView(
            seat=seat,
            players=cfg.players,
            phase=PHASES[state.phase],
            round_no=state.round_no,
            turn=state.turn,
            hand=state.hands[seat],
            specials=state.specials[seat],
            special_counts=tuple(len(s) for s in state.specials),
            rows=state.rows,
            blocked=state.blocked,
            sevens=state.sevens,
            piles=state.piles,
            set_aside=state.set_aside,
            discard=state.discard,
            deck_size=sum(state.deck),
            scores=state.scores,
            revealed=state.revealed if placing else (),
            placing=(state.playing, state.seat) if placing else None,
            taken=state.taken if state.phase in (TAKE, DRAW) else (),
            played=state.played,
            decision=mine[0] if mine else None,
            row_capacity=cfg.row_capacity,
            hand_size=cfg.hand_size,
            max_rows=cfg.max_rows,
            specials_per_turn=cfg.specials_per_turn,
            top_card=cfg.deck,
        )

    def outcome(self, state: AnniversaryState) -> Outcome | None:
        return state.outcome

    def default_action(self, state: AnniversaryState, decision: Decision) -> Action:
        """The lowest card; for a low card the open row with the fewest bull heads; no special card."""
        if decision.kind is DecisionKind.ROW:
            rows = [r for r in decision.options if isinstance(r, int)]
            return min(rows, key=lambda r: (row_heads(state.rows[r]), r))
        if decision.kind is DecisionKind.ACTION_CARD:
            return PASS
        return min(o for o in decision.options if isinstance(o, int))

    # -- decisions -----------------------------------------------------------------------

    def _pending(self, state: AnniversaryState) -> tuple[Decision, ...]:
        """The decisions of a state whose fields are final (``pending`` aside)."""
        phase = state.phase
        if phase in (DEAL, DRAW):
            return _CHANCE_PENDING
        if phase == PLAY:
            return tuple(Decision(seat, DecisionKind.CARD, hand) for seat, hand in enumerate(state.hands))
        if phase == SPECIAL:
            return (Decision(state.seat, DecisionKind.ACTION_CARD, (PASS, *self._special_options(state))),)
        if phase == ROW:
            return (Decision(state.seat, DecisionKind.ROW, open_rows(state.table)),)
        if phase == TAKE:
            return (Decision(state.seat, DecisionKind.ACTION_CARD, (PASS, *self._take_options(state))),)
        return ()

    def _special_options(self, state: AnniversaryState) -> tuple[tuple[int, ...], ...]:
        seat = state.seat
        if state.played[seat] >= self.config.specials_per_turn or not state.specials[seat]:
            return ()
        return special_options(
            state.table,
            state.playing,
            state.hands[seat],
            state.specials[seat],
            capacity=self.config.row_capacity,
            max_rows=self.config.max_rows,
        )

    def _take_options(self, state: AnniversaryState) -> tuple[tuple[int, ...], ...]:
        cfg = self.config
        seat = state.seat
        held = state.specials[seat]
        can_draw = any(state.deck) or (cfg.reshuffle_specials and bool(state.discard))
        return take_options(
            state.taken,
            held,
            negative_positive=not state.take_done & _TAKEN_NEG_POS
            and state.played[seat] < cfg.specials_per_turn,
            swap=cfg.swap and bool(held) and can_draw and not state.take_done & _TAKEN_SWAPPED,
        )

    def _made(
        self, state: AnniversaryState, events: list[Event]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        return state._replace(pending=self._pending(state)), tuple(events)

    # -- chance --------------------------------------------------------------------------

    def _deals_specials(self, state: AnniversaryState) -> bool:
        return state.round_no == 0 or not self.config.keep_specials

    def _deal(self, state: AnniversaryState, deal: Action) -> tuple[AnniversaryState, tuple[Event, ...]]:
        cfg = self.config
        n = cfg.players
        numbers = cfg.rows + n * cfg.hand_size
        with_specials = self._deals_specials(state)
        size = numbers + (n * cfg.specials_each if with_specials else 0)
        if (
            not isinstance(deal, tuple)
            or len(deal) != size
            or any(type(c) is not int for c in deal)
            or len(set(deal[:numbers])) != numbers
            or not set(deal[:numbers]) <= set(self._numbers)
        ):
            raise IllegalActionError(
                f"a deal is {numbers} distinct number cards 1…{cfg.deck}"
                + (f" then {size - numbers} special card kinds" if with_specials else "")
            )
        rows = tuple((c,) for c in deal[: cfg.rows])
        each = cfg.hand_size
        hands = tuple(tuple(sorted(deal[cfg.rows + s * each : cfg.rows + (s + 1) * each])) for s in range(n))
        if with_specials:
            kinds = deal[numbers:]
            if not all(1 <= k <= len(KINDS) for k in kinds) or not _fits(_counts(kinds), self._full_deck):
                raise IllegalActionError(f"the dealt special cards {kinds} are not in the box")
            each = cfg.specials_each
            specials = tuple(tuple(sorted(kinds[s * each : (s + 1) * each])) for s in range(n))
            deck = _minus(self._full_deck, _counts(kinds))
            discard: tuple[int, ...] = ()
        else:
            specials, deck, discard = state.specials, state.deck, state.discard
        round_no = state.round_no + 1
        nxt = AnniversaryState(
            PLAY, round_no, 0, rows, (False,) * cfg.rows, (False,) * cfg.rows, hands, specials, deck,
            discard, self._no_piles, (), state.scores, (), 0, 0, (0,) * n, (), 0, None, (),
        )  # fmt: skip
        return self._made(nxt, [RoundDealt(round_no, rows, tuple(len(s) for s in specials))])

    def _draw(self, state: AnniversaryState, kind: Action) -> tuple[AnniversaryState, tuple[Event, ...]]:
        events: list[Event] = []
        deck, discard = state.deck, state.discard
        if not any(deck):
            deck, discard = _counts(discard), ()
            events.append(SpecialsReshuffled(sum(deck)))
        if type(kind) is not int or not 1 <= kind <= len(KINDS) or deck[kind - 1] == 0:
            raise IllegalActionError(f"the special deck holds no card of kind {kind!r}")
        seat = state.seat
        specials = _with(state.specials, seat, tuple(sorted((*state.specials[seat], kind))))
        events.append(SpecialDrawn(seat))
        state = state._replace(
            phase=TAKE, specials=specials, deck=_minus(deck, _counts((kind,))), discard=discard
        )
        return self._ask_after_take(state, events)

    # -- a turn --------------------------------------------------------------------------

    def _play(
        self, state: AnniversaryState, actions: Mapping[int, Action]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        n = self.config.players
        if sorted(actions) != list(range(n)):
            raise NotPendingError(
                f"every seat plays a card this turn: expected seats 0…{n - 1}, got {sorted(actions)}"
            )
        hands = []
        plays = []
        for seat, hand in enumerate(state.hands):
            card = actions[seat]
            if type(card) is not int or card not in hand:
                raise IllegalActionError(f"seat {seat} cannot play {card!r}: not in its hand")
            hands.append(tuple(c for c in hand if c != card))
            plays.append((card, seat))
        plays.sort()
        revealed = tuple(plays)
        state = state._replace(
            hands=tuple(hands), revealed=revealed, placed=0, playing=revealed[0][0], played=(0,) * n
        )
        return self._ask_or_place(state, [CardsRevealed(state.round_no, state.turn + 1, revealed)])

    def _ask_or_place(
        self, state: AnniversaryState, events: list[Event]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        """The card being placed: its owner's special cards first, if one has a use now."""
        if self._special_options(state):
            return self._made(state._replace(phase=SPECIAL), events)
        return self._place(state, events)

    def _special(
        self, state: AnniversaryState, action: tuple[int, ...], events: list[Event]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        if not action:
            return self._place(state, events)
        kind, *targets = action
        seat, card = state.seat, state.playing
        events.append(SpecialPlayed(seat, kind, tuple(targets)))
        held = list(state.specials[seat])
        held.remove(kind)
        state = state._replace(
            specials=_with(state.specials, seat, tuple(held)),
            played=_with(state.played, seat, state.played[seat] + 1),
        )
        rows = list(state.rows)
        if kind == Special.FIFTH_ROW:
            state = state._replace(
                rows=(*rows, (card,)),
                blocked=(*state.blocked, False),
                sevens=(*state.sevens, False),
                discard=(*state.discard, kind),
            )
            events.append(CardPlaced(seat, card, len(rows), 0, (), 0, False))
            return self._next_card(state, events)
        if kind == Special.SEVEN_NIMMT:
            row = target_row(state.table, card)
            rows[row] += (card,)
            state = state._replace(rows=tuple(rows), sevens=_with(state.sevens, row, True))
            events.append(CardPlaced(seat, card, row, len(rows[row]) - 1, (), 0, False))
            return self._next_card(state, events)
        if kind == Special.INSERT:
            (row,) = targets
            position = insert_position(rows[row], card)
            rows[row] = (*rows[row][:position], card, *rows[row][position:])
            state = state._replace(rows=tuple(rows), discard=(*state.discard, kind))
            events.append(CardPlaced(seat, card, row, position, (), 0, False))
            return self._next_card(state, events)
        state = state._replace(discard=(*state.discard, kind)) if kind != Special.BLOCK else state
        if kind == Special.REPLACE:
            (other,) = targets
            hand = tuple(sorted((*(c for c in state.hands[seat] if c != other), card)))
            state = state._replace(hands=_with(state.hands, seat, hand), playing=other)
        elif kind == Special.SHIFT:
            moved, row = targets
            source = next(r for r, cards in enumerate(rows) if moved in cards)
            rows[source] = tuple(c for c in rows[source] if c != moved)
            position = insert_position(rows[row], moved)
            rows[row] = (*rows[row][:position], moved, *rows[row][position:])
            state = state._replace(rows=tuple(rows))
            events.append(CardShifted(moved, source, row, position))
        else:  # Block
            (row,) = targets
            state = state._replace(blocked=_with(state.blocked, row, True))
        return self._ask_or_place(state, events)

    def _place(
        self, state: AnniversaryState, events: list[Event]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        """Rules 1–4 for the card being placed, on the open rows."""
        card, seat = state.playing, state.seat
        row = target_row(state.table, card)
        if row < 0:
            return self._made(state._replace(phase=ROW), events)
        if len(state.rows[row]) >= capacity_of(state.table, row, self.config.row_capacity):
            return self._take(state, row, events)
        rows = list(state.rows)
        rows[row] += (card,)
        events.append(CardPlaced(seat, card, row, len(rows[row]) - 1, (), 0, False))
        return self._next_card(state._replace(rows=tuple(rows)), events)

    def _take(
        self, state: AnniversaryState, row: int, events: list[Event]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        """The card's owner takes ``row``; the card starts it anew (or leaves with it: a 5th row's end)."""
        cfg = self.config
        card, seat = state.playing, state.seat
        rows, blocked, sevens = list(state.rows), list(state.blocked), list(state.sevens)
        discard = list(state.discard)
        if sevens[row]:
            discard.append(_SEVEN)
        # The next take closes a 5th row, unless it would leave no open row (Blocks lie on the rest).
        closed = cfg.fifth_row_end == "next_take" and len(rows) > cfg.rows and len(open_rows(state.table)) > 1
        if closed:
            taken = (*rows[row], card)
            del rows[row], blocked[row], sevens[row]
        else:
            taken = rows[row]
            rows[row] = (card,)
            sevens[row] = False
        heads = sum(self._bulls[c] for c in taken)
        events.append(CardPlaced(seat, card, row, 0, taken, heads, closed))
        if any(blocked) and cfg.block_end == "take":
            events.append(BlocksRemoved(tuple(r for r, b in enumerate(blocked) if b)))
            discard.extend(_BLOCK for b in blocked if b)
            blocked = [False] * len(blocked)
        state = state._replace(
            phase=TAKE,
            rows=tuple(rows),
            blocked=tuple(blocked),
            sevens=tuple(sevens),
            discard=tuple(discard),
            piles=_with(state.piles, seat, state.piles[seat] + taken),
            scores=_with(state.scores, seat, state.scores[seat] + heads),
            taken=taken,
            take_done=0,
        )
        return self._ask_after_take(state, events)

    def _ask_after_take(
        self, state: AnniversaryState, events: list[Event]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        if self._take_options(state):
            return self._made(state._replace(phase=TAKE), events)
        return self._next_card(state, events)

    def _after_take(
        self, state: AnniversaryState, action: tuple[int, ...], events: list[Event]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        if not action:
            return self._next_card(state, events)
        code, target = action
        seat = state.seat
        held = list(state.specials[seat])
        held.remove(code if code != SWAP else target)
        specials = _with(state.specials, seat, tuple(held))
        if code == SWAP:
            events.append(SpecialSwapped(seat, target))
            state = state._replace(
                phase=DRAW,
                specials=specials,
                discard=(*state.discard, target),
                take_done=state.take_done | _TAKEN_SWAPPED,
            )
            return self._made(state, events)
        events.append(SpecialPlayed(seat, code, (target,)))
        pile = state.piles[seat]
        earlier = pile[: len(pile) - len(state.taken)]
        removed = set_aside(target, state.taken, earlier, row_first=self.config.positive_row_first)
        heads = sum(self._bulls[c] for c in removed)
        events.append(CardsSetAside(seat, target, removed, heads))
        state = state._replace(
            specials=specials,
            discard=(*state.discard, code),
            played=_with(state.played, seat, state.played[seat] + 1),
            piles=_with(state.piles, seat, tuple(c for c in pile if c not in removed)),
            set_aside=(*state.set_aside, *removed),
            scores=_with(state.scores, seat, state.scores[seat] - heads),
            take_done=state.take_done | _TAKEN_NEG_POS,
        )
        return self._ask_after_take(state, events)

    def _next_card(
        self, state: AnniversaryState, events: list[Event]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        placed = state.placed + 1
        if placed < len(state.revealed):
            state = state._replace(placed=placed, playing=state.revealed[placed][0], taken=(), take_done=0)
            return self._ask_or_place(state, events)
        return self._end_turn(state, events)

    def _end_turn(
        self, state: AnniversaryState, events: list[Event]
    ) -> tuple[AnniversaryState, tuple[Event, ...]]:
        cfg = self.config
        blocked, discard = state.blocked, state.discard
        turn = state.turn + 1
        ending = turn >= cfg.hand_size
        if any(blocked) and (cfg.block_end == "turn" or ending):
            events.append(BlocksRemoved(tuple(r for r, b in enumerate(blocked) if b)))
            discard = (*discard, *(_BLOCK for b in blocked if b))
            blocked = (False,) * len(blocked)
        sevens = state.sevens
        if ending:
            discard = (*discard, *(_SEVEN for s in sevens if s))
            sevens = (False,) * len(sevens)
        state = state._replace(
            phase=PLAY, turn=turn, blocked=blocked, sevens=sevens, discard=discard, revealed=(), placed=0,
            playing=0, taken=(), take_done=0,
        )  # fmt: skip
        if not ending:
            return self._made(state, events)
        bulls = tuple(sum(self._bulls[c] for c in pile) for pile in state.piles)
        events.append(RoundScored(state.round_no, bulls, state.scores))
        if state.round_no < cfg.rounds:
            return self._made(state._replace(phase=DEAL), events)
        scores = state.scores
        outcome = Outcome(scores, shared_ranks(scores, higher_is_better=False), Termination.HANDS_PLAYED)
        events.append(GameEnded(scores, outcome.ranks, Termination.HANDS_PLAYED.value))
        return self._made(state._replace(phase=OVER, outcome=outcome), events)


def _with(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    """``values`` with ``values[index]`` replaced."""
    return (*values[:index], value, *values[index + 1 :])


def _counts(kinds: Sequence[int]) -> tuple[int, ...]:
    """A count per kind of a sequence of special card kinds (out-of-range kinds are dropped)."""
    return tuple(sum(1 for k in kinds if k == kind) for kind in KINDS)


def _as_list(counts: Sequence[int]) -> list[int]:
    """The kinds of a count per kind, ascending: what chance draws from."""
    return [int(kind) for kind, count in zip(KINDS, counts, strict=True) for _ in range(count)]


def _fits(part: Sequence[int], whole: Sequence[int]) -> bool:
    return all(p <= w for p, w in zip(part, whole, strict=True))


def _minus(whole: Sequence[int], part: Sequence[int]) -> tuple[int, ...]:
    return tuple(w - p for w, p in zip(whole, part, strict=True))
