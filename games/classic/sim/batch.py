"""A batch simulator for classic 6 nimmt!: many games at once as arrays, played by numba.

``Simulator(config)`` knows a game's numbers (every option of
:class:`~games.classic.rules.classic.ClassicConfig`: 2–10 players, Tactics, Professional, to a
target, a number of hands or both). A :class:`Batch` holds the states of N games as numpy
arrays; :meth:`Simulator.play` runs them forward, every seat with a policy (random play
inside the compiled loop, or a Python callable that picks a card for many games at once) and
the low cards' rows chosen by a row policy, and :meth:`Simulator.scores` scores them. Games
come from the engine's states (:meth:`Simulator.from_states`), from positions set up by hand
(:meth:`Simulator.positions`) or fresh (:meth:`Simulator.new_games`), and go back to the
engine's states (:meth:`Simulator.to_state`), equal to what the engine itself would hold.

The rules are the engine's; ``tests/sim`` plays the same deals and actions through both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from games.classic.rules.classic import ClassicConfig, ClassicState
from games.classic.sim import kernel
from referee.rules.cards import bull_table
from referee.rules.core import CHANCE, Decision, DecisionKind, Outcome, Termination, shared_ranks
from referee.rules.errors import ConfigError, RulesError

Array = npt.NDArray[Any]
CardPolicy = Callable[["Batch", Array, int], Array]
"""``policy(batch, games, seat)``: the card ``seat`` plays in each of ``games`` (indices of the
batch), one per game, each from ``batch.hand(game, seat)``."""
RowPolicy = Callable[["Batch", Array], Array]
"""``rows(batch, games)``: the row each of ``games`` takes with its low card, which is
``batch.revealed[game, batch.placed[game]]`` (``(card, seat)``; the turn's cards are face up)."""

_INT = np.int32
"""The batch's integers: cards, counts and scores all fit, and half the memory of int64 is faster."""

_PHASE_OF = {"deal": kernel.DEAL, "play": kernel.PLAY, "row": kernel.ROW, "over": kernel.OVER}


class SimulationError(RulesError):
    """A policy answered with a card its seat does not hold or a row that does not exist."""


@dataclass(slots=True)
class Batch:
    """The states of ``n`` classic games of one config, as arrays indexed by game first.

    Cards are numbers (0 where there is none); every seat of a game holds ``held[game]`` cards,
    ascending, in ``hands[game, seat, :held[game]]``. The arrays are the simulator's working
    state: read them freely, change them only through the :class:`Simulator`.
    """

    rows: Array
    """``[n, rows, capacity]``: each row from its first card to its last (``lens`` long)."""
    lens: Array
    """``[n, rows]``: the cards in each row."""
    heads: Array
    """``[n, rows]``: the bull heads in each row."""
    hands: Array
    """``[n, players, hand_size]``."""
    held: Array
    """``[n]``: cards each seat holds."""
    scores: Array
    """``[n, players]``: bull heads over the whole game so far."""
    piles: Array
    """``[n, players, hand_size * capacity]``: the cards each seat took this hand, in order."""
    pile_lens: Array
    phase: Array
    """``[n]``: 0 waits for a deal, 1 for cards, 2 for a low card's row, 3 is over."""
    hand_no: Array
    """``[n]``: hands dealt so far, the current one included."""
    turn: Array
    """``[n]``: turns completed in the current hand."""
    revealed: Array
    """``[n, players, 2]``: this turn's ``(card, seat)`` pairs, ascending; valid while a row is chosen."""
    placed: Array
    """``[n]``: how many of ``revealed`` are placed (the low card waiting for its row is next)."""
    error: Array

    @property
    def n(self) -> int:
        """The number of games."""
        return int(self.rows.shape[0])

    def hand(self, game: int, seat: int) -> Array:
        """The cards ``seat`` holds in ``game``, ascending."""
        return self.hands[game, seat, : self.held[game]]

    def over(self) -> Array:
        """``[n]`` booleans: the games that are over."""
        over: Array = self.phase == kernel.OVER
        return over


class Simulator:
    """Plays batches of classic games of one config; see the module docstring."""

    def __init__(self, config: ClassicConfig | Mapping[str, Any] | None = None) -> None:
        if config is None:
            config = ClassicConfig()
        elif not isinstance(config, ClassicConfig):
            config = ClassicConfig(**config)
        self.config = config
        cfg = config
        self._cfg = np.array(
            [
                cfg.players,
                cfg.rows,
                cfg.row_capacity,
                cfg.hand_size,
                cfg.target or 0,
                cfg.hands or 0,
                int(cfg.professional),
            ],
            np.int64,
        )
        self._bulls = np.array(bull_table(cfg.top_card), np.int64)
        self._deck = np.arange(1, cfg.top_card + 1, dtype=np.int64)
        self.deal_size = cfg.players * cfg.hand_size + cfg.rows

    # -- making batches -----------------------------------------------------------------

    def new_games(self, n: int) -> Batch:
        """``n`` games before their first deal (the engine's initial state)."""
        if n < 0:
            raise ConfigError(f"a batch holds zero or more games, not {n}")
        cfg = self.config
        p, r, h = cfg.players, cfg.rows, cfg.hand_size
        return Batch(
            rows=np.zeros((n, r, cfg.row_capacity), _INT),
            lens=np.zeros((n, r), _INT),
            heads=np.zeros((n, r), _INT),
            hands=np.zeros((n, p, h), _INT),
            held=np.zeros(n, _INT),
            scores=np.zeros((n, p), _INT),
            piles=np.zeros((n, p, h * cfg.row_capacity), _INT),
            pile_lens=np.zeros((n, p), _INT),
            phase=np.full(n, kernel.DEAL, _INT),
            hand_no=np.zeros(n, _INT),
            turn=np.zeros(n, _INT),
            revealed=np.zeros((n, p, 2), _INT),
            placed=np.zeros(n, _INT),
            error=np.zeros(n, _INT),
        )

    def from_states(self, states: Sequence[ClassicState]) -> Batch:
        """A batch of the engine's states (any phase), game ``i`` being ``states[i]``."""
        batch = self.new_games(len(states))
        for i, state in enumerate(states):
            self._put(batch, i, state)
        return batch

    def positions(
        self,
        rows: Sequence[Sequence[int]],
        hands: Sequence[Sequence[int]],
        scores: Sequence[int] | None = None,
        *,
        n: int = 1,
        hand_no: int = 1,
    ) -> Batch:
        """``n`` copies of one position at the start of a turn, as the engine's ``position`` takes it."""
        from games.classic.rules.classic import Classic

        state = Classic(self.config).position(rows, hands, scores=scores, hand_no=hand_no)
        batch = self.new_games(n)
        for i in range(n):
            self._put(batch, i, state)
        return batch

    def _put(self, batch: Batch, i: int, state: ClassicState) -> None:
        cfg = self.config
        if len(state.scores) != cfg.players:
            raise ConfigError(f"a state of {len(state.scores)} seats in a {cfg.players}-seat simulator")
        batch.phase[i] = state.phase
        batch.hand_no[i] = state.hand_no
        batch.turn[i] = state.turn
        batch.scores[i] = state.scores
        held = len(state.hands[0]) if state.hands else 0
        batch.held[i] = held
        batch.hands[i] = 0
        for seat, hand in enumerate(state.hands):
            batch.hands[i, seat, : len(hand)] = hand
        batch.rows[i] = 0
        batch.lens[i] = 0
        batch.heads[i] = 0
        for r, row in enumerate(state.rows):
            if len(row) > cfg.row_capacity:
                raise ConfigError(f"a row of {len(row)} cards; this game's rows hold {cfg.row_capacity}")
            batch.rows[i, r, : len(row)] = row
            batch.lens[i, r] = len(row)
            batch.heads[i, r] = int(self._bulls[list(row)].sum())
        batch.piles[i] = 0
        for seat, pile in enumerate(state.piles):
            batch.piles[i, seat, : len(pile)] = pile
            batch.pile_lens[i, seat] = len(pile)
        batch.revealed[i] = 0
        for k, (card, seat) in enumerate(state.revealed):
            batch.revealed[i, k] = card, seat
        batch.placed[i] = state.placed

    # -- back to the engine -------------------------------------------------------------

    def to_state(self, batch: Batch, i: int) -> ClassicState:
        """Game ``i`` as the engine's state: equal to the state the engine reaches by the same play."""
        cfg = self.config
        p = cfg.players
        phase = int(batch.phase[i])
        held = int(batch.held[i])
        hands = tuple(tuple(int(c) for c in batch.hands[i, s, :held]) for s in range(p))
        piles = tuple(tuple(int(c) for c in batch.piles[i, s, : batch.pile_lens[i, s]]) for s in range(p))
        scores = tuple(int(x) for x in batch.scores[i])
        hand_no = int(batch.hand_no[i])
        rows: tuple[tuple[int, ...], ...] = ()
        if hand_no:
            rows = tuple(tuple(int(c) for c in batch.rows[i, r, : batch.lens[i, r]]) for r in range(cfg.rows))
        revealed: tuple[tuple[int, int], ...] = ()
        placed = 0
        outcome = None
        pending: tuple[Decision, ...]
        if phase == kernel.PLAY:
            pending = tuple(Decision(s, DecisionKind.CARD, hands[s]) for s in range(p))
        elif phase == kernel.ROW:
            revealed = tuple((int(c), int(s)) for c, s in batch.revealed[i])
            placed = int(batch.placed[i])
            pending = (Decision(revealed[placed][1], DecisionKind.ROW, tuple(range(cfg.rows))),)
        elif phase == kernel.DEAL:
            pending = (Decision(CHANCE, DecisionKind.CHANCE, ()),)
        else:
            target = cfg.target is not None and max(scores) >= cfg.target
            termination = Termination.TARGET_REACHED if target else Termination.HANDS_PLAYED
            outcome = Outcome(scores, shared_ranks(scores, higher_is_better=False), termination)
            pending = ()
        return ClassicState(
            phase, hand_no, int(batch.turn[i]), rows, hands, piles, scores, revealed, placed, outcome, pending
        )

    # -- playing ------------------------------------------------------------------------

    def play(
        self,
        batch: Batch,
        policy: str | CardPolicy | Sequence[str | CardPolicy] = "random",
        rows: str | RowPolicy = "cheapest",
        *,
        hands: int | None = None,
        deals: Array | None = None,
        seed: int | None = None,
    ) -> Batch:
        """Play every game of ``batch`` forward, in place, and return it.

        ``policy``: ``"random"`` (a uniformly random card, drawn inside the compiled loop) or a
        :data:`CardPolicy`, for every seat or one per seat. ``rows``: the row a low card takes:
        ``"cheapest"`` (the fewest bull heads, the first such row: the engine's default action),
        ``"random"``, or a :data:`RowPolicy`. ``hands``: stop each game once it has finished this
        many hands (the current one counting as the first), else play until the game is over by
        its config. ``deals``: ``[n, k, deal_size]`` cards, each game's next ``k`` deals in the
        engine's order (the rows' first cards, then each seat's cards); later deals are random.
        ``seed`` makes the random choices and deals reproducible.
        """
        cfg = self.config
        seats = list(policy) if isinstance(policy, Sequence) and not isinstance(policy, str) else None
        per_seat = seats if seats is not None else [policy] * cfg.players
        if len(per_seat) != cfg.players:
            raise ConfigError(f"one policy per seat: {cfg.players}, got {len(per_seat)}")
        for p in per_seat:
            if isinstance(p, str) and p != "random":
                raise ConfigError(f"a card policy is 'random' or a callable, not {p!r}")
        if isinstance(rows, str) and rows not in ("cheapest", "random"):
            raise ConfigError(f"a row policy is 'cheapest', 'random' or a callable, not {rows!r}")
        if hands is not None and hands < 1:
            raise ConfigError(f"play at least one hand, not {hands}")
        n = batch.n
        if deals is None:
            deals = np.zeros((n, 0, self.deal_size), np.int64)
        deals = np.asarray(deals, np.int64)
        if deals.ndim != 3 or deals.shape[0] != n or deals.shape[2] != self.deal_size:
            raise ConfigError(f"deals are [games={n}, k, deal size={self.deal_size}], got {deals.shape}")
        seat_random = np.array([isinstance(p, str) for p in per_seat], np.bool_)
        callers: list[tuple[int, CardPolicy]] = [
            (s, p) for s, p in enumerate(per_seat) if not isinstance(p, str) and callable(p)
        ]
        row_mode = kernel.EXTERNAL
        if rows == "cheapest":
            row_mode = kernel.CHEAPEST
        elif rows == "random":
            row_mode = kernel.RANDOM
        cards_in = np.zeros((n, cfg.players), np.int64)
        card_ready = np.zeros(n, np.bool_)
        row_in = np.zeros(n, np.int64)
        row_ready = np.zeros(n, np.bool_)
        deals_used = np.zeros(n, np.int64)
        # A game between hands (DEAL) has not begun its next one: that one counts as the first.
        hands_left = np.full(n, -1 if hands is None else hands, np.int64)
        rng = np.random.default_rng(seed)
        while True:
            kernel.advance(
                self._cfg, self._bulls, self._deck,
                batch.rows, batch.lens, batch.heads, batch.hands, batch.held, batch.scores,
                batch.piles, batch.pile_lens, batch.phase, batch.hand_no, batch.turn,
                batch.revealed, batch.placed, hands_left,
                seat_random, cards_in, card_ready, row_mode, row_in, row_ready,
                deals, deals_used, batch.error, int(rng.integers(1 << 31)),
            )  # fmt: skip
            self._raise_errors(batch, seat_random, cards_in, row_in)
            waiting = False
            if callers:
                games = np.flatnonzero((batch.phase == kernel.PLAY) & ~card_ready)
                if games.size:
                    waiting = True
                    for seat, choose in callers:
                        cards_in[games, seat] = np.asarray(choose(batch, games, seat), np.int64)
                    card_ready[games] = True
            if row_mode == kernel.EXTERNAL:
                games = np.flatnonzero((batch.phase == kernel.ROW) & ~row_ready)
                if games.size:
                    waiting = True
                    assert not isinstance(rows, str)
                    row_in[games] = np.asarray(rows(batch, games), np.int64)
                    row_ready[games] = True
            if not waiting:
                return batch

    def _raise_errors(self, batch: Batch, seat_random: Array, cards_in: Array, row_in: Array) -> None:
        bad = np.flatnonzero(batch.error)
        if not bad.size:
            return
        g = int(bad[0])
        if batch.error[g] == kernel.BAD_ROW:
            what = f"row {int(row_in[g])}: there are rows 0…{self.config.rows - 1}"
        else:
            seat = next(
                s
                for s in range(self.config.players)
                if not seat_random[s] and int(cards_in[g, s]) not in batch.hand(g, s).tolist()
            )
            holds = batch.hand(g, seat).tolist()
            what = f"card {int(cards_in[g, seat])} for seat {seat}, which holds {holds}"
        batch.error[bad] = kernel.NO_ERROR
        raise SimulationError(
            f"game {g} of the batch: the policy chose {what} ({bad.size} game(s) refused)"
        )

    def scores(self, batch: Batch) -> Array:
        """``[n, players]``: each seat's bull heads so far (the batch's ``scores``, copied)."""
        return batch.scores.copy()

    def hand_bulls(self, batch: Batch) -> Array:
        """``[n, players]``: the bull heads each seat took in the current (or last) hand."""
        taken = self._bulls[batch.piles]
        mask = np.arange(batch.piles.shape[2]) < batch.pile_lens[..., None]
        result: Array = (taken * mask).sum(axis=2)
        return result

    def random_deals(self, n: int, k: int = 1, seed: int | None = None) -> Array:
        """``[n, k, deal_size]`` random deals in the engine's order, for :meth:`play`'s ``deals``."""
        rng = np.random.default_rng(seed)
        keys = rng.random((n, k, self._deck.size))
        result: Array = self._deck[np.argsort(keys, axis=2)[..., : self.deal_size]]
        return result


def phase_of(name: str) -> int:
    """The batch's phase number of a view's phase name (``"play"``, ``"row"``, …)."""
    return _PHASE_OF[name]
