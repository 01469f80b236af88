"""The progress every long-running command shows on stderr, never with ``--json``: a bar on a
terminal, and a plain line every few percent anywhere else (a pipe, a log file, CI), so a long run
is never silent until it ends."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import IO, Any

STEP_PERCENT = 5
"""Off a terminal, a line each time the run passes another multiple of this many percent."""


def progress_bar(total: int, unit: str, quiet: bool) -> Any:
    """Progress on stderr: a tqdm bar on a terminal, :class:`ProgressLines` elsewhere, nothing when
    ``quiet``. Both take ``update(n)``, ``write(message)``, a ``total`` that may grow, ``refresh()``."""
    if not quiet and not sys.stderr.isatty():
        return ProgressLines(total, unit, sys.stderr)
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, disable=quiet, file=sys.stderr, leave=False)


class ProgressLines:
    """One line per :data:`STEP_PERCENT` percent of progress, e.g. ``sixnimmt: 6/30 blocks (20%),
    0:12 elapsed, about 0:48 left``. The duck twin of the tqdm bar the commands use."""

    def __init__(self, total: int, unit: str, file: IO[str]) -> None:
        self.total = total
        self.n = 0
        self.unit = unit
        self.file = file
        self._start = time.monotonic()
        self._shown: tuple[int, int] = (0, 0)
        """(n, step) of the last line: a line when the step changes (a grown total too)."""

    def __enter__(self) -> ProgressLines:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.total <= 0:
            return
        step = min(self.n, self.total) * 100 // self.total // STEP_PERCENT
        if step != self._shown[1] and self.n != self._shown[0]:
            self._shown = (self.n, step)
            self.write(self.line())

    def line(self) -> str:
        """The progress so far, in words."""
        elapsed = time.monotonic() - self._start
        percent = min(self.n, self.total) * 100 // max(self.total, 1)
        text = f"sixnimmt: {self.n}/{self.total} {self.unit} ({percent}%), {_clock(elapsed)} elapsed"
        if 0 < self.n < self.total:
            text += f", about {_clock(elapsed * (self.total - self.n) / self.n)} left"
        return text

    def refresh(self) -> None:
        """Nothing to redraw: the next line shows a grown total."""

    def write(self, message: str, file: IO[str] | None = None) -> None:
        print(message, file=file or self.file, flush=True)

    def close(self) -> None:
        return None


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"
