"""Leagues: create (resolve entrants, plan, store), run (local pool or Celery), standings."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from arena.tournament import Block
from referee import accel
from referee.rules.registry import find_variant, make_variant
from referee.settings import load as load_settings
from workers.bots import entrants
from workers.planning import PlanError, adaptive, deals, ladder, plan_league, rounds
from workers.planning.deals import draw as draw_seed
from workers.planning.formats import tables_per_bot
from workers.play import process as pool_process
from workers.stats import ranking, ratings
from workers.store import repo
from workers.store import standings as stored_standings
from workers.store.engine import make_engine

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, slots=True)
class Planned:
    """A league checked and planned, not stored yet (:func:`prepare`, then :func:`store`)."""

    name: str
    variant: str
    config: dict[str, Any]
    seed: int
    format: str
    table_size: int
    deals: int
    entrants: tuple[entrants.Entrant, ...]
    blocks: tuple[Block, ...]
    stopping: Mapping[str, Any] | None
    fresh_processes: bool = False
    deal_key: bytes | None = None
    """The secret key of the deal seeds (:mod:`workers.planning.deals`); ``None`` for a given seed."""


def create(engine: Engine, name: str, refs: Sequence[str], **options: Any) -> repo.League:
    """Plan and store a league; nothing is stored if anything is wrong (see :func:`prepare`)."""
    return store(engine, prepare(engine, name, refs, **options))


def prepare(
    engine: Engine | None,
    name: str,
    refs: Sequence[str],
    *,
    variant: str = "classic",
    config: Mapping[str, Any] | None = None,
    table_size: int = 4,
    deals: int = 2,
    seed: int | None = None,
    fmt: str = "round-robin",
    stopping: Mapping[str, Any] | None = None,
    fresh_processes: bool = False,
    per_bot: int | None = None,
    tables: int | None = None,
) -> Planned:
    """Check and plan a league, storing nothing (``engine`` ``None``: there is no store yet).

    ``refs`` name the entrants (:mod:`workers.bots.entrants`: stored bots, reference bots, files,
    ``NAME*N``); bot files are checked last, after everything cheaper. With an adaptive
    ``stopping`` rule (:mod:`workers.planning.adaptive`) only the balanced first round is planned here
    (``deals`` is then ignored); the run loops add the next rounds. A sampled league takes its
    size as ``per_bot`` (tables per entrant) or ``tables`` (:mod:`workers.planning.formats`); a ladder
    (``fmt`` ``ladder``) its settings as ``stopping`` (:func:`workers.planning.ladder.rule`, defaults if
    ``None``) and plans its placement round here. Without a ``seed``, the seed and a deal key are
    drawn from the OS's randomness (:func:`workers.planning.deals.draw`): the deals are secret.
    """
    repo.check_name("league", name)
    seed, deal_key = draw_seed(seed)
    canonical = find_variant(variant).name
    settings = {**dict(config or {}), "players": table_size}
    make_variant(canonical, settings)  # a bad config fails before anything else
    if engine is not None:
        must_be_free(engine, name)
    found = entrants.find(engine, refs, canonical)
    count = len(found.entrants)
    if fmt == "ladder":
        stopping = (ladder.LadderRule.from_json(stopping) if stopping else ladder.rule()).to_json()
        blocks = ladder.first_round(count, table_size, seed, ladder.LadderRule.from_json(stopping))
        deals = 1
    elif stopping is not None:
        blocks = _first_round(stopping, fmt, count, table_size, seed)
        deals = 1
    elif fmt == "sampled":
        per_bot = tables_per_bot(count, table_size, per_bot, tables)
        blocks = plan_league(fmt, count, table_size, deals, seed, per_bot=per_bot)
    else:
        blocks = plan_league(fmt, count, table_size, deals, seed)
    entrants.check(found)  # the bot files, last: it is the slow part
    return Planned(
        name,
        canonical,
        settings,
        seed,
        fmt,
        table_size,
        deals,
        found.entrants,
        tuple(blocks),
        stopping,
        fresh_processes,
        deal_key,
    )


def store(engine: Engine, planned: Planned) -> repo.League:
    """Store a :func:`prepare`-d league with its new bot versions, in one transaction."""
    repo.create_league(
        engine,
        planned.name,
        variant=planned.variant,
        config=planned.config,
        seed=planned.seed,
        format=planned.format,
        table_size=planned.table_size,
        deals=planned.deals,
        entrants=planned.entrants,
        planned=[(b.number, b.seed, b.entrants) for b in planned.blocks],
        stopping=planned.stopping,
        fresh_processes=planned.fresh_processes,
        deal_key=planned.deal_key,
    )
    return repo.find_league(engine, planned.name)


def must_be_free(engine: Engine, name: str, *, hint: str = "") -> None:
    """Refuse a league name that is taken (``hint`` follows the message, e.g. what to do instead)."""
    try:
        repo.find_league(engine, name)
    except repo.NotFoundError:
        return
    raise repo.ConflictError(f"a league named {name!r} exists already{hint}")


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


def _play_some(url: str, block_ids: Sequence[int], worker: str | None = None) -> list[str]:
    """Pool worker body: blocks of one league, up to ``SIXNIMMT_BLOCKS_AT_ONCE`` of them played
    as one set of matches on this process's warm bots (:func:`workers.play.execute.play_blocks`).

    A pool process keeps its warm pool (:mod:`workers.play.warm`) from task to task, so the bots of
    the blocks it played before are live processes already.
    """
    # The players (execute, warm bots, the sandbox): in the pool's processes only, not in every
    # command that imports the league (league create, status, standings).
    from workers.play import warm
    from workers.play.execute import play_blocks

    engine = make_engine(url)
    try:
        at_once = load_settings().blocks_at_once
        outcomes = play_blocks(engine, block_ids, worker=worker, warm=warm.pool(), at_once=at_once)
        return [outcome.status for outcome in outcomes]
    finally:
        engine.dispose()


def _groups(block_ids: Sequence[int], processes: int, at_once: int) -> list[list[int]]:
    """The blocks in tasks of at most ``at_once`` each, at least one task per process while there
    are blocks enough, neighbours dealt to different tasks."""
    if not block_ids:
        return []
    count = max(min(processes, len(block_ids)), -(-len(block_ids) // at_once))
    return [list(block_ids[i::count]) for i in range(count)]


def _stop_pool(pool: ProcessPoolExecutor, wait_s: float = 10.0) -> None:
    """Cancel the queued blocks, stop the ones in play (SIGTERM), kill what is left after ``wait_s``."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    deadline = time.monotonic() + wait_s
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()


def plan_next_round(engine: Engine, league: repo.League) -> int | None:
    """Store the next round of a league with a stopping rule once every planned block is played.

    Returns how many blocks the round has: 0 when the rule adds none (the league is finished once
    its blocks are stored; a fixed plan always answers 0), ``None`` while blocks of this league are
    still to be stored, when nothing can be decided. A caller must not read ``None`` as finished:
    the last block may be stored between this read and the caller's next. Two runners that call
    this at once plan the same round (:mod:`workers.planning.rounds`) and store it once.
    """
    stored = repo.blocks_of(engine, league.id)
    played = all(b.status == "done" for b in stored)
    if played:
        # A round's end: the stored table must cover every result. Whoever stored the last block
        # recomputed it; this catches a worker that died in between (a no-op when it is current).
        stored_standings.results_stored(engine, league.id)
    if not league.stopping:
        return 0
    if not played:
        return None
    league = repo.league_by_id(engine, league.id)  # a ladder's entrants and settings change as it runs
    planned = [Block(b.number, b.entrants, b.seed) for b in stored]
    new = rounds.next_blocks(league, repo.league_results(engine, league.id), planned)
    try:
        repo.add_blocks(engine, league.id, [(b.number, b.seed, b.entrants) for b in new])
    except repo.ConflictError:
        if league.format != "ladder":
            raise
        # Another runner stored this round for other entrants (a ``league add`` came in between
        # the two reads): its round stands, the newcomer is the next round's.
        return max(1, len(repo.claimable_blocks(engine, league.id)))
    return len(new)


WAIT_POLL_S = 1.0
"""How often a local run looks at what its blocks wait for (a remote bot, another worker's lease)."""


def run_local(
    engine: Engine,
    league: repo.League,
    *,
    processes: int,
    progress: Callable[[int], None] | None = None,
    planned: Callable[[int], None] | None = None,
    notify: Callable[[str], None] | None = None,
) -> dict[str, int]:
    """Play every block not yet stored on a local process pool; returns outcome counts.

    A league with a stopping rule goes on round after round until its rule says it is finished;
    ``planned`` hears how many blocks each new round adds; ``notify`` hears, in one line each, that
    blocks are being played and what the run waits for. Interrupted (``KeyboardInterrupt``), it
    cancels the queued blocks, stops those in play and releases their claims before it re-raises:
    no block is failed for it, and the next run plays them.
    """
    url = engine.url.render_as_string(hide_password=False)
    claimer = f"{socket.gethostname()}:{os.getpid()}:local"
    counts: dict[str, int] = {}
    # Spawned, not forked: a pool process runs a referee (gRPC) and its warm bots, and gRPC does not
    # survive a fork from a process that has gRPC threads of its own (the command's or a caller's
    # clients); a forked child then hung starting its referee. A spawned one also reads the
    # environment as it is now.
    accel.check_required()  # the pool's processes enable it (workers.play.process)
    pool = ProcessPoolExecutor(
        max_workers=max(1, processes),
        initializer=pool_process.start,
        mp_context=multiprocessing.get_context("spawn"),
    )
    settings = load_settings()
    said: set[tuple[int, int, str]] = set()

    def tell_waits() -> None:
        if notify is None:
            return
        lines = repo.waits(
            engine, league.id, said, lease_s=settings.lease_s, renew_s=settings.lease_renew_s, worker=claimer
        )
        for line in lines:
            notify(line)

    try:
        while True:
            now = datetime.now(UTC)
            stored = repo.blocks_of(engine, league.id)
            # A block another worker holds under a live lease is not sent: the run waits for it
            # (stored by its player, or claimable once the lease is over) and says so.
            todo = [
                b.id
                for b in stored
                if b.status != "done"
                and not (b.status == "running" and b.lease_until is not None and b.lease_until > now)
            ]
            tasks = _groups(todo, max(1, processes), settings.blocks_at_once)
            futures = {pool.submit(_play_some, url, task, claimer) for task in tasks}
            if notify and todo:
                notify(
                    f"playing {_count(len(todo), 'block')} of league {league.name} on"
                    f" {_count(max(1, processes), 'local process', 'local processes')}"
                    " (Ctrl-C stops them and gives their blocks back)"
                )
            while futures:
                finished, futures = wait(futures, timeout=WAIT_POLL_S, return_when=FIRST_COMPLETED)
                for future in finished:
                    for status in future.result():
                        counts[status] = counts.get(status, 0) + 1
                        if progress:
                            progress(1)
                tell_waits()
            added = plan_next_round(engine, league)
            if not added and any(b.status == "running" for b in repo.blocks_of(engine, league.id)):
                tell_waits()
                time.sleep(WAIT_POLL_S)  # another worker's block: its lease ends or it is stored
                continue
            if not added:
                pool.shutdown()
                if added == 0:
                    # Every block stored and none to add: finished, its seed and deal key published.
                    repo.finish_league(engine, league.id)
                return counts
            if planned:
                planned(added)
    except BaseException:
        _stop_pool(pool)
        repo.release_claims(engine, claimer, league_id=league.id)
        raise


def compute_table(
    engine: Engine, league: repo.League, *, method: str = "ls", confidence: float = 0.95
) -> tuple[list[dict[str, Any]], ranking.Standings]:
    """The league table fitted from every stored result, for display: stores nothing.

    Rows come best first, with bot names; the :class:`~workers.stats.ranking.Standings` carries the
    gaps between neighbours and whether each pair is told apart. The stored table (the dashboard's)
    is the headline fit, kept current by whoever stores results (:mod:`workers.store.standings`);
    another ``method`` or ``confidence`` here is only shown.
    """
    rows, fitted = stored_standings.compute(engine, league, method=method, confidence=confidence)
    names = entrant_names(league)
    for row in rows:
        row["bot"] = names[row["position"]]
    return rows, fitted


def standings(engine: Engine, league: repo.League) -> list[dict[str, Any]]:
    """The league table's rows, best first (see :func:`compute_table`); stores nothing."""
    return compute_table(engine, league)[0]


def verify_deals(engine: Engine, league: repo.League) -> list[deals.Checked]:
    """Every stored block of ``league`` checked against its seed and deal key (:func:`deals.check_blocks`)."""
    return deals.check_blocks(league, repo.played_seeds(engine, league.id))


def entrant_names(league: repo.League) -> list[str]:
    """Each entrant's label by position: ``bot@version`` (``#k`` apart where a bot enters k times)."""
    return entrants.labels(league.entrants)


def head_to_head(engine: Engine, league: repo.League) -> list[list[dict[str, int]]]:
    """The head-to-head table by entrant position."""
    return ratings.head_to_head(repo.league_results(engine, league.id), len(league.entrants))


def _count(n: int, one: str, many: str = "") -> str:
    """``n`` things, in the singular or the plural (``one + "s"`` unless ``many`` is given)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
