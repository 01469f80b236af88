"""League planning and ratings: pure functions, deterministic."""

from __future__ import annotations

import itertools
import random

import pytest

from workers.planning import PlanError, plan_league
from workers.stats.ratings import compute_ratings, head_to_head


def test_round_robin_plans_every_table_with_duplicate_deals() -> None:
    blocks = plan_league("round-robin", 6, 4, 2, seed=3)
    assert len(blocks) == 15 * 2
    assert {b.entrants for b in blocks} == set(itertools.combinations(range(6), 4))
    assert [b.number for b in blocks] == list(range(30))


def test_a_gauntlet_seats_the_challenger_at_every_table() -> None:
    blocks = plan_league("gauntlet", 5, 3, 1, seed=3)
    assert len(blocks) == 6  # C(4, 2) tables of the challenger with two of the field
    assert all(b.entrants[0] == 0 for b in blocks)
    assert {b.entrants[1:] for b in blocks} == set(itertools.combinations(range(1, 5), 2))


def test_the_same_league_plans_identically_and_another_seed_differently() -> None:
    assert plan_league("gauntlet", 5, 3, 2, seed=9) == plan_league("gauntlet", 5, 3, 2, seed=9)
    assert plan_league("round-robin", 5, 3, 2, seed=9) != plan_league("round-robin", 5, 3, 2, seed=10)


@pytest.mark.parametrize(
    ("fmt", "n", "k", "deals", "message"),
    [
        ("swiss", 4, 2, 1, "unknown league format"),
        ("round-robin", 3, 4, 1, "needs at least 4 entrants"),
        ("gauntlet", 4, 1, 1, "needs at least"),
        ("round-robin", 4, 2, 0, "deals must be at least 1"),
    ],
)
def test_bad_plans_are_refused(fmt: str, n: int, k: int, deals: int, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        plan_league(fmt, n, k, deals, seed=1)


def results_of(games: list[tuple[int, list[tuple[int, int, int]]]]) -> list[dict[str, int]]:
    """Seat results from (block, [(position, score, rank) per seat]) per match."""
    rows = []
    rotations: dict[int, int] = {}
    for match_id, (block, seats) in enumerate(games):
        rotation = rotations[block] = rotations.get(block, -1) + 1
        for seat, (position, score, rank) in enumerate(seats):
            rows.append(
                {
                    "block": block,
                    "rotation": rotation,
                    "match_id": match_id,
                    "seat": seat,
                    "position": position,
                    "score": score,
                    "rank": rank,
                    "faults": 0,
                }
            )
    return rows


def test_a_bot_that_always_wins_rates_above_one_that_always_loses() -> None:
    rng = random.Random(1)
    games = []
    for block in range(30):
        for _ in range(2):
            scores = [rng.randint(0, 5), rng.randint(10, 20), rng.randint(30, 40)]
            order = [0, 1, 2]
            rng.shuffle(order)  # seats vary; positions keep their strength
            games.append((block, [(p, scores[p], p + 1) for p in order]))
    rows, _ = compute_ratings(results_of(games), 3, higher_is_better=False)
    assert [r["position"] for r in rows] == [0, 1, 2]
    assert rows[0]["ordinal"] > rows[1]["ordinal"] > rows[2]["ordinal"]
    assert rows[0]["mu"] > 25 > rows[2]["mu"]
    assert all(r["games"] == 60 for r in rows)
    for r in rows:
        assert r["ci_low"] <= r["mean_score"] <= r["ci_high"]
    assert rows[0]["ci_high"] < rows[1]["ci_low"]


def test_the_online_rating_depends_on_match_order_but_the_table_does_not() -> None:
    games = [(0, [(0, 1, 1), (1, 5, 2)]), (1, [(1, 0, 1), (0, 9, 2)]), (2, [(0, 2, 1), (1, 2, 1)])]
    first, fit = compute_ratings(results_of(games), 2, higher_is_better=False)
    assert compute_ratings(results_of(games), 2, higher_is_better=False)[0] == first
    # The same results stored in the opposite order.
    reversed_rows, reversed_fit = compute_ratings(results_of(games)[::-1], 2, higher_is_better=False)
    by_position = {r["position"]: r for r in reversed_rows}
    assert by_position[first[0]["position"]]["mu"] != first[0]["mu"]  # OpenSkill: order matters
    assert reversed_fit == fit  # the batch fit: it does not


def test_head_to_head_counts_who_finished_ahead() -> None:
    games = [(0, [(0, 1, 1), (1, 5, 2), (2, 5, 2)]), (0, [(1, 1, 1), (0, 5, 2), (2, 9, 3)])]
    table = head_to_head(results_of(games), 3)
    assert table[0][1] == {"games": 2, "ahead": 1, "level": 0, "behind": 1}
    assert table[1][2] == {"games": 2, "ahead": 1, "level": 1, "behind": 0}
    assert table[2][1] == {"games": 2, "ahead": 0, "level": 1, "behind": 1}
