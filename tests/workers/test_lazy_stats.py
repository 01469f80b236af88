"""The league commands and the local pool's processes do not import ``scipy.stats`` (about a
second per process); the t-distribution functions the standings use are scipy.stats' own."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from workers.stats import ranking


def test_importing_the_league_and_its_pool_body_loads_no_scipy() -> None:
    code = (
        "import sys\n"
        "import workers.league, workers.play.execute, workers.play.warm\n"
        "import workers.planning.adaptive, workers.stats.ratings\n"
        "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize("df", [1, 2, 3, 7, 30, 250, 10_000])
def test_the_t_functions_are_scipy_stats_t(df: int) -> None:
    for q in (0.5, 0.9, 0.95, 0.975, 0.995, 0.5 + 0.95 / 2):
        assert ranking.t_ppf(q, df) == stats.t.ppf(q, df)
    z = np.array([0.0, 0.1, 1.0, 1.96, 4.0, 40.0])
    assert np.array_equal(ranking.t_sf(z, df), stats.t.sf(z, df))
    assert ranking.t_sf(2.5, df) == stats.t.sf(2.5, df)
    # Vectorised over degrees of freedom too, as the every-pair tests call it.
    dfs = np.array([1, 5, df])
    assert np.array_equal(ranking.t_sf(np.array([1.0, 2.0, 3.0]), dfs), stats.t.sf([1.0, 2.0, 3.0], dfs))
