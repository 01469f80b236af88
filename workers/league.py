"""Leagues: create (resolve entrants, plan, store), run (local pool or Celery), standings."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from bot_sdk.bots import REFERENCE_BOTS
from bot_sdk.tournament import Block
from referee.rules.registry import find_variant, make_variant
from workers import adaptive, ranking, ratings, rounds
from workers.planning import PlanError, plan_league
from workers.store import repo
from workers.store.engine import make_engine
from workers.submit import store_reference, submit


def resolve_entrant(engine: Engine, ref: str, variant: str) -> repo.BotVersion:
    """An entrant from a stored bot (``name`` or ``name@N``), a reference bot name, or a ``.py`` path.

    Reference bots and files are stored first (files after passing their check), so every
    entrant of a league is an immutable stored version.
    """
    if ref.endswith(".py") or Path(ref).is_dir():
        path = Path(ref)
        version, _, _ = submit(engine, path, path.stem if path.is_file() else path.name, variant=variant)
        return version
    try:
        return repo.find_version(engine, ref)
    except repo.NotFoundError:
        if ref in REFERENCE_BOTS.get(variant, {}):
            return store_reference(engine, variant, ref)
        raise


def create(
    engine: Engine,
    name: str,
    refs: Sequence[str],
    *,
    variant: str = "classic",
    config: Mapping[str, Any] | None = None,
    table_size: int = 4,
    deals: int = 2,
    seed: int = 1,
    fmt: str = "round-robin",
    stopping: Mapping[str, Any] | None = None,
) -> repo.League:
    """Plan and store a league; nothing is stored if anything is wrong.

    With an adaptive ``stopping`` rule (:mod:`workers.adaptive`) only the balanced first round is
    planned here (``deals`` is then ignored); the run loops add the next rounds.
    """
    canonical = find_variant(variant).name
    settings = {**dict(config or {}), "players": table_size}
    make_variant(canonical, settings)  # a bad config fails before anything is stored
    if stopping is not None:
        blocks = _first_round(stopping, fmt, len(refs), table_size, seed)
        deals = 1
    versions = [resolve_entrant(engine, ref, canonical) for ref in refs]
    for ref, version in zip(refs, versions, strict=True):
        if version.variant != canonical:
            raise repo.ConflictError(f"{ref} is a {version.variant} bot, the league plays {canonical}")
    if stopping is None:
        blocks = plan_league(fmt, len(versions), table_size, deals, seed)
    repo.create_league(
        engine,
        name,
        variant=canonical,
        config=settings,
        seed=seed,
        format=fmt,
        table_size=table_size,
        deals=deals,
        entrants=versions,
        planned=[(b.number, b.seed, b.entrants) for b in blocks],
        stopping=stopping,
    )
    return repo.find_league(engine, name)


def _first_round(
    stopping: Mapping[str, Any], fmt: str, entrants: int, table_size: int, seed: int
) -> list[Block]:
    """The first round of an adaptive league, after checking its rule (nothing stored yet)."""
    rule = adaptive.AdaptiveRule.from_json(stopping)
    if fmt != "round-robin":
        raise PlanError(f"an adaptive league plays round-robin tables, not {fmt}")
    plan_league(fmt, entrants, table_size, 1, seed)  # the same checks as a fixed league
    first = adaptive.first_round(entrants, table_size, seed)
    if rule.max_deals < len(first):
        raise PlanError(
            f"--max-deals {rule.max_deals} is less than the balanced first round ({len(first)} deals)"
        )
    return first


def _play_one(url: str, block_id: int) -> str:
    """Pool worker body: one block in a fresh process with its own engine."""
    from workers.execute import play_block

    engine = make_engine(url)
    try:
        return play_block(engine, block_id).status
    finally:
        engine.dispose()


def plan_next_round(engine: Engine, league: repo.League) -> int:
    """Store the next round of a league with a stopping rule once every planned block is played.

    Returns how many blocks the round has (0: the league is finished, or has a fixed plan). Two
    runners that call this at once plan the same round (:mod:`workers.rounds`) and store it once.
    """
    if not league.stopping:
        return 0
    stored = repo.blocks_of(engine, league.id)
    if any(b.status != "done" for b in stored):
        return 0
    planned = [Block(b.number, b.entrants, b.seed) for b in stored]
    new = rounds.next_blocks(league, repo.league_results(engine, league.id), planned)
    repo.add_blocks(engine, league.id, [(b.number, b.seed, b.entrants) for b in new])
    return len(new)


def run_local(
    engine: Engine,
    league: repo.League,
    *,
    processes: int,
    progress: Callable[[int], None] | None = None,
    planned: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Play every block not yet stored on a local process pool; returns outcome counts.

    A league with a stopping rule goes on round after round until its rule says it is finished;
    ``planned`` hears how many blocks each new round adds.
    """
    url = engine.url.render_as_string(hide_password=False)
    counts: dict[str, int] = {}
    with ProcessPoolExecutor(max_workers=max(1, processes)) as pool:
        while True:
            todo = [b.id for b in repo.blocks_of(engine, league.id) if b.status != "done"]
            futures = [pool.submit(_play_one, url, block_id) for block_id in todo]
            for future in as_completed(futures):
                status = future.result()
                counts[status] = counts.get(status, 0) + 1
                if progress:
                    progress(1)
            added = plan_next_round(engine, league)
            if not added:
                return counts
            if planned:
                planned(added)


def run_celery(
    engine: Engine,
    league: repo.League,
    *,
    progress: Callable[[int], None] | None = None,
    planned: Callable[[int], None] | None = None,
    poll_s: float = 0.5,
    timeout_s: float | None = None,
) -> dict[str, int]:
    """Queue every block not yet stored on the Celery broker and wait until the store has them all.

    A league with a stopping rule goes on round after round, as in :func:`run_local`.
    """
    from workers.tasks import play_block

    started = time.monotonic()
    stored = 0
    while True:
        blocks = repo.blocks_of(engine, league.id)
        todo = [b.id for b in blocks if b.status != "done"]
        for block_id in todo:
            play_block.delay(block_id)
        done_before = len(blocks) - len(todo)
        seen = 0
        while True:
            # A GROUP BY count, not every block row, on each poll.
            done = repo.block_counts(engine, league.id).get("done", 0) - done_before
            if progress and done > seen:
                progress(done - seen)
            seen = done
            if done >= len(todo):
                break
            if timeout_s is not None and time.monotonic() - started > timeout_s:
                raise TimeoutError(
                    f"{len(todo) - done} of {len(todo)} blocks not stored after {timeout_s:.0f} s"
                )
            time.sleep(poll_s)
        stored += len(todo)
        added = plan_next_round(engine, league)
        if not added:
            return {"stored": stored}
        if planned:
            planned(added)


def table(
    engine: Engine, league: repo.League, *, method: str = "ls", confidence: float = 0.95
) -> tuple[list[dict[str, Any]], ranking.Standings]:
    """Recompute the league table from every stored result and store it.

    Rows come best first, with bot names; the :class:`~workers.ranking.Standings` carries the
    gaps between neighbours and whether each pair is told apart.
    """
    results = repo.league_results(engine, league.id)
    rows, fitted = ratings.compute_ratings(
        results,
        len(league.entrants),
        higher_is_better=make_variant(league.variant, league.config).higher_is_better,
        method=method,
        confidence=confidence,
    )
    repo.store_ratings(engine, league.id, rows)
    names = entrant_names(league)
    for row in rows:
        row["bot"] = names[row["position"]]
    return rows, fitted


def standings(engine: Engine, league: repo.League) -> list[dict[str, Any]]:
    """The league table's rows, best first (see :func:`table`)."""
    return table(engine, league)[0]


def entrant_names(league: repo.League) -> list[str]:
    """Each entrant's label by position: ``bot@version``."""
    return [f"{entrant.bot}@{entrant.version}" for entrant in league.entrants]


def head_to_head(engine: Engine, league: repo.League) -> list[list[dict[str, int]]]:
    """The head-to-head table by entrant position."""
    return ratings.head_to_head(repo.league_results(engine, league.id), len(league.entrants))
