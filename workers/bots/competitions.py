"""A participant's side of a competition, for the API and the operator's commands: entering it,
and the checks of a submission or an activation made for it (its daily quota, its active
versions per account, its freeze at the end of the season).

These read and write the store only; the season's and the final's leagues are
:mod:`workers.competition`'s, which brings a competition up to date whenever it is run, shown or
closed. A season past its ``ends_at`` is frozen here at once, before anyone has closed it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Engine

from referee.rules.errors import RulesError
from referee.rules.registry import find_variant
from workers.store import repo

SEASON = "season"


class FrozenError(repo.ConflictError):
    """The competition's season is over: it takes no submission, entry or new entrant."""


def _open(engine: Engine, name: str, refused: str) -> repo.Competition:
    found = repo.find_competition(engine, name)
    if found.ended():
        raise FrozenError(f"competition {name!r} is closed: {refused}")
    return found


def enter(engine: Engine, name: str, account_id: int) -> dict[str, Any]:
    """Enter an account (:class:`FrozenError` once the season is over); entering twice is one entry."""
    found = _open(engine, name, "it takes no new entries")
    new = repo.enter(engine, found.id, account_id)
    return {"competition": name, "entered": True, "new": new}


def check_submission(engine: Engine, name: str, account_id: int, variant: str) -> repo.Competition:
    """Before an upload for a competition is read: refuse it once the season is over
    (:class:`FrozenError`), for another variant (:class:`repo.ConflictError`) or past the
    competition's daily quota (:class:`repo.QuotaError`); enter the account."""
    found = _open(engine, name, "submissions froze at the end of its season")
    try:
        canonical = find_variant(variant).name
    except RulesError as exc:
        raise repo.ConflictError(str(exc)) from None
    if canonical != found.variant:
        raise repo.ConflictError(f"competition {name!r} plays {found.variant}, not {variant}")
    midnight = dt.datetime.now(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    used = repo.competition_submissions_since(engine, found.id, account_id, midnight)
    if used >= found.submissions_per_day:
        raise repo.QuotaError(
            f"competition {name!r}: daily submission quota of {found.submissions_per_day} used;"
            " next at 00:00 UTC"
        )
    repo.enter(engine, found.id, account_id)
    return found


def check_activation(engine: Engine, account_id: int, ref: str) -> None:
    """Before an account makes its version ``ref`` active: refuse it past the ``active_per_account``
    of a competition in its season, of the version's variant, that the account entered (a version
    active already passes: activating it again changes nothing)."""
    version = repo.owned_version(engine, account_id, ref)
    if repo.is_active(engine, version.id):
        return
    active = repo.active_count(engine, account_id, version.variant)
    for row in repo.list_competitions(engine):
        if row["state"] != SEASON or row["variant"] != version.variant:
            continue
        found = repo.find_competition(engine, row["name"])
        if repo.has_entered(engine, found.id, account_id) and active >= found.active_per_account:
            per = found.active_per_account
            raise repo.ConflictError(
                f"competition {found.name!r} allows {per} active version{'' if per == 1 else 's'}"
                f" of {version.variant} per account: deactivate one first"
            )
