"""The one error of planning, shared by every planner of the package."""

from __future__ import annotations


class PlanError(ValueError):
    """A league that cannot be planned: too few entrants for the table, an unknown format."""
