"""Classic 6 nimmt! in batches, for training and search: the ``sim`` extra (numpy, numba).

``pip install 'sixnimmt-arena[sim]'``. :class:`Simulator`, :class:`Batch` and the policy types
come from :mod:`games.classic.sim.batch` (which imports numba) on first use, so that importing
this package, or :mod:`games.classic.sim.playouts` (numpy only, what the Monte Carlo bot runs),
does not load the compiler. See docs/sim.md.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["Batch", "SimulationError", "Simulator"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(import_module("games.classic.sim.batch"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
