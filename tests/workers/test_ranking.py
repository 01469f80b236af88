"""The batch fit behind league tables: order independence, bias, intervals, tests, rank intervals."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from workers.stats import ranking


def simulate(
    skills: Sequence[float],
    tables: Sequence[Sequence[int]],
    deals: int,
    seed: int,
    *,
    noise: float = 6.0,
    shared_sum: bool = False,
) -> list[dict[str, Any]]:
    """Seat results of duplicate blocks (every rotation of a deal) under an additive model.

    A seat's score is its skill, plus its hand's luck (the same hand in every rotation), plus
    the game's level, plus noise. With ``shared_sum`` the table shares a fixed total: a strong
    opponent's low score pushes the others' up, as bull heads do.
    """
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    block = 0
    for table in tables:
        for _ in range(deals):
            k = len(table)
            hands = rng.normal(0, 2, size=k)
            for rotation in range(k):
                seating = tuple(table[rotation:]) + tuple(table[:rotation])
                level = rng.normal(0, 3)
                scores = [skills[p] + hands[s] + level + rng.normal(0, noise) for s, p in enumerate(seating)]
                if shared_sum:
                    shift = (40.0 - sum(scores)) / k
                    scores = [x + shift for x in scores]
                ranks = [1 + sum(other < mine for other in scores) for mine in scores]
                for seat, position in enumerate(seating):
                    rows.append(
                        {
                            "block": block,
                            "rotation": rotation,
                            "match_id": block * 100 + rotation,
                            "seat": seat,
                            "position": position,
                            "score": scores[seat],
                            "rank": ranks[seat],
                            "faults": 0,
                        }
                    )
            block += 1
    return rows


def round_robin(n: int, k: int) -> list[tuple[int, ...]]:
    return list(itertools.combinations(range(n), k))


LADDER = [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
"""Six bots, lower is better, two bull heads per game apart."""


def test_the_same_results_in_any_order_give_the_same_table() -> None:
    rows = simulate(LADDER, round_robin(6, 4), 2, seed=1)
    first = ranking.compute(rows, 6, higher_is_better=False)
    for seed in range(3):
        shuffled = list(rows)
        random.Random(seed).shuffle(shuffled)
        assert ranking.compute(shuffled, 6, higher_is_better=False) == first
    pl = ranking.compute(rows, 6, higher_is_better=False, method="pl")
    assert ranking.compute(rows[::-1], 6, higher_is_better=False, method="pl") == pl


def test_a_large_round_robin_recovers_the_order_and_the_gaps() -> None:
    rows = simulate(LADDER, round_robin(6, 4), 12, seed=2)
    table = ranking.compute(rows, 6, higher_is_better=False)
    assert table.order() == [0, 1, 2, 3, 4, 5]
    for pair in table.pairs:
        assert pair.low is not None and pair.high is not None
        assert pair.low < 2.0 < pair.high  # the true gap
        assert pair.distinct
    # Skills average to the league's mean score per game, so a score reads like one.
    scores = [row.score for row in table.rows]
    assert np.mean(scores) == pytest.approx(np.mean([r["score"] for r in rows]))
    # On a complete round-robin the plain means give the same order.
    assert [row.position for row in sorted(table.rows, key=lambda r: r.mean_score)] == table.order()


def test_the_fit_is_unbiased_where_plain_means_are_not() -> None:
    """Bot 1 always sits with the two strongest bots, bot 2 always with the two weakest.

    Bull heads are shared: strong opponents leave more for the others. Bot 1 is better than
    bot 2 by 1 per game, but its plain mean is worse; the fit, comparing seats within a game
    through the bots they share, gets it right.
    """
    skills = [0.0, 5.0, 6.0, 11.0, 12.0, 0.5]
    # Bots 0 and 5 are strong; 3 and 4 weak. Tables chain every bot to every other.
    tables = [(1, 0, 5), (2, 3, 4), (0, 3, 5), (0, 4, 5), (1, 3, 0), (2, 5, 4)]
    rows = simulate(skills, tables, 60, seed=3, noise=3.0, shared_sum=True)
    table = ranking.compute(rows, 6, higher_is_better=False)
    by_position = {row.position: row for row in table.rows}
    assert by_position[1].mean_score > by_position[2].mean_score  # plain means: bot 1 looks worse
    assert by_position[1].score < by_position[2].score  # the fit: bot 1 is better
    gap = by_position[2].score - by_position[1].score
    assert by_position[1].score_low is not None
    assert gap == pytest.approx(1.0, abs=0.6)


def test_one_block_gives_no_interval_and_two_give_a_real_one() -> None:
    one = ranking.compute(simulate(LADDER[:4], [(0, 1, 2, 3)], 1, seed=4), 4, higher_is_better=False)
    assert one.blocks == 1
    for row in one.rows:
        assert (row.score_low, row.score_high, row.ci_low, row.ci_high) == (None, None, None, None)
        assert (row.rank_low, row.rank_high) == (1, 4)
    assert all(pair.low is None and not pair.distinct for pair in one.pairs)
    two = ranking.compute(simulate(LADDER[:4], [(0, 1, 2, 3)], 2, seed=4), 4, higher_is_better=False)
    for row in two.rows:
        assert row.score_low is not None and row.score_high is not None
        assert row.score_low < row.score < row.score_high
        assert row.ci_low is not None and row.ci_high is not None and row.ci_low < row.ci_high


def test_gap_intervals_cover_the_true_gap_at_a_table_of_eight_with_two_deals() -> None:
    """The case where bootstrap intervals covered 0–53%: here the t interval must hold."""
    skills = [0.0, 1.5, 3.0, 4.5, 6.0, 7.5, 9.0, 10.5]
    covered = total = 0
    for seed in range(150):
        table = ranking.compute(simulate(skills, [tuple(range(8))], 2, seed=seed), 8, higher_is_better=False)
        for pair in table.pairs:
            assert pair.low is not None and pair.high is not None
            truth = skills[pair.lower] - skills[pair.upper]
            covered += pair.low <= truth <= pair.high
            total += 1
    assert covered / total >= 0.93


def test_bots_that_cannot_be_told_apart_are_marked() -> None:
    rows = simulate([0.0, 0.0, 6.0, 6.0], [(0, 1, 2, 3)], 16, seed=5, noise=3.0)
    table = ranking.compute(rows, 4, higher_is_better=False)
    assert set(table.order()[:2]) == {0, 1}
    first, middle, last = table.pairs
    assert not first.distinct and first.p_holm is not None and first.p_holm > 0.05
    assert middle.distinct
    assert not last.distinct
    ranks = {row.position: (row.rank_low, row.rank_high) for row in table.rows}
    assert ranks[0] == ranks[1] == (1, 2)
    assert ranks[2] == ranks[3] == (3, 4)
    assert table.separated[0][2] and not table.separated[0][1]


def test_higher_is_better_flips_the_order() -> None:
    rows = simulate(LADDER, round_robin(6, 4), 4, seed=6)
    low = ranking.compute(rows, 6, higher_is_better=False)
    high = ranking.compute(rows, 6, higher_is_better=True)
    assert high.order() == low.order()[::-1]
    assert all(pair.gap >= 0 for pair in high.pairs)


def test_plackett_luce_orders_a_clear_ladder_and_handles_ties() -> None:
    rows = simulate(LADDER, round_robin(6, 4), 6, seed=7)
    for row in rows[::7]:  # some shared places
        row["rank"] = 1
    table = ranking.compute(rows, 6, higher_is_better=False, method="pl")
    assert table.method == "pl"
    assert table.order() == [0, 1, 2, 3, 4, 5]
    assert all(row.score_low is not None for row in table.rows)


def test_holm_adjusts_step_down() -> None:
    assert ranking.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert ranking.holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert ranking.holm([]) == []


def test_a_block_that_holds_the_design_together_withholds_intervals() -> None:
    # Bots 0-1 meet 2-3 only in one block: leaving it out splits the league in two.
    tables = [(0, 1), (0, 1), (2, 3), (2, 3), (1, 2)]
    rows = simulate([0.0, 1.0, 2.0, 3.0], tables, 1, seed=8)
    table = ranking.compute(rows, 4, higher_is_better=False)
    assert "holds the design together" in table.note
    assert all(row.score_low is None for row in table.rows)


def test_entrants_without_games_come_last() -> None:
    rows = simulate(LADDER[:3], [(0, 1, 2)], 3, seed=9)
    table = ranking.compute(rows, 5, higher_is_better=False)
    assert table.order()[-2:] == [3, 4]
    assert [row.games for row in table.rows[-2:]] == [0, 0]
    assert len(table.pairs) == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"method": "elo"}, "unknown ranking method"), ({"confidence": 1.5}, "confidence must be")],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ranking.RankingError, match=message):
        ranking.compute([], 2, higher_is_better=False, **kwargs)


def test_json_is_plain_values() -> None:
    table = ranking.compute(simulate(LADDER[:4], [(0, 1, 2, 3)], 3, seed=10), 4, higher_is_better=False)
    out = ranking.to_json(table, ["a", "b", "c", "d"])
    assert [row["bot"] for row in out["standings"]] == ["abcd"[p] for p in table.order()]
    assert all(type(row["score"]) is float for row in out["standings"])
    assert all(isinstance(pair["distinct"], bool) for pair in out["pairs"])
    assert not any(isinstance(v, float) and math.isnan(v) for row in out["standings"] for v in row.values())


def _sampled_rows(n: int, tables_per_bot: int, seed: int) -> list[dict[str, Any]]:
    """A sampled league's results: random tables of four, four rotations a block, skills apart."""
    rng = random.Random(seed)
    skill = [rng.gauss(0, 3) for _ in range(n)]
    rows = []
    for block in range(tables_per_bot * n // 4):
        seats = rng.sample(range(n), 4)
        for rotation in range(4):
            for p in seats:
                score = skill[p] + rng.gauss(0, 8)
                rows.append({"block": block, "rotation": rotation, "position": p, "score": score, "rank": 1})
    return rows


@pytest.mark.parametrize("n", [9, 40, 80])
def test_the_low_rank_jackknife_of_large_leagues_equals_the_batched_one(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above BATCHED_CELLS each left-out block is a Woodbury update of the whole fit: the same
    intervals, pair tests and rank intervals as solving every leave-one-out system."""
    rows = _sampled_rows(n, 10, seed=n)
    batched = ranking.compute(rows, n, higher_is_better=False)
    monkeypatch.setattr(ranking, "BATCHED_CELLS", 0)
    updated = ranking.compute(rows, n, higher_is_better=False)
    assert updated.order() == batched.order()
    assert updated.separated == batched.separated
    for a, b in zip(updated.rows, batched.rows, strict=True):
        assert (a.rank_low, a.rank_high) == (b.rank_low, b.rank_high)
        assert a.score_low == pytest.approx(b.score_low, abs=1e-9)
        assert a.score_high == pytest.approx(b.score_high, abs=1e-9)
    for a, b in zip(updated.pairs, batched.pairs, strict=True):
        assert a.se == pytest.approx(b.se, abs=1e-9) and a.distinct == b.distinct


def test_standings_of_hundreds_of_bots_have_intervals_and_rank_intervals() -> None:
    """A sampled league of 300 bots (900 blocks): every bot has an interval and a rank interval."""
    n = 300
    standings = ranking.compute(_sampled_rows(n, 12, seed=3), n, higher_is_better=False)
    assert len(standings.rows) == n and not standings.note
    assert all(r.score_low is not None and r.rank_low <= r.rank <= r.rank_high for r in standings.rows)
    assert len(standings.separated) == n and any(any(row) for row in standings.separated)
