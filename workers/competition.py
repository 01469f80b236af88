"""Competitions: a season ladder of the entered accounts' active versions, then a final.

A competition (``sixnimmt competition create``) is played as two leagues, made through the same
path as ``league create`` (:func:`workers.league.create`):

- the **season**, a ladder (:mod:`workers.planning.ladder`: placement tables first, then a share
  of random tables and tables where the ratings are uncertain) named ``NAME-season``, made once
  ``table_size`` versions are entered. Its entrants follow the entered accounts' active versions
  of the competition's variant (at most ``active_per_account`` per account, the first activated):
  :func:`sync` adds a version made active to the ladder and makes a deactivated one inactive (it
  keeps its results and sits at no new table);
- the **final**, made when the season ends (its ``ends_at`` is past whenever the competition is
  touched, or ``competition close``): submissions for the competition are refused from then on,
  the season's tables not yet claimed are dropped and its ladder stops, and an adaptive league
  (:mod:`workers.planning.adaptive`) named ``NAME-final`` among the season's top ``final_top``
  (of the versions still active) plays fresh duplicate deals (a new random seed and deal key)
  until its order is settled at ``final_until_confident`` or ``final_max_deals`` deals are played.

State: ``season`` → ``final`` → ``finished`` (the final league finished; or no final, with fewer
than two finalists).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Engine

from referee.rules.registry import find_variant, make_variant
from referee.settings import load as load_settings
from workers import league as leagues
from workers.bots import competitions as entries
from workers.bots.competitions import FrozenError
from workers.planning import PlanError, adaptive, ladder
from workers.store import repo
from workers.store import standings as stored_standings
from workers.store.repo.competitions import FINAL, FINISHED, SEASON

DEFAULT_FINAL_MAX_DEALS = 200

__all__ = ["FrozenError", "close", "create", "enter", "run", "status", "sync", "touch"]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def create(
    engine: Engine,
    name: str,
    *,
    variant: str = "classic",
    config: Mapping[str, Any] | None = None,
    table_size: int = 4,
    submissions_per_day: int = 5,
    active_per_account: int = 1,
    ends_at: dt.datetime | None = None,
    final_top: int = 8,
    final_until_confident: float = 0.95,
    final_max_deals: int = DEFAULT_FINAL_MAX_DEALS,
    placement: int | None = None,
    round_deals: int | None = None,
) -> repo.Competition:
    """Check and store a competition in its season; nothing is stored if a setting is wrong."""
    repo.check_name("competition", name)
    canonical = find_variant(variant).name
    settings = {**dict(config or {}), "players": table_size}
    make_variant(canonical, settings)  # a bad config fails before anything is stored
    for what, value, least in (
        ("--submissions-per-day", submissions_per_day, 1),
        ("--active-per-account", active_per_account, 1),
        ("--final-top", final_top, 2),
    ):
        if value < least:
            raise PlanError(f"{what} must be at least {least}, got {value}")
    adaptive.rule(final_until_confident, final_max_deals)  # the final's rule, checked now
    season_rule = ladder.rule(placement, round_deals).to_json()
    if ends_at is not None and ends_at.tzinfo is None:
        ends_at = ends_at.replace(tzinfo=dt.UTC)
    for league in (season_name(name), final_name(name)):
        leagues.must_be_free(engine, league, hint=f": competition {name!r} needs the name")
    return repo.create_competition(
        engine,
        name,
        variant=canonical,
        config=settings,
        table_size=table_size,
        submissions_per_day=submissions_per_day,
        active_per_account=active_per_account,
        ends_at=ends_at,
        final_top=final_top,
        final_until_confident=final_until_confident,
        final_max_deals=final_max_deals,
        season_rule=season_rule,
    )


def season_name(name: str) -> str:
    return f"{name}-season"


def final_name(name: str) -> str:
    return f"{name}-final"


def _label(version: repo.BotVersion) -> str:
    return f"{version.bot}@{version.version}"


def touch(engine: Engine, name: str, *, now: dt.datetime | None = None) -> repo.Competition:
    """Bring a competition up to date: past its end, close it; in its season, :func:`sync` its
    entrants; in its final, mark it finished once the final league is."""
    found = repo.find_competition(engine, name)
    if found.state == SEASON and found.ended(now):
        return close(engine, name)
    if found.state == SEASON:
        sync(engine, found)
    elif (
        found.state == FINAL
        and found.final_league_id is not None
        and repo.league_phase(engine, found.final_league_id) == "finished"
    ):
        repo.update_competition(engine, found.id, state=FINISHED)
    return repo.find_competition(engine, name)


def sync(engine: Engine, found: repo.Competition) -> dict[str, Any]:
    """Make the season's entrants the entered accounts' active versions: create the ladder once
    there are enough, add new ones, make the deactivated inactive and the reactivated active
    again. A valid submission made for the competition since the last sync makes its version
    active first, if the account has room (the competition's active versions per account, the
    platform's). Returns what changed (``added``, ``inactive``, ``created``)."""
    activate_submitted(engine, found)
    versions = entrant_versions(engine, found)
    if found.season_league_id is None:
        if len(versions) < found.table_size:
            return {
                "created": False,
                "added": [],
                "inactive": [],
                "waiting_for": found.table_size - len(versions),
            }
        league = leagues.create(
            engine,
            season_name(found.name),
            [_label(v) for v in versions],
            variant=found.variant,
            config=found.config,
            table_size=found.table_size,
            fmt=ladder.FORMAT,
            stopping=found.season_rule or ladder.rule().to_json(),
        )
        repo.update_competition(engine, found.id, season_league_id=league.id)
        return {"created": True, "added": [_label(v) for v in versions], "inactive": []}
    league = repo.league_by_id(engine, found.season_league_id)
    rule = ladder.LadderRule.from_json(league.stopping)
    wanted = {v.id for v in versions}
    have = {e.id: position for position, e in enumerate(league.entrants)}
    inactive = tuple(sorted(p for vid, p in have.items() if vid not in wanted))
    newcomers = [v for v in versions if v.id not in have]
    finished = repo.league_phase(engine, league.id) == "finished"
    if inactive != rule.inactive or (finished and (newcomers or len(wanted) >= found.table_size)):
        stopping = {**rule.to_json(), "inactive": list(inactive)}
        if finished:  # it ran out of active entrants; with them back it plans rounds again
            repo.reopen_league(engine, league.id, stopping=stopping, deals=league.deals)
        else:
            repo.set_stopping(engine, league.id, stopping)
    added = repo.add_entrants(engine, league.id, newcomers) if newcomers else []
    names = leagues.entrant_names(repo.league_by_id(engine, league.id))
    return {
        "created": False,
        "added": [names[p] for p in added],
        "inactive": [names[p] for p in inactive],
    }


def activate_submitted(engine: Engine, found: repo.Competition) -> list[str]:
    """Make active the versions of the valid submissions for the competition that finished since
    its last sync, where the account has room; returns their labels. A version deactivated after
    that is left inactive: each submission is looked at once."""
    now = _now()
    made = []
    most = load_settings().api_active_per_account
    for account_id, label in repo.valid_submissions_between(engine, found.id, found.synced_at, now):
        if repo.active_count(engine, account_id, found.variant) >= found.active_per_account:
            continue
        try:
            if repo.set_active(engine, account_id, label, True, max_active=most)["changed"]:
                made.append(label)
        except (repo.ConflictError, repo.NotFoundError):  # past the platform's limit, retired
            continue
    repo.update_competition(engine, found.id, synced_at=now)
    return made


def entrant_versions(engine: Engine, found: repo.Competition) -> list[repo.BotVersion]:
    """The versions that play the season now: each entered account's active versions of the
    variant, at most ``active_per_account`` of them (the first activated)."""
    per_account: dict[int, int] = {}
    out = []
    for version, account in repo.entrant_versions(engine, found):
        per_account[account] = per_account.get(account, 0) + 1
        if per_account[account] <= found.active_per_account:
            out.append(version)
    return out


def enter(engine: Engine, name: str, account_id: int) -> dict[str, Any]:
    """Enter an account (:class:`FrozenError` once the season is over) and sync the season."""
    touch(engine, name)
    out = entries.enter(engine, name, account_id)
    sync(engine, repo.find_competition(engine, name))
    return out


def finalists(engine: Engine, found: repo.Competition) -> list[repo.BotVersion]:
    """The season's top ``final_top`` by its table, among the versions still entered."""
    if found.season_league_id is None:
        return []
    league = repo.league_by_id(engine, found.season_league_id)
    stored_standings.refresh(engine, league)
    still = {v.id for v in entrant_versions(engine, found)}
    with engine.connect() as conn:
        table = repo.league_table(conn, league.id)
    by_label = {_label(v): v for v in league.entrants}
    ranked = [by_label[row["bot"]] for row in table if row["games"] and row["bot"] in by_label]
    return [v for v in ranked if v.id in still][: found.final_top]


def close(engine: Engine, name: str) -> repo.Competition:
    """End the season now: freeze submissions, stop the ladder (its unclaimed tables dropped) and
    make the final among the top entrants. Closing a closed competition changes nothing."""
    found = repo.find_competition(engine, name)
    if found.state != SEASON:
        return found
    if found.season_league_id is not None:
        league = repo.league_by_id(engine, found.season_league_id)
        rule = ladder.LadderRule.from_json(league.stopping)
        repo.set_stopping(engine, league.id, {**rule.to_json(), "stopped": True})
        repo.drop_pending_blocks(engine, league.id)
        repo.finish_league(engine, league.id)  # at once unless a claimed block is still in play
    top = finalists(engine, found)
    closed = _now()
    if len(top) < 2:
        repo.update_competition(engine, found.id, state=FINISHED, closed_at=closed)
        return repo.find_competition(engine, name)
    final = leagues.create(
        engine,
        final_name(name),
        [_label(v) for v in top],
        variant=found.variant,
        config=found.config,
        table_size=min(found.table_size, len(top)),
        stopping=adaptive.rule(
            until_confident=found.final_until_confident, max_deals=found.final_max_deals
        ).to_json(),
    )
    repo.update_competition(engine, found.id, state=FINAL, final_league_id=final.id, closed_at=closed)
    return repo.find_competition(engine, name)


class SeasonOver(Exception):
    """Raised from a season runner's round callback to leave the ladder (its end, or rounds played)."""


def run(
    engine: Engine,
    name: str,
    play: Callable[[repo.League, Callable[[int], None]], dict[str, int]],
    *,
    rounds: int | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Play a competition: its season round after round (each round's entrants synced, its end
    checked) until its end, ``rounds`` rounds or ``competition close``; then its final to the end.

    ``play(league, planned)`` plays a league's blocks (the local pool or Celery, as ``league run``)
    and calls ``planned`` with each new round; this raises :class:`SeasonOver` from it to leave
    the season. Returns the outcome counts of each phase played.
    """
    counts: dict[str, dict[str, int]] = {}
    found = touch(engine, name)
    played = 0
    if found.state == SEASON:
        if found.season_league_id is None:
            missing = found.table_size - len(entrant_versions(engine, found))
            if say:
                say(f"competition {name}: the season waits for {missing} more active version(s) to begin")
            return {"competition": name, "state": found.state, "ran": counts}

        def next_round(added: int) -> None:
            nonlocal played
            played += 1
            now = touch(engine, name)
            if now.state != SEASON or (rounds is not None and played >= rounds):
                raise SeasonOver

        season = repo.league_by_id(engine, found.season_league_id)
        with contextlib.suppress(SeasonOver):
            counts["season"] = play(season, next_round)
        found = touch(engine, name)
    if found.state == FINAL and found.final_league_id is not None:
        final = repo.league_by_id(engine, found.final_league_id)
        counts["final"] = play(final, lambda added: None)
        found = touch(engine, name)
    return {"competition": name, "state": found.state, "ran": counts}


def status(engine: Engine, name: str) -> dict[str, Any]:
    """A competition's state for ``competition status``: settings, entries, entrants, each league's
    progress and the season's time left."""
    found = touch(engine, name)
    out: dict[str, Any] = {**found.settings(), "entries": len(repo.competition_entries(engine, name))}
    out["entrants"] = [_label(v) for v in entrant_versions(engine, found)]
    for phase, league_id in (("season", found.season_league_id), ("final", found.final_league_id)):
        if league_id is None:
            out[phase] = None
            continue
        league = repo.league_by_id(engine, league_id)
        counts = repo.block_counts(engine, league_id)
        out[phase] = {
            "league": league.name,
            "phase": repo.league_phase(engine, league_id),
            "blocks": counts,
            "matches": repo.league_counts(engine, league_id)["matches"],
        }
    if found.state == SEASON and found.ends_at is not None:
        out["seconds_left"] = max(0.0, (found.ends_at - _now()).total_seconds())
    return out


def finalist_labels(versions: Sequence[repo.BotVersion]) -> list[str]:
    return [_label(v) for v in versions]
