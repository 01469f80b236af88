"""Whether a process still runs: the sweeps that clean up after dead processes ask here.

A process whose pid file, directory or metrics file is left behind is gone when ``kill(pid, 0)``
finds no such process, or finds a zombie (it owns nothing any more). A process of another user
(``PermissionError``) is alive.
"""

from __future__ import annotations

import os
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether the process ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"
