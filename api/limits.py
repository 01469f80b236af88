"""Token buckets: the API's rate limits per key and per client address (``SIXNIMMT_API_*``)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict


class Buckets:
    """A token bucket per name: ``burst`` tokens at most, refilled at ``rate`` per second.

    :meth:`take` spends one token and says whether there was one. At most ``keep`` names are
    remembered (the least recently used go first), so guessed keys and addresses cannot grow
    it without bound; a name forgotten starts again full, as one never seen.
    """

    def __init__(self, rate: float, burst: int, *, keep: int = 100_000) -> None:
        self.rate, self.burst, self.keep = rate, burst, keep
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, name: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.pop(name, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            allowed = tokens >= 1.0
            if allowed:
                tokens -= 1.0
            self._buckets[name] = (tokens, now)
            while len(self._buckets) > self.keep:
                self._buckets.popitem(last=False)
            return allowed

    def retry_after(self, name: str) -> int:
        """Whole seconds until ``name`` has a token again."""
        with self._lock:
            tokens, _ = self._buckets.get(name, (float(self.burst), 0.0))
        return max(1, int((1.0 - tokens) / self.rate + 0.999))
