"""Search over the real engine, for bot authors: the rules as a search needs them, as OpenSpiel
offers them, so that no bot re-implements the rules.

A :class:`Search` wraps a variant's engine (``referee.rules``, the referee's own code): the seats
pending in a state and their legal actions, applying actions to get the next state (states are
immutable, so ``apply`` leaves its input as it was and a search can branch from any state),
chance outcomes with their probabilities where they can be listed, a random chance outcome
where they cannot, and the outcome and scores once the game is over.

A bot sees only its view, so a search over a game of hidden cards starts from a
*determinization*: a full state consistent with the view, the unseen cards dealt at random into
the other hands. :class:`ClassicSearch` builds them for classic 6 nimmt!::

    search = ClassicSearch.of(view)              # the rest of this hand; or pass the game's config
    state = search.determinize(view, self.rng)   # the other hands sampled from view.unseen()
    while not search.is_terminal(state):
        if search.is_chance(state):
            state = search.apply(state, {CHANCE: search.sample_chance(state, self.rng)})
        else:
            state = search.apply(state, {seat: self.rng.choice(options)
                                         for seat, options in search.legal_actions(state).items()})
    search.scores(state)                         # bull heads per seat

Without a config the search ends with the view's hand (the game's target and number of hands
are not in a view); pass the config :meth:`~bot_sdk.bot.Bot.on_start` received to search past
it (each later hand starts with a chance step, a deal).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from games.classic.rules.classic import Classic, ClassicConfig, ClassicState, ClassicView
from referee.rules.chance import SeededChance
from referee.rules.config import config_from_mapping
from referee.rules.core import CHANCE, Action, Decision, Event, Outcome, Variant

S = TypeVar("S")

__all__ = ["CHANCE", "ClassicSearch", "Search"]


class Search(Generic[S]):
    """A variant's rules for a search: pending seats, legal actions, apply, chance, outcome."""

    def __init__(self, variant: Variant[S, Any]) -> None:
        self.variant = variant

    def pending(self, state: S) -> tuple[Decision, ...]:
        """The decisions ``state`` waits for (the engine's); empty when the game is over."""
        return self.variant.pending(state)

    def is_terminal(self, state: S) -> bool:
        """Whether the game is over."""
        return not self.variant.pending(state)

    def is_chance(self, state: S) -> bool:
        """Whether ``state`` waits for a chance outcome (a deal, a draw) rather than for seats."""
        pending = self.variant.pending(state)
        return bool(pending) and pending[0].seat == CHANCE

    def legal_actions(self, state: S) -> dict[int, tuple[Action, ...]]:
        """Each pending seat's legal actions (several seats at once when they play simultaneously).

        Empty for a chance state (see :meth:`chance_outcomes`) and at the end.
        """
        return {d.seat: d.options for d in self.variant.pending(state) if d.seat != CHANCE}

    def apply(self, state: S, actions: Mapping[int, Action]) -> S:
        """The state after one action per pending seat (``{CHANCE: outcome}`` for chance).

        ``state`` itself does not change. An illegal action raises the engine's
        :class:`~referee.rules.errors.IllegalActionError`.
        """
        return self.variant.apply(state, actions)[0]

    def apply_with_events(self, state: S, actions: Mapping[int, Action]) -> tuple[S, tuple[Event, ...]]:
        """:meth:`apply` and the public events the step makes (what the other seats would see)."""
        return self.variant.apply(state, actions)

    def chance_outcomes(self, state: S) -> tuple[tuple[Action, float], ...] | None:
        """The pending chance outcomes with their probabilities (summing to 1), or ``None`` when
        they are too many to list (a whole deal): :meth:`sample_chance` draws one then."""
        return self.variant.chance_outcomes(state)

    def sample_chance(self, state: S, rng: random.Random) -> Action:
        """A chance outcome drawn as the referee draws them, from the bot's own generator."""
        return self.variant.sample_chance(state, SeededChance(rng.getrandbits(64)))

    def outcome(self, state: S) -> Outcome | None:
        """Scores, ranks and termination once the game is over, else ``None``."""
        return self.variant.outcome(state)

    def scores(self, state: S) -> tuple[int, ...]:
        """Each seat's score: the outcome's once the game is over, before that the running scores
        every view shows (classic's bull heads, Junior's cards collected, the board game's points)."""
        outcome = self.variant.outcome(state)
        if outcome is not None:
            return outcome.scores
        running = getattr(state, "scores", None)
        if running is None:
            running = self.variant.view(state, 0).scores  # type: ignore[attr-defined]
        return tuple(running)

    def view(self, state: S, seat: int) -> Any:
        """What ``seat`` would see in ``state`` (the view its bot would get)."""
        return self.variant.view(state, seat)


class ClassicSearch(Search[ClassicState]):
    """Search over the classic engine, starting from determinizations of a seat's view."""

    variant: Classic

    def __init__(self, variant: Classic) -> None:
        super().__init__(variant)

    @classmethod
    def of(cls, view: ClassicView, config: ClassicConfig | Mapping[str, Any] | None = None) -> ClassicSearch:
        """A search for the game ``view`` is from.

        ``config`` is the game's (a :class:`ClassicConfig` or the mapping ``on_start`` received);
        without one, the game is taken to end with the view's hand, its numbers read from the view.
        """
        if config is None:
            # A full deal of the cards in play is the Tactics option (whose deck may be smaller
            # than the smallest deck option); either way the cards run 1 … view.top_card.
            full = view.players * view.hand_size + len(view.rows) == view.top_card
            config = ClassicConfig(
                players=view.players,
                hand_size=view.hand_size,
                rows=len(view.rows),
                row_capacity=view.row_capacity,
                deck=max(view.top_card, 104) if full else view.top_card,
                tactics=full,
                professional=view.professional,
                target=None,
                hands=view.hand_no,
            )
        elif not isinstance(config, ClassicConfig):
            config = config_from_mapping(ClassicConfig, config)
        return cls(Classic(config))

    def determinize(self, view: ClassicView, rng: random.Random) -> ClassicState:
        """A full state consistent with ``view``: the cards it has not seen dealt at random, as
        many to each other seat as it holds itself; the rest stay undealt. Its view for
        ``view.seat`` is ``view``."""
        size = len(view.hand)
        others = view.players - 1
        dealt = rng.sample(view.unseen(), others * size)
        hands: list[tuple[int, ...]] = []
        for seat in range(view.players):
            if seat == view.seat:
                hands.append(view.hand)
            else:
                k = seat - (seat > view.seat)  # the seat's place among the others
                hands.append(tuple(dealt[k * size : (k + 1) * size]))
        return self.variant.from_view(view, hands)

    def state(self, view: ClassicView, hands: list[tuple[int, ...]]) -> ClassicState:
        """The state ``view`` comes from, given every seat's hand (see :meth:`Classic.from_view`)."""
        return self.variant.from_view(view, hands)
