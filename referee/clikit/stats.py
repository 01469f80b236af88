"""The interval of a mean, as the commands report it: the 95% t interval over blocks, and its JSON.

``sixnimmt play`` (the SDK), the platform's standings (``arena``, ``bot play``) and their
``--json`` share it. Each game's seed is the seeding contract's, :mod:`referee.rules.seeding`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042)  # fmt: skip
"""Student's t, 97.5% quantile, for 1 to 30 degrees of freedom (beyond: a series in 1/df)."""


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom."""
    if df <= len(T_975):
        return T_975[df - 1]
    z = 1.959964
    # Cornish-Fisher expansion: within 1e-4 of the exact value from 30 degrees of freedom on.
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def t_interval(values: Sequence[float]) -> tuple[float | None, float | None]:
    """The 95% t interval of the mean of per-block values; ``(None, None)`` below two blocks.

    One block says nothing about its own spread, so it gets no interval rather than a
    zero-width one; with few blocks the t quantile widens the interval as it should.
    """
    n = len(values)
    if n < 2:
        return None, None
    mean = statistics.fmean(values)
    half = t_quantile_975(n - 1) * statistics.stdev(values) / math.sqrt(n)
    return mean - half, mean + half


def interval_json(low: float | None, high: float | None) -> list[float] | None:
    """An interval as ``--json`` gives it: ``[low, high]`` to three decimals, ``None`` for none."""
    return None if low is None or high is None else [round(low, 3), round(high, 3)]
