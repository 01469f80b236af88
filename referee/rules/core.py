"""The interface every variant plugs into: decisions, actions, events, views and outcomes.

A game is a state machine. A state exposes its *pending decisions*: who must decide what
now, with the legal options. Simultaneous play is several seats pending at once; a row
choice, a luck card or an action card is one seat pending. Chance (a deal, a drawn card) is
a decision of the pseudo-seat :data:`CHANCE`, which the driver answers from the match's
seeded generator through :meth:`Variant.sample_chance`, so the engine itself holds no RNG and
every chance outcome is recorded in the transcript like any other action.

``apply`` never mutates its input: states are immutable values.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar

from referee.rules.chance import SeededChance
from referee.rules.errors import NotPendingError

CHANCE = -1
"""The seat number of chance (deals, draws, reshuffles)."""

Action = int | tuple[int, ...]
"""An action is a card, row or tile number, or a tuple of them; each decision kind says which."""


class DecisionKind(enum.StrEnum):
    """What a pending decision asks for; the action encoding is fixed per kind."""

    CHANCE = "chance"
    """A chance outcome (a deal, a draw); answered by the driver, never by a bot."""
    CARD = "card"
    """Play one card (or tile) from the hand; action: its number."""
    ROW = "row"
    """Choose a row, e.g. the row a low card takes; action: the row index."""
    CARD_ROW = "card_row"
    """Play a hand card into a row in one move; action: ``(card, row)``."""
    CARDS = "cards"
    """Play several cards (or tiles) at once; action: a sorted tuple of numbers."""
    LUCK = "luck"
    """Play a luck card or pass; action: ``()`` to pass or ``(card kind, *targets)``."""
    ACTION_CARD = "action_card"
    """Play an action card or pass; action: ``()`` to pass or ``(card kind, *targets)``."""
    PILE = "pile"
    """Take a card from one of several face-up piles (a luck card for a clover); action: its kind."""


class Decision(NamedTuple):
    """One seat's pending decision with its legal options."""

    seat: int
    kind: DecisionKind
    options: tuple[Action, ...]
    """The legal actions. Empty for chance decisions whose outcomes are too many to list."""


class ForcedMoves(enum.Enum):
    """What an engine does with a forced move: a seat's decision with a single legal option.

    The policy is a :class:`Variant` attribute (``forced_moves``), applied by the one helper
    :meth:`Variant.forced`; a variant's default keeps its transcripts and its protocol as they
    are (a forced move the engine makes is no step of the transcript and no request on the wire).
    """

    ASK = "ask"
    """Every decision is asked, even one with a single option (classic: the last card of a hand,
    a low card's row when there is one row)."""
    PLAY = "play"
    """The engine makes a decision with a single legal option itself when it is the only decision
    pending (a seat's turn, not a simultaneous step): nobody is asked, and the events are those of
    the seat choosing it (Junior, the board game). Simultaneous steps are always asked."""


class Event(Protocol):
    """A typed, public fact about what happened; every event may be shown to everyone."""

    def _asdict(self) -> dict[str, Any]: ...


def event_to_json(event: Event) -> dict[str, Any]:
    """A JSON-ready form of an event: its type name and fields."""
    return {"type": type(event).__name__, **_jsonable(event._asdict())}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        items = sorted(value) if isinstance(value, (frozenset, set)) else value
        return [_jsonable(v) for v in items]
    if hasattr(value, "_asdict"):
        return _jsonable(value._asdict())
    if isinstance(value, enum.Enum):
        return value.value
    return value


class GameEnded(NamedTuple):
    """The game is over: the last event of every game, one type for all of them.

    ``termination`` is a :class:`Termination` value. Each game's event oneof on the wire has its
    own ``game_ended`` field for it (the codec maps it by name).
    """

    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    termination: str


class Termination(enum.Enum):
    """Why a game ended."""

    TARGET_REACHED = "target_reached"
    """A player reached the target score."""
    HANDS_PLAYED = "hands_played"
    """The configured number of hands (rounds) was played."""
    CARDS_EXHAUSTED = "cards_exhausted"
    """The draw pile and the hands ran out."""
    TILES_EXHAUSTED = "tiles_exhausted"
    """A player had no tiles left at the end of a round."""
    FORFEIT = "forfeit"
    """The referee ended the match because of a seat's faults."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished game: each seat's score and rank (equal scores share a rank)."""

    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    """1 is best; ties share the rank and the next rank is skipped (1, 1, 3)."""
    termination: Termination

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats ranked first (several on a tie)."""
        return tuple(seat for seat, rank in enumerate(self.ranks) if rank == 1)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form of the outcome."""
        return {
            "scores": list(self.scores),
            "ranks": list(self.ranks),
            "termination": self.termination.value,
        }


def shared_ranks(scores: tuple[int, ...], *, higher_is_better: bool) -> tuple[int, ...]:
    """Competition ranks: equal scores share a rank, the next rank skips (1, 1, 3)."""
    sign = -1 if higher_is_better else 1
    keys = [sign * s for s in scores]
    ordered = sorted(keys)
    # A seat's rank is one more than the number of seats strictly ahead of it.
    return tuple(1 + bisect_left(ordered, key) for key in keys)


class View(Protocol):
    """What one seat may know; computed by the engine, the only thing sent to a bot."""

    @property
    def seat(self) -> int: ...

    def to_json(self) -> dict[str, Any]: ...


S = TypeVar("S")
C = TypeVar("C")


class Variant(ABC, Generic[S, C]):
    """A game of the family: a small subclass that fills in these hooks.

    Variant metadata is declared as class attributes; a config is a frozen dataclass of
    the variant's numbers with validated defaults.
    """

    name: ClassVar[str]
    """The canonical name, e.g. ``"classic"``."""
    aliases: ClassVar[tuple[str, ...]] = ()
    config_type: ClassVar[type[Any]]
    higher_is_better: ClassVar[bool]
    """Whether a higher score ranks better (board game points) or worse (bull heads)."""
    lowest_score: ClassVar[float | None] = None
    """The lowest score a seat can end a game with, when there is one (0 where scores count bull
    heads or cards taken); standings keep their intervals at or above it. ``None``: no bound."""
    engine_version: ClassVar[int] = 1
    """Bumped whenever a rules change could alter a replay; part of every transcript hash."""
    forced_moves: ClassVar[ForcedMoves] = ForcedMoves.ASK
    """Whether the engine asks or makes a decision with one legal option (see :meth:`forced`).
    Part of the rules: changing a variant's policy changes its transcripts (bump the version)."""

    def __init__(self, config: C | None = None) -> None:
        self.config: C = config if config is not None else self.config_type()

    @property
    def players(self) -> int:
        """The number of seats."""
        return int(self.config.players)  # type: ignore[attr-defined]

    @abstractmethod
    def initial_state(self) -> S:
        """The state before the first chance outcome (nothing dealt yet)."""

    @abstractmethod
    def pending(self, state: S) -> tuple[Decision, ...]:
        """The decisions the state waits for; empty exactly when the game is over."""

    @abstractmethod
    def apply(self, state: S, actions: Mapping[int, Action]) -> tuple[S, tuple[Event, ...]]:
        """Apply one action per pending seat; return the next state and public events.

        Raises :class:`~referee.rules.errors.NotPendingError` when the seats do not match
        the pending decisions, :class:`~referee.rules.errors.IllegalActionError` for an action
        that is not a legal option, :class:`~referee.rules.errors.GameOverError` after the end.
        """

    @abstractmethod
    def sample_chance(self, state: S, chance: SeededChance) -> Action:
        """Draw the outcome of the pending chance decision."""

    def chance_outcomes(self, state: S) -> tuple[tuple[Action, float], ...] | None:
        """The pending chance decision's outcomes with their probabilities (they sum to 1), or
        ``None`` when they are too many to list (a whole deal): draw one with :meth:`sample_chance`.

        Each outcome is an action :meth:`apply` accepts; outcomes that make the same state (a
        hand dealt in another order) are listed once. Raises
        :class:`~referee.rules.errors.NotPendingError` when no chance decision is pending.
        """
        if not any(d.seat == CHANCE for d in self.pending(state)):
            raise NotPendingError("no chance decision is pending")
        return None

    @abstractmethod
    def view(self, state: S, seat: int) -> View:
        """Everything ``seat`` may know in ``state``, and nothing more."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """The result once the game is over, else ``None``."""

    def forced(self, pending: tuple[Decision, ...]) -> Decision | None:
        """The decision of ``pending`` the engine makes itself under :attr:`forced_moves`, else ``None``.

        The one place the policy is applied: an engine calls it on the decisions it is about to
        wait for and, when it returns a decision, applies that decision's only option itself
        (chance is never forced: its outcome is drawn). Under :attr:`ForcedMoves.PLAY` that is a
        lone seat's decision with exactly one option; under :attr:`ForcedMoves.ASK`, none.
        """
        if self.forced_moves is ForcedMoves.PLAY and len(pending) == 1:
            decision = pending[0]
            if decision.seat != CHANCE and len(decision.options) == 1:
                return decision
        return None

    def default_action(self, state: S, decision: Decision) -> Action:
        """The deterministic action the referee plays for a seat that failed to answer.

        By default the first legal option; variants override it with a sensible choice.
        """
        return decision.options[0]

    def config_json(self) -> dict[str, Any]:
        """The config as a JSON-ready mapping (for transcripts and the wire)."""
        return {f: getattr(self.config, f) for f in self.config.__dataclass_fields__}  # type: ignore[attr-defined]
