"""SPRT of a new version against an old one (``sixnimmt bot test``): games to a decision, error rates.

Real games first: for each pair of bots, a pool of classic deals (games to 66, tables of four,
the field ``random, heuristic, lowest``), each deal played as ``bot test`` plays it — NEW's table
and OLD's table on one seed, every seat rotation, in this process — giving one paired difference
per deal. Then seeded trials of the test itself (:mod:`workers.planning.sprt`, default settings: margin
2 bull heads per game, α = β = 0.05, batches of 4 deals, no decision before 16, at most 200) draw
deals from the pool with replacement until the test stops.

- ``improvement``: the heuristic bot (NEW) against itself diluted with 20% random cards (OLD);
- ``no_change``: the diluted bot against the same strategy drawing its own randomness (true
  difference zero, but other games: an exact copy of a deterministic bot plays the very same
  games and stops at the first look, reported as ``identical_copy``).

Games count both tables: 8 per deal. ``sprt.error.*`` is the share of trials with the wrong
verdict (H0 for the improvement, H1 for no change); ``sprt.calibration.*`` reruns the trials on
the no-change pool shifted to a true difference of exactly 0 (α) and exactly the margin (β).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from arena.tournament import Block, play_block_in_process
from games.classic.bots import HeuristicBot
from games.classic.rules.classic import ClassicView
from referee.rules.seeding import derive_seed
from workers.planning import sprt

FIELD = ("random", "heuristic", "lowest")
HERE = Path(__file__).resolve()
SEATS = 1 + len(FIELD)


class Diluted(HeuristicBot):
    """The heuristic bot playing a random card a fifth of the time."""

    random_share = 0.2

    def choose_card(self, view: ClassicView) -> int:
        if self.rng.random() < self.random_share:
            return self.rng.choice(view.hand)
        return super().choose_card(view)


class DilutedElsewhere(Diluted):
    """:class:`Diluted` with randomness of its own: the same strength, other games."""

    def on_start(self, seat: int, variant: str, config: dict[str, Any]) -> None:
        self.rng = random.Random(self.rng.getrandbits(64) ^ 0x5EED)


def pool(new: str, old: str, deals: int) -> list[float]:
    """Paired differences of ``deals`` real deals (OLD's bull heads per game minus NEW's: positive,
    NEW better), played on two processes."""
    tables = [
        (Block(0, tuple(range(SEATS)), derive_seed(2026, "bench-sprt", n)), [bot, *FIELD])
        for n in range(deals)
        for bot in (new, old)
    ]
    config = {"players": SEATS}
    with ProcessPoolExecutor(max_workers=2) as workers:
        played = list(
            workers.map(
                play_block_in_process,
                [block for block, _ in tables],
                ["classic"] * len(tables),
                [config] * len(tables),
                [specs for _, specs in tables],
                chunksize=8,
            )
        )
    means = [statistics.fmean(r.scores[r.seating.index(0)] for r in records) for records in played]
    return [means[2 * n + 1] - means[2 * n] for n in range(deals)]


def trial(differences: Sequence[float], settings: sprt.Settings, rng: random.Random) -> tuple[str, int]:
    """One test drawing deals from the pool until it stops: (verdict, deals)."""
    drawn: list[float] = []
    while True:
        for _ in range(min(settings.batch, settings.max_deals - len(drawn))):
            drawn.append(rng.choice(differences))
        verdict = sprt.verdict(sprt.llr(drawn, settings.margin), len(drawn), settings)
        if verdict != sprt.CONTINUE:
            return verdict, len(drawn)


def trials(differences: Sequence[float], count: int, seed: int) -> list[tuple[str, int]]:
    settings = sprt.Settings()
    rng = random.Random(seed)
    return [trial(differences, settings, rng) for _ in range(count)]


def run(quick: bool) -> Iterator[dict[str, Any]]:
    deals, count = (64, 200) if quick else (480, 2000)
    diluted, elsewhere = f"{HERE}:Diluted", f"{HERE}:DilutedElsewhere"
    games_per_deal = 2 * SEATS
    margin = sprt.Settings().margin
    improvement = pool("heuristic", diluted, deals)
    no_change = pool(elsewhere, diluted, deals)
    scenarios = (("improvement", improvement, sprt.H0), ("no_change", no_change, sprt.H1))
    for name, differences, wrong in scenarios:
        outcomes = trials(differences, count, seed=1)
        games = statistics.median(n for _, n in outcomes) * games_per_deal
        yield {"name": f"sprt.games_to_decision.{name}", "value": games, "unit": "games (median)"}
        yield {
            "name": f"sprt.error.{name}",
            "value": round(sum(v == wrong for v, _ in outcomes) / count, 4),
            "unit": "share of trials",
        }
        yield {
            "name": f"sprt.inconclusive.{name}",
            "value": round(sum(v == sprt.INCONCLUSIVE for v, _ in outcomes) / count, 4),
            "unit": "share of trials",
        }
        yield {
            "name": f"sprt.true_difference.{name}",
            "value": round(statistics.fmean(differences), 3),
            "unit": "bull heads/game (pool mean)",
        }
        yield {
            "name": f"sprt.sd_per_deal.{name}",
            "value": round(statistics.stdev(differences), 3),
            "unit": "bull heads/game (pool)",
        }
    copy = pool("heuristic", "heuristic", sprt.MIN_DEALS)
    verdict, used = trial(copy, sprt.Settings(), random.Random(1))
    assert verdict == sprt.H0, verdict
    yield {"name": "sprt.games_to_decision.identical_copy", "value": used * games_per_deal, "unit": "games"}
    centred = [d - statistics.fmean(no_change) for d in no_change]
    for name, shift, wrong in (("alpha", 0.0, sprt.H1), ("beta", margin, sprt.H0)):
        outcomes = trials([d + shift for d in centred], count, seed=2)
        yield {
            "name": f"sprt.calibration.{name}",
            "value": round(sum(v == wrong for v, _ in outcomes) / count, 4),
            "unit": "share of trials (nominal 0.05)",
        }
