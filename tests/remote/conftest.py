"""Fixtures of the remote-bot tests (their kit is remotekit)."""

from remotekit import site

__all__ = ["site"]
