"""Measure a classic reference bot: bull heads per hand against random opponents, and its speed.

Each hand is one match (``{"hands": 1, "target": None}``) with the bot in seat 0 and
:class:`~games.classic.bots.RandomBot` (or another reference bot) in the other seats. Seat 0
is as good as any: the seats of classic play simultaneously and are symmetric. Match seeds
derive from ``seed`` and the hand's number only, so a result does not depend on how many
processes share the work.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing
from dataclasses import dataclass
from functools import partial

from bot_sdk.bots import reference_bot
from bot_sdk.play import play_match
from referee.rules.registry import make_variant


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The bull heads a bot took per hand, with a 95% interval, and its thinking time."""

    bot: str
    opponent: str
    players: int
    mean: float
    """Mean bull heads per hand (lower is better)."""
    low: float
    high: float
    """The 95% confidence interval of the mean (normal approximation)."""
    hands: int
    ms_per_decision: float
    """Mean wall time of one call to the bot's ``decide``, in milliseconds."""

    def __str__(self) -> str:
        return (
            f"{self.bot} against {self.players - 1}× {self.opponent}: {self.mean:.2f} bulls/hand"
            f" [{self.low:.2f}, {self.high:.2f}] over {self.hands} hands,"
            f" {self.ms_per_decision:.3f} ms/decision"
        )


@dataclass(frozen=True, slots=True)
class _HandResult:
    bulls: int
    think_seconds: float
    decisions: int


def match_seed(seed: int, hand: int) -> int:
    """The match seed of hand number ``hand`` of an evaluation run with ``seed``."""
    digest = hashlib.blake2b(f"evaluate/{seed}/{hand}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def bulls_per_hand(
    bot: str,
    *,
    hands: int = 2000,
    seed: int = 0,
    players: int = 4,
    processes: int = 1,
    opponent: str = "random",
) -> Evaluation:
    """Play ``hands`` single hands of classic with ``bot`` in seat 0 and measure its bull heads.

    ``processes`` > 1 splits the hands over fresh (spawned) processes, so a script that calls
    this needs the usual ``if __name__ == "__main__":`` guard; the bull heads are the same for
    any number of processes, only the timing differs.
    """
    if hands < 1:
        raise ValueError(f"an evaluation needs at least one hand, got {hands}")
    for name in (bot, opponent):
        reference_bot("classic", name)  # an unknown name fails here, before any process starts
    seeds = [match_seed(seed, i) for i in range(hands)]
    play = partial(_play_hands, bot, opponent, players)
    if processes > 1:
        chunks = [seeds[i::processes] for i in range(processes)]
        with multiprocessing.get_context("spawn").Pool(processes) as pool:
            parts = pool.map(play, chunks)
        results = [parts[i % processes][i // processes] for i in range(hands)]
    else:
        results = play(seeds)
    bulls = [r.bulls for r in results]
    mean = sum(bulls) / hands
    variance = sum((b - mean) ** 2 for b in bulls) / (hands - 1) if hands > 1 else 0.0
    half = 1.96 * math.sqrt(variance / hands)
    decisions = sum(r.decisions for r in results)
    think = sum(r.think_seconds for r in results)
    return Evaluation(
        bot=bot,
        opponent=opponent,
        players=players,
        mean=mean,
        low=mean - half,
        high=mean + half,
        hands=hands,
        ms_per_decision=1000.0 * think / decisions if decisions else 0.0,
    )


def _play_hands(bot: str, opponent: str, players: int, seeds: list[int]) -> list[_HandResult]:
    variant = make_variant("classic", {"players": players, "hands": 1, "target": None})
    factories = [reference_bot("classic", bot)] + [reference_bot("classic", opponent)] * (players - 1)
    results = []
    for seed in seeds:
        match = play_match(variant, factories, seed)
        results.append(_HandResult(match.outcome.scores[0], match.think_seconds[0], match.decisions[0]))
    return results


def main(argv: list[str] | None = None) -> None:
    """``python -m arena.evaluate mc --hands 2000 --processes 2``: print one evaluation per bot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bots", nargs="+", help="reference bot names, e.g. random heuristic mc")
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--opponent", default="random")
    args = parser.parse_args(argv)
    for bot in args.bots:
        evaluation = bulls_per_hand(
            bot,
            hands=args.hands,
            seed=args.seed,
            players=args.players,
            processes=args.processes,
            opponent=args.opponent,
        )
        print(evaluation, flush=True)


if __name__ == "__main__":
    main()
