"""bench/bench_competition.py: the final phase's games against a fixed round-robin's, in quick mode."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load(name: str) -> Any:
    """A bench module, loaded as bench/run.py loads it (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_ladder_is_spaced_like_the_top_of_a_field() -> None:
    bench = load("bench_competition")
    gaps = np.diff(bench.shape())
    assert gaps.min() == pytest.approx(1.0)
    assert list(gaps) == sorted(gaps, reverse=True), "the top stands apart, the rest are bunched"
    assert gaps[0] > 3 * gaps[-1]
    assert bench.LADDER[0] == 0 and all(0 < p < 1 for p in bench.LADDER[1:])


def test_the_fixed_designs_games_are_interpolated_at_the_finals_rate() -> None:
    bench = load("bench_competition")
    curve = [(0.0, 0.0), (280.0, 0.5), (560.0, 0.9), (840.0, 0.97)]
    assert bench.games_at(curve, 0.9) == 560.0
    assert bench.games_at(curve, 0.95) == pytest.approx(560 + 280 * 0.05 / 0.07)
    assert bench.games_at(curve, 0.25) == pytest.approx(140.0)
    with pytest.raises(ValueError):
        bench.games_at(curve, 0.99)


@pytest.mark.slow
def test_the_bench_runs_in_quick_mode_and_yields_its_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the pool is played, not read from a cache
    bench = load("bench_competition")
    rows = list(bench.run(quick=True))
    assert [(row["name"], row["unit"]) for row in rows] == [
        ("competition.final.games_ratio", "ratio"),
        ("competition.final.exact_order", "fraction"),
        ("competition.final.games", "games"),
    ]
    values = {row["name"]: row["value"] for row in rows}
    assert values["competition.final.games_ratio"] > 0
    assert 0 <= values["competition.final.exact_order"] <= 1
    # The first round alone is the Steiner system's 14 deals of 4 games.
    assert values["competition.final.games"] >= 56
    assert list((tmp_path / "sixnimmt-bench-competition").glob("pool-*.npz"))


@pytest.mark.slow
def test_the_adaptive_rule_keeps_its_confidence_on_the_top_of_a_field() -> None:
    """The calibration's premise on the model ladder: seeded finals at C = 0.95 (their outcome is a
    function of the seeds) end in the exact order at least C of the time, on fewer games on average
    than a fixed round-robin needs for 95%."""
    bench = load("bench_competition")
    data = bench.model_pool(1000)
    fixed = bench.games_at(bench.fixed_curve(data, 300, seed=5, until=0.95), 0.95)
    outcomes = bench.rank.run_adaptive(data, 0.95, 600, 60, seed=5)
    assert sum(o.exact for o in outcomes) >= 0.95 * len(outcomes)
    assert np.mean([o.games for o in outcomes]) < 0.8 * fixed
