"""The rules' errors: one root, a few named kinds."""

from __future__ import annotations


class RulesError(ValueError):
    """Something the rules do not allow."""


class ConfigError(RulesError):
    """A variant configuration value is out of bounds or inconsistent."""


class IllegalActionError(RulesError):
    """An action is not among the legal options of its decision."""


class NotPendingError(RulesError):
    """Actions were given for seats that have no pending decision, or are missing for some that have."""


class GameOverError(RulesError):
    """The game has ended; nothing more can be applied."""


class UnknownVariantError(RulesError):
    """No variant is registered under that name."""


class TranscriptError(RulesError):
    """A transcript does not replay to what it claims: tampered, truncated or from another engine."""
