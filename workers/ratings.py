"""League ratings, pure: OpenSkill (Plackett–Luce), mean score with a bootstrap interval, head-to-head.

Everything is recomputed from the stored results in match order (block number, rotation), so
the same results always give the same table, however the blocks were scheduled.
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

from openskill.models import PlackettLuce, PlackettLuceRating

from bot_sdk.tournament import bootstrap_interval

RESAMPLES = 2000


def rate_matches(
    matches: Iterable[Sequence[tuple[int, int]]], entrants: int
) -> Iterator[list[PlackettLuceRating]]:
    """OpenSkill Plackett–Luce over matches in order; after each match, every entrant's rating.

    Each match is its seats' ``(position, rank)`` pairs. The one rating loop of the project: the
    standings and the dashboard's rating paths both replay it.
    """
    model = PlackettLuce()
    players = [model.rating(name=str(position)) for position in range(entrants)]
    for seats in matches:
        rated = model.rate([[players[position]] for position, _ in seats], ranks=[rank for _, rank in seats])
        for (position, _), team in zip(seats, rated, strict=True):
            players[position] = team[0]
        yield players


def prior_ordinal() -> float:
    """The conservative rating of an entrant that has not played."""
    return float(PlackettLuce().rating().ordinal())


def compute_ratings(
    results: Sequence[Mapping[str, Any]],
    entrants: int,
    *,
    higher_is_better: bool,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per entrant position: mu, sigma, ordinal, games, mean score and its interval, faults.

    ``results`` are seat results in match order, each with ``block``, ``match_id``,
    ``position``, ``score``, ``rank`` and ``faults``.
    """
    block_scores: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    games = [0] * entrants
    faults = [0] * entrants
    matches = [list(seats) for _, seats in groupby(results, key=lambda r: r["match_id"])]
    seatings = ([(s["position"], s["rank"]) for s in seats] for seats in matches)
    last = deque(rate_matches(seatings, entrants), 1)
    players = last[0] if last else [PlackettLuce().rating(name=str(p)) for p in range(entrants)]
    for seats in matches:
        for s in seats:
            block_scores[s["position"]][s["block"]].append(s["score"])
            games[s["position"]] += 1
            faults[s["position"]] += int(s["faults"])
    rng = random.Random(seed)
    rows = []
    for position in range(entrants):
        means = [statistics.fmean(v) for _, v in sorted(block_scores[position].items())]
        low, high = bootstrap_interval(means, rng, RESAMPLES) if means else (0.0, 0.0)
        rating = players[position]
        rows.append(
            {
                "position": position,
                "mu": rating.mu,
                "sigma": rating.sigma,
                "ordinal": rating.ordinal(),
                "games": games[position],
                "mean_score": statistics.fmean(means) if means else 0.0,
                "ci_low": low,
                "ci_high": high,
                "faults": faults[position],
            }
        )
    return rows


def head_to_head(results: Iterable[Mapping[str, Any]], entrants: int) -> list[list[dict[str, int]]]:
    """``table[a][b]``: games where a and b met, and how often a ranked above, level with, below b."""
    table = [
        [{"games": 0, "ahead": 0, "level": 0, "behind": 0} for _ in range(entrants)] for _ in range(entrants)
    ]
    for _, seats_iter in groupby(results, key=lambda r: r["match_id"]):
        seats = list(seats_iter)
        for a in seats:
            for b in seats:
                if a["position"] == b["position"]:
                    continue
                cell = table[a["position"]][b["position"]]
                cell["games"] += 1
                if a["rank"] < b["rank"]:
                    cell["ahead"] += 1
                elif a["rank"] == b["rank"]:
                    cell["level"] += 1
                else:
                    cell["behind"] += 1
    return table
