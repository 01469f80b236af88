"""Pure rules engines of the 6 nimmt! family: no I/O, no global RNG, immutable states.

Start at :func:`make_variant`; the interface is in :mod:`referee.rules.core`.
"""

from referee.rules.chance import SeededChance
from referee.rules.core import (
    CHANCE,
    Action,
    Decision,
    DecisionKind,
    Event,
    ForcedMoves,
    Outcome,
    Termination,
    Variant,
    View,
    event_to_json,
    shared_ranks,
)
from referee.rules.errors import (
    ConfigError,
    GameOverError,
    IllegalActionError,
    NotPendingError,
    RulesError,
    TranscriptError,
    UnknownVariantError,
)
from referee.rules.registry import VARIANTS, find_variant, make_variant

__all__ = [
    "CHANCE",
    "VARIANTS",
    "Action",
    "ConfigError",
    "Decision",
    "DecisionKind",
    "Event",
    "ForcedMoves",
    "GameOverError",
    "IllegalActionError",
    "NotPendingError",
    "Outcome",
    "RulesError",
    "SeededChance",
    "Termination",
    "TranscriptError",
    "UnknownVariantError",
    "Variant",
    "View",
    "event_to_json",
    "find_variant",
    "make_variant",
    "shared_ranks",
]
