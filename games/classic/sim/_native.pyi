"""The Monte Carlo bot's playouts in C (``_native.c``): see :func:`games.classic.sim.playouts.playouts`."""

from typing import Any

import numpy.typing as npt

Array = npt.NDArray[Any]
"""Any C-contiguous buffer of the documented type does; the module checks sizes and cards."""

def playouts(
    lasts: Array,
    counts: Array,
    heads: Array,
    hands: Array,
    first: Array,
    plays: Array,
    salt: Array,
    bulls: Array,
    odds: Array,
    taken: Array,
    chosen: Array,
    k: int,
    r: int,
    h: int,
    s: int,
    t: int,
    o: int,
    capacity: int,
    top: int,
    cheapest: float,
    /,
) -> None: ...
