"""League tables, pure: the batch fit (:mod:`workers.stats.ranking`), the online rating, head-to-head.

The table's order comes from the batch fit. OpenSkill (Plackett–Luce) is an online rating: it
is replayed over the results in match order (block number, rotation) and kept for matchmaking
in continuous ladders, labelled as such; it never orders a league table.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

from openskill.models import PlackettLuce, PlackettLuceRating

from workers.stats import ranking


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
    method: str = "ls",
    confidence: float = 0.95,
    lowest: float | None = None,
) -> tuple[list[dict[str, Any]], ranking.Standings]:
    """The league table, best first: the batch fit's rows with the online rating alongside.

    The order, intervals and "told apart" marks come from :func:`workers.stats.ranking.compute`,
    the same whatever order the results were stored in. OpenSkill (mu, sigma, ordinal) is
    kept only as an online rating for matchmaking: it depends on the order games are fed (here
    block number, rotation) and does not order the table.
    """
    standings = ranking.compute(
        results,
        entrants,
        higher_is_better=higher_is_better,
        method=method,
        confidence=confidence,
        lowest=lowest,
    )
    matches = [list(seats) for _, seats in groupby(results, key=lambda r: r["match_id"])]
    seatings = ([(s["position"], s["rank"]) for s in seats] for seats in matches)
    last = deque(rate_matches(seatings, entrants), 1)
    players = last[0] if last else [PlackettLuce().rating(name=str(p)) for p in range(entrants)]
    gaps = {pair.upper: pair for pair in standings.pairs}
    rows = []
    for row in standings.rows:
        rating = players[row.position]
        pair = gaps.get(row.position)
        rows.append(
            {
                "position": row.position,
                "method": standings.method,
                "score": row.score,
                "mu": rating.mu,
                "sigma": rating.sigma,
                "ordinal": rating.ordinal(),
                "games": row.games,
                "mean_score": row.mean_score,
                "ci_low": row.ci_low,
                "ci_high": row.ci_high,
                "faults": row.faults,
                "detail": {
                    "rank": row.rank,
                    "rank_low": row.rank_low,
                    "rank_high": row.rank_high,
                    "score_low": row.score_low,
                    "score_high": row.score_high,
                    "blocks": row.blocks,
                    "design": standings.design,
                    "next": None
                    if pair is None
                    else {
                        "position": pair.lower,
                        "gap": pair.gap,
                        "low": pair.low,
                        "high": pair.high,
                        "p_holm": pair.p_holm,
                        "distinct": pair.distinct,
                    },
                },
            }
        )
    return rows, standings


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
