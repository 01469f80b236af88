"""The local arena: bots play in this process, for sparring, tests and benchmarks.

No deadlines, no processes, no store: a bot that raises or answers illegally stops the match
with a :class:`BotError` that says who did what, which is what a bot author wants while
writing a bot. Leagues with separate bot processes and fault handling are the referee's job.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot_sdk.bot import Bot, is_action
from referee.rules.chance import seat_seed
from referee.rules.core import CHANCE, Action, Outcome, Variant
from referee.rules.transcript import Playthrough, Transcript

BotFactory = Callable[[], Bot]


class BotError(RuntimeError):
    """A bot raised or answered with an illegal action in the local arena."""


@dataclass(slots=True)
class MatchResult:
    """One finished match."""

    outcome: Outcome
    transcript: Transcript
    decisions: list[int] = field(default_factory=list)
    """Decisions answered per seat."""
    think_seconds: list[float] = field(default_factory=list)
    """Wall time spent in each seat's ``decide``."""


def play_match(
    variant: Variant[Any, Any],
    factories: Sequence[BotFactory],
    seed: int,
    *,
    names: Sequence[str] | None = None,
    seat_key: bytes = b"",
) -> MatchResult:
    """Play one match with ``factories[seat]()`` in each seat; deterministic for a given seed."""
    if len(factories) != variant.players:
        raise ValueError(f"{variant.name} is set up for {variant.players} seats, got {len(factories)} bots")
    labels = list(names) if names is not None else [f"seat {s}" for s in range(len(factories))]
    bots = []
    config = variant.config_json()
    for seat, factory in enumerate(factories):
        bot = factory()
        bot.seat = seat
        bot.rng = random.Random(seat_seed(seed, seat, seat_key))
        bot.on_start(seat, variant.name, config)
        bots.append(bot)
    game = Playthrough(variant, seed)
    decisions = [0] * len(bots)
    think = [0.0] * len(bots)
    clock = time.perf_counter
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            events = game.resolve_chance()
        else:
            actions: dict[int, Action] = {}
            for decision in pending:
                seat = decision.seat
                view = variant.view(game.state, seat)
                start = clock()
                try:
                    action = bots[seat].decide(view)
                except Exception as exc:
                    raise BotError(f"{labels[seat]} raised {exc!r} in match seed {seed}") from exc
                think[seat] += clock() - start
                decisions[seat] += 1
                if not is_action(action):
                    # The wire refuses it too: in-process play is then the game a remote one is.
                    raise BotError(
                        f"{labels[seat]} answered {action!r} to a {decision.kind.value} decision, which"
                        f" is not an action: an int or a tuple of ints (match seed {seed})"
                    )
                if action not in decision.options:
                    raise BotError(
                        f"{labels[seat]} answered {action!r} to a {decision.kind.value} decision;"
                        f" legal: {list(decision.options)} (match seed {seed})"
                    )
                actions[seat] = action
            events = game.apply(actions)
        if events:
            for bot in bots:
                bot.on_events(events)
    outcome = game.outcome()
    assert outcome is not None
    for bot in bots:
        bot.on_game_over(outcome)
    return MatchResult(outcome, game.transcript({"seats": labels}), decisions, think)
