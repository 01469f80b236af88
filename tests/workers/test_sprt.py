"""The SPRT of a new version against an old one: statistics by hand, real games, the plan of deals."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.tournament import Block, play_block_in_process
from workers.planning import rounds, sprt
from workers.planning.sprt import Settings
from workers.stats import ranking

BOTS = Path(__file__).parent / "sprt_bots" / "mixed.py"
MIXED = f"{BOTS}:Mixed"
MIXED_ELSEWHERE = f"{BOTS}:MixedElsewhere"
ONE_HAND = {"target": None, "hands": 1}


# -- the statistics, against values computed by hand ----------------------------------------


def test_bounds_are_walds() -> None:
    lower, upper = sprt.bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944438979, abs=1e-9)  # log(0.05 / 0.95)
    assert upper == pytest.approx(2.944438979, abs=1e-9)
    lower, upper = sprt.bounds(0.1, 0.2)
    assert lower == pytest.approx(-1.504077397, abs=1e-9)  # log(0.2 / 0.9)
    assert upper == pytest.approx(2.079441542, abs=1e-9)  # log(0.8 / 0.1)


@pytest.mark.parametrize(
    ("differences", "margin", "expected"),
    [
        # mean 2, variance (divide by n) 1: 2 · 2 · (4 − 2) / (2 · 1)
        ([1.0, 3.0], 2.0, 4.0),
        # mean 1, variance (1 + 1 + 9 + 9) / 4 = 5: 4 · 1 · (2 − 1) / (2 · 5)
        ([0.0, 2.0, -2.0, 4.0], 1.0, 0.4),
        # mean −0.5, variance 6.25: 4 · 1 · (−1 − 1) / 12.5 — evidence for H0
        ([-3.0, 2.0, -3.0, 2.0], 1.0, -0.64),
        # a mean of exactly half the margin favours neither hypothesis
        ([0.0, 1.0, 2.0], 2.0, 0.0),
    ],
)
def test_llr_by_hand(differences: list[float], margin: float, expected: float) -> None:
    assert sprt.llr(differences, margin) == pytest.approx(expected, abs=1e-12)


def test_llr_is_fishtests_normal_approximation() -> None:
    """LLR_alt2 of fishtest/stats/LLRcalc.py on an empirical distribution, times n."""
    rng = random.Random(3)
    differences = [rng.gauss(0.7, 4.0) for _ in range(50)]
    n = len(differences)
    mean = sum(differences) / n
    var = sum((d - mean) ** 2 for d in differences) / n
    s0, s1 = 0.0, 1.5
    fishtest = (s1 - s0) * (2 * mean - s0 - s1) / var / 2.0
    assert sprt.llr(differences, 1.5) == pytest.approx(n * fishtest, rel=1e-12)
    assert sprt.llr(differences, 1.5, null=0.0) == sprt.llr(differences, 1.5)


def test_the_path_is_the_llr_of_every_prefix() -> None:
    rng = random.Random(4)
    differences = [rng.gauss(1.0, 5.0) for _ in range(60)] + [2.0] * 3
    path = sprt.llr_path(differences, 2.0)
    assert path == pytest.approx([sprt.llr(differences[:n], 2.0) for n in range(1, 64)], rel=1e-9, abs=1e-12)
    assert sprt.llr_path([0.0, 0.0, 0.0], 1.0) == [0.0, -math.inf, -math.inf]


def test_llr_degenerate_cases() -> None:
    assert sprt.llr([], 1.0) == 0.0
    assert sprt.llr([5.0], 1.0) == 0.0  # no variance from one deal
    assert sprt.llr([0.0] * 5, 1.0) == -math.inf  # an exact copy: certain evidence for H0
    assert sprt.llr([3.0] * 5, 1.0) == math.inf
    assert sprt.llr([0.5] * 5, 1.0) == 0.0


def test_verdict_waits_for_min_deals_and_stops_at_the_budget() -> None:
    settings = Settings(margin=1.0, max_deals=40, min_deals=16)
    assert sprt.verdict(100.0, 15, settings) == sprt.CONTINUE
    assert sprt.verdict(2.95, 16, settings) == sprt.H1
    assert sprt.verdict(-2.95, 16, settings) == sprt.H0
    assert sprt.verdict(2.9, 16, settings) == sprt.CONTINUE
    assert sprt.verdict(2.9, 40, settings) == sprt.INCONCLUSIVE
    assert sprt.verdict(-3.0, 40, settings) == sprt.H0


def test_state_reports_a_clamped_path() -> None:
    settings = Settings(margin=1.0, min_deals=2)
    state = sprt.state([0.0, 0.0, 0.0], settings)
    assert state.verdict == sprt.H0 and state.clamped
    assert state.llr == state.lower == pytest.approx(-2.944438979)
    assert state.path == (0.0, state.lower, state.lower)
    moderate = sprt.state([0.0, 2.0, -2.0, 4.0], settings)
    assert moderate.path[-1] == pytest.approx(moderate.llr) and not moderate.clamped
    assert moderate.llr == pytest.approx(0.4)
    assert moderate.mean == 1.0 and moderate.sd == pytest.approx(math.sqrt(20 / 3))
    assert moderate.to_json()["bounds"] == [moderate.lower, moderate.upper]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"margin": 0.0}, "margin must be a positive"),
        ({"margin": -1.0}, "margin must be a positive"),
        ({"margin": math.nan}, "margin must be a positive"),
        ({"alpha": 0.0}, "alpha must lie in (0, 0.5)"),
        ({"alpha": 0.5}, "alpha must lie in (0, 0.5)"),
        ({"beta": 0.7}, "beta must lie in (0, 0.5)"),
        ({"max_deals": 0}, "max deals must be at least 1"),
        ({"new": 1, "base": 1}, "different entrants"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(sprt.SprtError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Settings(**kwargs)


def test_settings_round_trip_through_the_stopping_json() -> None:
    settings = Settings(margin=1.5, alpha=0.1, beta=0.2, max_deals=30, new=0, base=1)
    stored = settings.to_json()
    assert stored["kind"] == "sprt"
    assert Settings.from_json(stored) == settings
    with pytest.raises(sprt.SprtError, match="not an SPRT test"):
        Settings.from_json({"kind": "confidence"})


# -- the plan of deals --------------------------------------------------------------------


def test_a_deal_is_two_tables_on_one_seed() -> None:
    settings = Settings(new=0, base=1)
    blocks = sprt.plan_deals(7, 3, 2, 4, settings)
    assert [b.number for b in blocks] == [6, 7, 8, 9]
    assert [b.entrants for b in blocks] == [(0, 2, 3), (1, 2, 3), (0, 2, 3), (1, 2, 3)]
    assert blocks[0].seed == blocks[1].seed != blocks[2].seed == blocks[3].seed
    assert sprt.plan_deals(7, 3, 2, 4, settings) == blocks
    assert sprt.plan_deals(8, 3, 2, 4, settings) != blocks
    assert len(sprt.first_blocks(7, 4, Settings(max_deals=3))) == 6  # the budget caps the first batch


# -- real games ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InProcessTest:
    """A test as ``next_blocks`` sees a stored league, played in this process."""

    seed: int
    entrants: tuple[str, ...]
    stopping: Mapping[str, Any]
    config: Mapping[str, Any] = field(default_factory=lambda: dict(ONE_HAND))
    variant: str = "classic"
    name: str = "in-process test"


def rows_of(block: Block, test: InProcessTest, next_match: int) -> list[dict[str, Any]]:
    """A block's seat results, shaped as ``repo.league_results`` returns them."""
    config = {**test.config, "players": len(block.entrants)}
    rows = []
    for rotation, record in enumerate(play_block_in_process(block, test.variant, config, test.entrants)):
        for seat, position in enumerate(record.seating):
            rows.append(
                {
                    "block": block.number,
                    "rotation": rotation,
                    "match_id": next_match + rotation,
                    "seat": seat,
                    "position": position,
                    "score": record.scores[seat],
                    "rank": record.ranks[seat],
                    "faults": 0,
                }
            )
    return rows


def play_test(test: InProcessTest) -> tuple[sprt.State, list[Block], list[dict[str, Any]]]:
    """Play deals batch by batch until ``next_blocks`` has nothing more to add."""
    settings = Settings.from_json(test.stopping)
    blocks = sprt.first_blocks(test.seed, len(test.entrants), settings)
    todo = list(blocks)
    results: list[dict[str, Any]] = []
    while todo:
        for block in todo:
            results += rows_of(block, test, len(results))
        todo = rounds.next_blocks(test, results, blocks)  # type: ignore[arg-type]  # dispatches on "sprt"
        blocks += todo
    differences = sprt.paired_differences(results, blocks, settings, higher_is_better=False)
    return sprt.state(differences, settings), blocks, results


def stopping(**kwargs: Any) -> dict[str, Any]:
    return Settings(**kwargs).to_json()


def test_a_clear_improvement_accepts_h1() -> None:
    """The heuristic bot against itself diluted with random cards, one-hand games."""
    test = InProcessTest(
        5, ("heuristic", MIXED, "random", "heuristic", "lowest"), stopping(margin=1.0, max_deals=100)
    )
    state, blocks, _ = play_test(test)
    assert state.verdict == sprt.H1, state
    assert state.llr >= state.upper and state.mean > 1.0
    assert state.deals == len(blocks) // 2 < 100


def test_an_identical_copy_accepts_h0() -> None:
    """A deterministic bot against itself plays the very same games: every difference is zero."""
    test = InProcessTest(5, ("heuristic", "heuristic", "random", "lowest"), stopping(margin=1.0))
    state, _, _ = play_test(test)
    assert state.verdict == sprt.H0 and state.deals == sprt.MIN_DEALS
    assert state.mean == 0.0 and state.sd == 0.0 and state.clamped


def test_the_same_strategy_with_other_randomness_accepts_h0() -> None:
    """No change, but other games: the differences vary, their mean is near zero, H0 wins."""
    test = InProcessTest(
        5, (MIXED_ELSEWHERE, MIXED, "random", "heuristic", "lowest"), stopping(margin=1.0, max_deals=400)
    )
    state, _, _ = play_test(test)
    assert state.verdict == sprt.H0, state
    assert state.sd > 1.0  # other games, unlike an exact copy
    assert abs(state.mean) < 3 * state.sd / math.sqrt(state.deals)  # consistent with no change


def test_the_budget_ends_a_test_inconclusive() -> None:
    test = InProcessTest(
        5, (MIXED_ELSEWHERE, MIXED, "random", "heuristic"), stopping(margin=1.0, max_deals=6)
    )
    state, blocks, _ = play_test(test)
    assert state.verdict == sprt.INCONCLUSIVE and state.deals == 6 and len(blocks) == 12
    assert [b.number for b in blocks] == list(range(12))


def test_a_test_replays_identically_whatever_order_results_are_stored_in() -> None:
    test = InProcessTest(9, ("heuristic", MIXED, "random", "lowest"), stopping(margin=1.0, max_deals=40))
    first, blocks, results = play_test(test)
    again, blocks_again, _ = play_test(test)
    assert again == first and blocks_again == blocks
    settings = Settings.from_json(test.stopping)
    shuffled = list(results)
    random.Random(1).shuffle(shuffled)
    assert sprt.paired_differences(shuffled, blocks, settings, higher_is_better=False) == list(
        sprt.paired_differences(results, blocks, settings, higher_is_better=False)
    )
    arrays = ranking.Results.from_rows(shuffled)  # what the run loops may pass instead of rows
    assert sprt.paired_differences(arrays, blocks, settings, higher_is_better=False) == list(
        sprt.paired_differences(results, blocks, settings, higher_is_better=False)
    )
    league = InProcessTest(test.seed, test.entrants, test.stopping)
    assert sprt.next_blocks(league, arrays, blocks) == sprt.next_blocks(league, results, blocks) == []


def test_next_blocks_waits_for_every_planned_deal() -> None:
    test = InProcessTest(2, ("heuristic", MIXED, "random"), stopping(margin=1.0, max_deals=40))
    settings = Settings.from_json(test.stopping)
    blocks = sprt.first_blocks(test.seed, 3, settings)
    results: list[dict[str, Any]] = []
    for block in blocks[:-1]:  # the last table of the batch is not played yet
        results += rows_of(block, test, len(results))
    assert sprt.next_blocks(test, results, blocks) == []
    results += rows_of(blocks[-1], test, len(results))
    following = sprt.next_blocks(test, results, blocks)
    assert [b.number for b in following] == list(range(8, 16))
    assert following == sprt.plan_deals(2, 4, 4, 3, settings)


def _rows(results: Sequence[Mapping[str, Any]], block: int) -> list[Mapping[str, Any]]:
    return [r for r in results if r["block"] == block]


def test_the_difference_is_signed_so_that_positive_means_new_is_better() -> None:
    test = InProcessTest(4, ("heuristic", "random", "lowest"), stopping(margin=1.0, max_deals=4))
    settings = Settings.from_json(test.stopping)
    blocks = sprt.first_blocks(test.seed, 3, settings)
    results: list[dict[str, Any]] = []
    for block in blocks:
        results += rows_of(block, test, len(results))
    lower = sprt.paired_differences(results, blocks, settings, higher_is_better=False)
    higher = sprt.paired_differences(results, blocks, settings, higher_is_better=True)
    assert lower == [-d for d in higher]
    new = [r["score"] for r in _rows(results, 0) if r["position"] == 0]
    old = [r["score"] for r in _rows(results, 1) if r["position"] == 1]
    assert lower[0] == pytest.approx(sum(old) / len(old) - sum(new) / len(new))
