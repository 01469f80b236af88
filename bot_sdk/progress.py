"""The progress bar every long-running command shows (on a terminal, and never with ``--json``)."""

from __future__ import annotations

import sys
from typing import Any


def progress_bar(total: int, unit: str, quiet: bool) -> Any:
    """A tqdm bar on stderr, disabled when ``quiet`` or when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(
        total=total, unit=unit, disable=quiet or not sys.stderr.isatty(), file=sys.stderr, leave=False
    )
