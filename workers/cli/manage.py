"""Operators' housekeeping commands: removing what a store no longer needs (``league delete``,
``bot retire``). Registered by :func:`workers.cli.register` beside the other league commands."""

from __future__ import annotations

from typing import Any, Callable


def register(league: Any, bots: Any, guard: Callable[..., Any]) -> None:
    """Add the housekeeping commands to the ``league`` and ``bot`` command groups."""
