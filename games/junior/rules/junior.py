"""6 nimmt! Junior: the basic game, the advanced game (most or fewest cards) and the experts' game.

One base holds the shared mechanics (rows of cow cards, turns clockwise from seat 0, drawing,
collecting, the end when the pile and the hands are used up); each mode is a small subclass
that fills in a few hooks: how a turn begins, what a drawn card does, which rows a card may
go to, what placing it collects. The values on the table (configs, state, events, views) live
in :mod:`games.junior.rules.junior_table` and are re-exported here; the deck is data, loaded by
:mod:`games.junior.rules.junior_deck`.

- Basic: chance turns the top card over for the seat to move; the seat chooses the row.
- Advanced: a hand of three; the seat plays ``(card, row)`` and then draws (chance).
- Experts: a hand of three, rows started with one card each; the seat plays a card, then
  chooses a row whose last card shares a cow with it, or, where none does, the row to collect.

Open points and the project's answers (see RULES-NOTES.md):

- Chance is one decision per draw (and one for the deal): the pile is an unordered set in the
  state, and the card drawn is chosen when it is drawn, so no order exists to leak.
- A decision with exactly one legal option is not asked; the engine makes it, as it makes
  everything else the rules force (its events are the same as if the seat had chosen): the
  core's forced-move policy ``ForcedMoves.PLAY``, applied by ``Variant.forced``.
- Rule 2 applies when the card adds no new cow to *any* row (every row already shows every
  cow on it); Ole's example rules out the other reading, "each of its cows is in some row".
- Collected cards lie face down, but each was face up in a row and announced when collected,
  so a view shows every seat's collected cards (perfect memory for every bot alike).
- Scores are the cards collected. ``junior-advanced`` with ``nuisance`` ranks the fewest
  first: its instances answer ``higher_is_better = False``, and its outcomes rank accordingly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from games.junior.rules.junior_deck import JuniorDeck, load_deck
from games.junior.rules.junior_table import (
    CardDrawn,
    CardPlaced,
    CardPlayed,
    CardsDealt,
    CardTurned,
    GameEnded,
    JuniorAdvancedConfig,
    JuniorConfig,
    JuniorExpertsConfig,
    JuniorState,
    JuniorView,
    RowCollected,
    Rows,
    cow_rows,
    cow_takes,
    experts_takes,
    matching_rows,
    row_mask,
)
from referee.rules.chance import SeededChance
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
    "CardDrawn",
    "CardPlaced",
    "CardPlayed",
    "CardTurned",
    "CardsDealt",
    "GameEnded",
    "Junior",
    "JuniorAdvanced",
    "JuniorAdvancedConfig",
    "JuniorBasic",
    "JuniorConfig",
    "JuniorDeck",
    "JuniorExperts",
    "JuniorExpertsConfig",
    "JuniorState",
    "JuniorView",
    "RowCollected",
    "Rows",
    "cow_rows",
    "cow_takes",
    "experts_takes",
    "matching_rows",
    "row_mask",
]

DEAL, DRAW, PLAY, CARD, ROW, OVER = range(6)
_PHASES = ("deal", "draw", "play", "card", "row", "over")
_CHANCE_PENDING = (Decision(CHANCE, DecisionKind.CHANCE, ()),)

# -- the shared engine -------------------------------------------------------------------------

C = TypeVar("C", bound=JuniorConfig)


class Junior(Variant[JuniorState, C]):
    """The mechanics every Junior mode shares; a mode overrides the hooks below the line."""

    forced_moves: ClassVar[ForcedMoves] = ForcedMoves.PLAY
    lowest_score: ClassVar[float | None] = 0.0
    mode: ClassVar[str]
    fewest_wins: bool = False

    def __init__(self, config: C | None = None) -> None:
        super().__init__(config)
        self.deck = load_deck(self.config.deck)
        self._masks = self.deck.masks
        self._hand_size = 0
        self._row_limit = 0

    # -- the interface -------------------------------------------------------------------

    def initial_state(self) -> JuniorState:
        n = self.config.players
        empty = ((),) * n
        rows = ((),) * self.config.rows
        return JuniorState(
            DEAL, 0, 0, rows, empty, tuple(range(len(self.deck))), empty, None, None, _CHANCE_PENDING
        )

    def position(
        self,
        rows: Sequence[Sequence[int]],
        hands: Sequence[Sequence[int]] | None = None,
        *,
        collected: Sequence[Sequence[int]] | None = None,
        seat: int = 0,
    ) -> JuniorState:
        """A state at the start of ``seat``'s turn, set up by hand (for tests and puzzles).

        Every card not in a row, a hand or an album is in the pile. The position must be one a
        game can reach, except that any seat may be the one to move; the turns played so far
        are counted from the cards that left the pile.
        """
        cfg = self.config
        n = cfg.players
        hands = hands if hands is not None else [()] * n
        collected = collected if collected is not None else [()] * n
        if len(rows) != cfg.rows or len(hands) != n or len(collected) != n or not 0 <= seat < n:
            raise ConfigError(f"a position needs {cfg.rows} rows, {n} hands, {n} albums and a seat 0…{n - 1}")
        cards = [c for part in (*rows, *hands, *collected) for c in part]
        if len(set(cards)) != len(cards) or not all(
            type(c) is int and 0 <= c < len(self.deck) for c in cards
        ):
            raise ConfigError(f"a position's cards must be distinct ids 0…{len(self.deck) - 1}")
        used = set(cards)
        pile = tuple(c for c in range(len(self.deck)) if c not in used)
        size = self._hand_size
        if any(len(hand) > size for hand in hands):
            raise ConfigError(f"a hand holds at most {size} cards here")
        if size and pile and any(len(hand) != size for hand in hands):
            raise ConfigError(f"while the pile has cards, every hand holds {size} at the start of a turn")
        if not (hands[seat] if size else pile):
            raise ConfigError(f"seat {seat} has nothing to play: that game is over")
        self._check_rows(rows)
        starters = cfg.dealt() - n * size
        state = JuniorState(
            DEAL,
            seat,
            len(self.deck) - len(pile) - sum(map(len, hands)) - starters,
            tuple(tuple(row) for row in rows),
            tuple(tuple(sorted(hand)) for hand in hands),
            pile,
            tuple(tuple(album) for album in collected),
            None,
            None,
            (),
        )
        return self._settle(self._begin_turn(state, seat), [])

    def pending(self, state: JuniorState) -> tuple[Decision, ...]:
        return state.pending

    def sample_chance(self, state: JuniorState, chance: SeededChance) -> Action:
        if state.phase == DRAW:
            return state.pile[chance.below(len(state.pile))]
        if state.phase == DEAL:
            return tuple(chance.sample(state.pile, self.config.dealt()))
        raise NotPendingError("no chance decision is pending")

    def chance_outcomes(self, state: JuniorState) -> tuple[tuple[Action, float], ...] | None:
        """A draw: every card of the pile, equally likely. The deal is too many to list."""
        if state.phase == DRAW:
            p = 1.0 / len(state.pile)
            return tuple((card, p) for card in state.pile)
        return super().chance_outcomes(state)

    def apply(
        self, state: JuniorState, actions: Mapping[int, Action]
    ) -> tuple[JuniorState, tuple[Event, ...]]:
        if state.phase == OVER:
            raise GameOverError("the game is over")
        decision = state.pending[0]
        if len(actions) != 1 or decision.seat not in actions:
            who = "chance" if decision.seat == CHANCE else f"seat {decision.seat}"
            raise NotPendingError(f"only {who} is pending, got actions for {sorted(actions)}")
        events: list[Event] = []
        state = self._step(state, decision, actions[decision.seat], events)
        return self._settle(state, events), tuple(events)

    def view(self, state: JuniorState, seat: int) -> JuniorView:
        cfg = self.config
        if not 0 <= seat < cfg.players:
            raise NotPendingError(f"no seat {seat} in a {cfg.players}-player game")
        mine = [d for d in state.pending if d.seat == seat]
        return JuniorView(
            seat=seat,
            players=cfg.players,
            mode=self.mode,
            phase=_PHASES[state.phase],
            turn=state.turn,
            to_move=state.seat,
            rows=state.rows,
            hand=state.hands[seat],
            hand_sizes=tuple(len(hand) for hand in state.hands),
            collected=state.collected,
            pile_size=len(state.pile),
            card=state.card,
            decision=mine[0] if mine else None,
            fewest_wins=self.fewest_wins,
            row_limit=self._row_limit,
            deck=self.deck,
        )

    def outcome(self, state: JuniorState) -> Outcome | None:
        return state.outcome

    def default_action(self, state: JuniorState, decision: Decision) -> Action:
        """The option that collects the most cards now (the fewest, when the fewest win); first on a tie."""
        if decision.kind is DecisionKind.CHANCE:
            raise NotPendingError("chance has no default action")
        sign = -1 if self.fewest_wins else 1
        return max(decision.options, key=lambda option: sign * self._option_takes(state, decision, option))

    def config_json(self) -> dict[str, Any]:
        """The config; a deck that is not a bundled file is embedded, so transcripts replay anywhere."""
        body = {f: getattr(self.config, f) for f in self.config.__dataclass_fields__}
        body["deck"] = self.deck.source or self.deck.to_json()
        return body

    # -- shared steps --------------------------------------------------------------------

    def _step(
        self, state: JuniorState, decision: Decision, action: Action, events: list[Event]
    ) -> JuniorState:
        phase = state.phase
        if phase == DRAW:
            if type(action) is not int or action not in state.pile:
                raise IllegalActionError(f"a draw is a card id still in the pile, got {action!r}")
            pile = tuple(c for c in state.pile if c != action)
            return self._drawn(state._replace(pile=pile), action, events)
        if phase == DEAL:
            return self._dealt(state, action, events)
        if not _is_option(action, decision.options):
            raise IllegalActionError(
                f"seat {decision.seat} cannot answer {action!r} to a {decision.kind.value} decision;"
                f" legal: {list(decision.options)}"
            )
        return self._chosen(state, action, events)

    def _settle(self, state: JuniorState, events: list[Event]) -> JuniorState:
        """Make every forced move the variant's policy (``forced_moves``: play) leaves to the engine."""
        while (decision := self.forced(state.pending)) is not None:
            state = self._chosen(state, decision.options[0], events)
        return state

    def _dealt(self, state: JuniorState, action: Action, events: list[Event]) -> JuniorState:
        cfg = self.config
        needed = cfg.dealt()
        pile = frozenset(state.pile)
        if (
            not isinstance(action, tuple)
            or len(action) != needed
            or not all(type(c) is int for c in action)
            or len(set(action)) != needed
            or not pile.issuperset(action)
        ):
            raise IllegalActionError(f"a deal is {needed} distinct card ids from the pile")
        cards = action
        starters = needed - cfg.players * self._hand_size
        rows = tuple((c,) for c in cards[:starters]) if starters else state.rows
        size = self._hand_size
        hands = tuple(
            tuple(sorted(cards[starters + s * size : starters + (s + 1) * size])) for s in range(cfg.players)
        )
        dealt = set(cards)
        state = state._replace(rows=rows, hands=hands, pile=tuple(c for c in state.pile if c not in dealt))
        events.append(CardsDealt(size, rows))
        return self._begin_turn(state, 0)

    def _drawn(self, state: JuniorState, card: int, events: list[Event]) -> JuniorState:
        """A card drawn at the end of a turn goes into the hand (basic overrides)."""
        hands = list(state.hands)
        hands[state.seat] = tuple(sorted((*hands[state.seat], card)))
        events.append(CardDrawn(state.seat, len(state.pile)))
        return self._next_turn(state._replace(hands=tuple(hands)), events)

    def _after_play(self, state: JuniorState, events: list[Event]) -> JuniorState:
        """Draw a card if the pile has one, then the next seat's turn (basic overrides)."""
        if state.pile:
            return state._replace(phase=DRAW, card=None, pending=_CHANCE_PENDING)
        return self._next_turn(state, events)

    def _next_turn(self, state: JuniorState, events: list[Event]) -> JuniorState:
        n = self.config.players
        if not state.pile and not any(state.hands):
            return self._finish(state, events)
        seat = state.seat
        for _ in range(n):
            seat = (seat + 1) % n
            if not self._hand_size or state.hands[seat]:
                break
        return self._begin_turn(state._replace(turn=state.turn + 1, card=None), seat)

    def _finish(self, state: JuniorState, events: list[Event]) -> JuniorState:
        scores = tuple(len(album) for album in state.collected)
        termination = Termination.CARDS_EXHAUSTED
        outcome = Outcome(scores, shared_ranks(scores, higher_is_better=not self.fewest_wins), termination)
        events.append(GameEnded(scores, outcome.ranks, termination.value))
        return state._replace(phase=OVER, turn=state.turn + 1, card=None, outcome=outcome, pending=())

    def _collect(self, state: JuniorState, seat: int, row: int, events: list[Event]) -> JuniorState:
        """``seat`` collects every card of ``row``."""
        cards = state.rows[row]
        albums = list(state.collected)
        albums[seat] = albums[seat] + cards
        rows = list(state.rows)
        rows[row] = ()
        events.append(RowCollected(seat, row, cards, len(albums[seat])))
        return state._replace(rows=tuple(rows), collected=tuple(albums))

    def _place_by_cows(self, state: JuniorState, card: int, row: int, events: list[Event]) -> JuniorState:
        """Basic and advanced: the card joins the row; a row showing every cow is collected."""
        rows = list(state.rows)
        rows[row] = (*rows[row], card)
        state = state._replace(rows=tuple(rows))
        events.append(CardPlaced(state.seat, card, row))
        if row_mask(self._masks, rows[row]) == self.deck.full:
            state = self._collect(state, state.seat, row, events)
        return state

    def _option_takes(self, state: JuniorState, decision: Decision, option: Action) -> int:
        if decision.kind is DecisionKind.CARD_ROW:
            card, row = option  # type: ignore[misc]
            return self.takes(state.rows, card, row)
        if decision.kind is DecisionKind.CARD:
            assert type(option) is int
            card = option
            best = min if self.fewest_wins else max
            return best(self.takes(state.rows, card, row) for row in self.rows_for(state.rows, card))
        assert state.card is not None
        return self.takes(state.rows, state.card, option)  # type: ignore[arg-type]

    # -- hooks ---------------------------------------------------------------------------

    def _check_rows(self, rows: Sequence[Sequence[int]]) -> None:
        """Refuse a hand-made position's rows that could not occur."""
        if any(row_mask(self._masks, row) == self.deck.full for row in rows):
            raise ConfigError("a row that shows every cow would have been collected")

    def rows_for(self, rows: Rows, card: int) -> tuple[int, ...]:
        """The rows ``card`` may go to (rules 1 and 2)."""
        return cow_rows(self._masks, rows, card)

    def takes(self, rows: Rows, card: int, row: int) -> int:
        """How many cards putting ``card`` at ``row`` collects."""
        return cow_takes(self._masks, self.deck.full, rows, card, row)

    def _begin_turn(self, state: JuniorState, seat: int) -> JuniorState:
        raise NotImplementedError

    def _chosen(self, state: JuniorState, action: Action, events: list[Event]) -> JuniorState:
        """Apply the legal answer of the seat to move."""
        raise NotImplementedError


class JuniorBasic(Junior[JuniorConfig]):
    """The basic game: the card is turned over for you; you choose its row; most cards win."""

    name: ClassVar[str] = "junior-basic"
    aliases: ClassVar[tuple[str, ...]] = ("junior",)
    config_type: ClassVar[type[Any]] = JuniorConfig
    higher_is_better: ClassVar[bool] = True
    mode: ClassVar[str] = "basic"

    def initial_state(self) -> JuniorState:
        return super().initial_state()._replace(phase=DRAW)

    def _begin_turn(self, state: JuniorState, seat: int) -> JuniorState:
        return state._replace(phase=DRAW, seat=seat, pending=_CHANCE_PENDING)

    def _drawn(self, state: JuniorState, card: int, events: list[Event]) -> JuniorState:
        events.append(CardTurned(state.seat, card))
        ask = (Decision(state.seat, DecisionKind.ROW, self.rows_for(state.rows, card)),)
        return state._replace(phase=ROW, card=card, pending=ask)

    def _chosen(self, state: JuniorState, action: Action, events: list[Event]) -> JuniorState:
        assert state.card is not None and type(action) is int
        state = self._place_by_cows(state._replace(card=None), state.card, action, events)
        return self._after_play(state, events)

    def _after_play(self, state: JuniorState, events: list[Event]) -> JuniorState:
        return self._next_turn(state, events)


class JuniorAdvanced(Junior[JuniorAdvancedConfig]):
    """The advanced game: play (card, row) from a hand of three, then draw; most cards win.

    With ``nuisance`` the fewest cards win; such an instance answers ``higher_is_better``
    with ``False`` (the class attribute is the rulebook's default).
    """

    name: ClassVar[str] = "junior-advanced"
    config_type: ClassVar[type[Any]] = JuniorAdvancedConfig
    higher_is_better: ClassVar[bool] = True
    mode: ClassVar[str] = "advanced"

    def __init__(self, config: JuniorAdvancedConfig | None = None) -> None:
        super().__init__(config)
        self._hand_size = self.config.hand_size
        self.fewest_wins = self.config.nuisance
        # The ranking direction is a config value here, so the instance answers for itself.
        self.higher_is_better = not self.config.nuisance  # type: ignore[misc]

    def _begin_turn(self, state: JuniorState, seat: int) -> JuniorState:
        rows = state.rows
        options = tuple((card, row) for card in state.hands[seat] for row in self.rows_for(rows, card))
        return state._replace(
            phase=PLAY, seat=seat, pending=(Decision(seat, DecisionKind.CARD_ROW, options),)
        )

    def _chosen(self, state: JuniorState, action: Action, events: list[Event]) -> JuniorState:
        card, row = action  # type: ignore[misc]
        state = _without(state, card)
        return self._after_play(self._place_by_cows(state, card, row, events), events)


class JuniorExperts(Junior[JuniorExpertsConfig]):
    """The experts' game: a card goes where the last card shares a cow; the fewest cards win."""

    name: ClassVar[str] = "junior-experts"
    config_type: ClassVar[type[Any]] = JuniorExpertsConfig
    higher_is_better: ClassVar[bool] = False
    mode: ClassVar[str] = "experts"
    fewest_wins = True

    def __init__(self, config: JuniorExpertsConfig | None = None) -> None:
        super().__init__(config)
        self._hand_size = self.config.hand_size
        self._row_limit = self.config.row_limit

    def rows_for(self, rows: Rows, card: int) -> tuple[int, ...]:
        """The rows whose last card shares a cow; every row (to collect) when none does."""
        return matching_rows(self._masks, rows, card) or tuple(range(len(rows)))

    def takes(self, rows: Rows, card: int, row: int) -> int:
        return experts_takes(self._masks, self._row_limit, rows, card, row)

    def _check_rows(self, rows: Sequence[Sequence[int]]) -> None:
        if any(not 0 < len(row) < self._row_limit for row in rows):
            raise ConfigError(f"an experts' row holds 1 to {self._row_limit - 1} cards")

    def _begin_turn(self, state: JuniorState, seat: int) -> JuniorState:
        ask = (Decision(seat, DecisionKind.CARD, state.hands[seat]),)
        return state._replace(phase=CARD, seat=seat, pending=ask)

    def _chosen(self, state: JuniorState, action: Action, events: list[Event]) -> JuniorState:
        assert type(action) is int
        seat = state.seat
        if state.phase == CARD:
            events.append(CardPlayed(seat, action))
            ask = (Decision(seat, DecisionKind.ROW, self.rows_for(state.rows, action)),)
            return _without(state, action)._replace(phase=ROW, card=action, pending=ask)
        card, row = state.card, action
        assert card is not None
        if self.takes(state.rows, card, row):
            # No match, or the sixth card: the row goes to the album, the card starts it anew.
            state = self._collect(state, seat, row, events)
        rows = list(state.rows)
        rows[row] = (*rows[row], card)
        events.append(CardPlaced(seat, card, row))
        return self._after_play(state._replace(rows=tuple(rows), card=None), events)


def _without(state: JuniorState, card: int) -> JuniorState:
    hands = list(state.hands)
    hands[state.seat] = tuple(c for c in hands[state.seat] if c != card)
    return state._replace(hands=tuple(hands))


def _is_option(action: Action, options: tuple[Action, ...]) -> bool:
    """Membership without ``True == 1`` or list/tuple confusion."""
    if type(action) is tuple:
        return all(type(a) is int for a in action) and action in options
    return type(action) is int and action in options
