"""Play one block: claim it, fetch the bots, run a referee and the bots, store the results.

This is the body of the Celery task ``play_block`` and of the local pool alike. It is
idempotent: a block already stored is skipped, and storing is one transaction that writes
nothing if another delivery got there first. Bot faults are results, never errors; only
infrastructure failures (the store, the referee, the machine) raise, and those are retried.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from arena.matches import Lanes, MatchPlan, ProcessExit, RemoteMatch, RemoteRun, deal_lanes, play_lanes
from arena.referee_thread import referee_in_thread
from arena.tournament import Block
from referee.settings import load as load_settings
from workers import metrics
from workers.bots import connected as remote_bots
from workers.bots.artifacts import bot_spec, unpack
from workers.play.faults import seat_fault_detail
from workers.play.lease import LeaseKeeper, LeaseLostError, ProcessGroup, block_directories
from workers.play.warm import Version, WarmBot, WarmPool
from workers.sandbox import sandbox_for
from workers.store import repo, standings


class BlockError(RuntimeError):
    """A block could not be played for a reason that is not a bot's fault (retried)."""


@dataclass(frozen=True, slots=True)
class BlockOutcome:
    """What happened to a block: ``stored``, ``done already``, ``raced`` (another copy stored it),
    ``leased elsewhere`` (another worker is playing it) or ``lease lost`` (stopped, not stored)."""

    block_id: int
    status: str
    matches: int = 0


def worker_name() -> str:
    """This process, as it appears in ``blocks.claimed_by``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def play_block(
    engine: Engine,
    block_id: int,
    *,
    worker: str | None = None,
    sandbox: bool = True,
    warm: WarmPool | None = None,
) -> BlockOutcome:
    """Play and store one block (see the module docstring).

    Every bot runs in the sandbox (:mod:`workers.sandbox`); ``sandbox=False`` is for tests of
    the rest of the machinery only. With a ``warm`` pool (:mod:`workers.play.warm`) the block's bots
    are the pool's live processes and its referee is the pool's, unless the league asks for
    fresh processes; without one, the block starts its own referee and bot processes.
    """
    started = time.monotonic()
    settings = load_settings()
    block = _claim(engine, block_id, worker, settings)
    if isinstance(block, BlockOutcome):
        return block
    league = repo.league_by_id(engine, block.league_id)
    return _play_claimed(engine, block, league, started, settings, sandbox=sandbox, warm=warm)


def play_blocks(
    engine: Engine,
    block_ids: Sequence[int],
    *,
    worker: str | None = None,
    warm: WarmPool | None = None,
    at_once: int = 1,
    leagues: dict[int, repo.League] | None = None,
) -> list[BlockOutcome]:
    """Play and store several blocks, up to ``at_once`` of them as one set of matches.

    The blocks of one set share the warm pool's referee and, per league entrant, one process per
    lane (lane k plays rotation k of every block: no process plays two seats of one deal): each
    process answers all of a step's requests from every block of the set in one message, which is
    what makes small blocks cheap (docs/league.md, "Several blocks as one set"). A block joins the
    set only while every entrant of the set, at its last measured time per decision, answers all
    of one lane's matches there within :data:`SHARE_QUEUE_MS`; a block with an entrant not measured yet, or
    that plays on fresh processes or remote bots, is played on its own (as :func:`play_block`).
    Each block keeps its own claim, lease and store transaction: its outcome is what
    :func:`play_block` would return. The first error is raised once every block is over.
    ``leagues`` holds leagues the caller has read already, by id (the others are read here).
    """
    if warm is None or at_once <= 1:
        return [play_block(engine, block_id, worker=worker, warm=warm) for block_id in block_ids]
    settings = load_settings()
    outcomes: dict[int, BlockOutcome] = {}
    errors: list[BaseException] = []
    leagues = dict(leagues or {})
    group: list[_Claimed] = []

    def play(items: list[_Claimed]) -> None:
        try:
            for outcome in _play_group(engine, warm, items):
                outcomes[outcome.block_id] = outcome
        except repo.NotFoundError:
            raise
        except Exception as exc:
            errors.append(exc)
        items.clear()

    try:
        for block_id in block_ids:
            started = time.monotonic()
            block = _claim(engine, block_id, worker, settings)
            if isinstance(block, BlockOutcome):
                outcomes[block_id] = block
                continue
            if block.league_id not in leagues:
                leagues[block.league_id] = repo.league_by_id(engine, block.league_id)
            league = leagues[block.league_id]
            plan = Block(block.number, block.entrants, block.seed)
            if not _shareable(warm, league, [(block, plan)]):
                try:
                    outcomes[block_id] = _play_claimed(engine, block, league, started, settings, warm=warm)
                except repo.NotFoundError:
                    raise
                except Exception as exc:
                    errors.append(exc)
                continue
            # Its lease is kept from now on, also while the set before it plays (a set can last
            # longer than a lease); its games end with its own set's.
            keeper = _keeper(engine, block, settings, lambda: None)
            claimed = _Claimed(block, league, plan, keeper.__enter__(), started)
            if group and (
                len(group) >= at_once
                or group[0].league.id != league.id
                or not _shareable(warm, league, [(g.block, g.plan) for g in group] + [(block, plan)])
            ):
                full, group = group, [claimed]
                play(full)
            else:
                group.append(claimed)
        if group:
            play(group)
    finally:
        for item in group:  # not played (an error above): stop renewing; the lease runs out
            item.keeper.__exit__(None, None, None)
    if errors:
        raise errors[0]
    return [outcomes[block_id] for block_id in block_ids]


def play_with_pending(
    engine: Engine,
    block_id: int,
    *,
    worker: str | None = None,
    warm: WarmPool | None = None,
    at_once: int = 1,
) -> list[BlockOutcome]:
    """Play ``block_id`` and, as one set with it, up to ``at_once - 1`` pending blocks of its league
    whose bots this worker holds warm and has measured fast enough to share (:func:`play_blocks`);
    the first outcome is ``block_id``'s.

    This is what a Celery worker does with each ``play_block`` message: every block still has its
    own message, and the message of a block played here already finds it stored (or leased, and
    looks again later), which costs a claim attempt. A block claimed by another worker meanwhile
    is skipped: a claim is a locked compare-and-set. Pending blocks whose bots are not warm here
    are left to the worker they are routed to.
    """
    ids = [block_id]
    beside = repo.pending_blocks_beside(engine, block_id, limit=8 * at_once) if warm and at_once > 1 else []
    if warm is None or not beside:
        return play_blocks(engine, ids, worker=worker, warm=warm, at_once=at_once)
    league = repo.league_by_id(engine, beside[0].league_id)
    here = warm.warm_versions()
    for block in beside:
        if len(ids) >= at_once:
            break
        plan = Block(block.number, block.entrants, block.seed)
        warm_here = all(league.entrants[p].sha256 in here for p in block.entrants)
        if warm_here and _shareable(warm, league, [(block, plan)]):
            ids.append(block.id)
    return play_blocks(engine, ids, worker=worker, warm=warm, at_once=at_once, leagues={league.id: league})


SHARE_QUEUE_MS = 250
"""Several blocks are played as one set only while the matches of each entrant's lane in it (one
a block) times its last measured mean time per decision stays under this: the requests queued
before a bot's last one of a step cost it at most an eighth of the default two seconds per
decision."""


@dataclass(slots=True)
class _Claimed:
    """A block claimed for a set: its row, league, plan, running lease keeper and start time."""

    block: Any
    league: repo.League
    plan: Block
    keeper: LeaseKeeper
    started: float


def _claim(engine: Engine, block_id: int, worker: str | None, settings: Any) -> Any:
    """The claimed block row, or the outcome of a block that cannot be claimed."""
    try:
        with metrics.STORE_WRITE_SECONDS.labels("claim_block").time():
            block = repo.claim_block(engine, block_id, worker or worker_name(), lease_s=settings.lease_s)
    except repo.LeaseHeldError:
        metrics.block_ended("", "skipped")
        return BlockOutcome(block_id, "leased elsewhere")
    if block is None:
        metrics.block_ended("", "skipped")
        return BlockOutcome(block_id, "done already")
    return block


def _shareable(warm: WarmPool, league: repo.League, blocks: Sequence[tuple[Any, Block]]) -> bool:
    """Whether these blocks may be played as one set on ``warm``'s bots (see :func:`play_blocks`)."""
    if getattr(league, "fresh_processes", False):
        return False
    matches: dict[int, int] = {}
    for block, _plan in blocks:
        if remote_bots.remote_entrants(league, block.entrants, _name):
            return False
        for position in block.entrants:
            # A block's rotations go to different lanes (processes): one match of it per lane.
            matches[position] = matches.get(position, 0) + 1
    for position, count in matches.items():
        ms = warm.decision_ms.get(league.entrants[position].sha256)
        if ms is None or count * ms > SHARE_QUEUE_MS:
            return False
    return True


def _play_claimed(
    engine: Engine,
    block: Any,
    league: repo.League,
    started: float,
    settings: Any,
    *,
    sandbox: bool = True,
    warm: WarmPool | None = None,
) -> BlockOutcome:
    """Play a claimed block on its own and store it (the body of :func:`play_block`)."""
    keepers: list[LeaseKeeper] = []
    plan = Block(block.number, block.entrants, block.seed)
    try:
        # A block with remote entrants plays on the referee remote bots connect to (workers.bots.connected).
        remote = remote_bots.remote_entrants(league, block.entrants, _name)
        if warm is not None and not remote and not getattr(league, "fresh_processes", False):
            run = _play_warm(warm, engine, league, block, plan, keepers, settings)
        else:
            run = _play_fresh(engine, league, block, plan, keepers, settings, sandbox)
        if keepers and keepers[0].lost:
            raise LeaseLostError(keepers[0].lost)
    except repo.NotFoundError:
        raise
    except Exception as exc:
        if keepers and keepers[0].lost:
            # Another worker may be playing the block now: it stores it, this one stores nothing.
            metrics.block_ended(league.variant, "lost", started)
            return BlockOutcome(block.id, "lease lost")
        metrics.block_ended(league.variant, "failed", started)
        repo.fail_block(engine, block.id, f"{type(exc).__name__}: {exc}", claim=block.claim)
        raise
    return _store(engine, block, league, plan, run, started)


def _store(
    engine: Engine, block: Any, league: repo.League, plan: Block, run: RemoteRun, started: float
) -> BlockOutcome:
    """Store a played block's matches in one transaction (a match that did not finish fails it)."""
    played = []
    for rotation, (seating, match) in enumerate(zip(plan.seatings(), run.matches, strict=True)):
        if match.status != "finished":
            error = f"match {rotation} {match.status}: {match.error}"
            metrics.block_ended(league.variant, "failed", started)
            repo.fail_block(engine, block.id, error, claim=block.claim)
            raise BlockError(error)
        played.append(_record(rotation, block.seed, seating, match, league, run.exits))
    with metrics.STORE_WRITE_SECONDS.labels("record_block").time():
        stored = repo.record_block(engine, block.id, played, claim=block.claim)
    metrics.block_ended(league.variant, "stored" if stored else "raced", started)
    if stored:  # the league's stored table follows its results (never raises)
        standings.results_stored(engine, league.id)
    return BlockOutcome(block.id, "stored" if stored else "raced", len(played))


def _keeper(engine: Engine, block: Any, settings: Any, on_lost: Callable[[], None]) -> LeaseKeeper:
    return LeaseKeeper(
        engine,
        block.id,
        block.claim,
        lease_s=settings.lease_s,
        renew_s=settings.lease_renew_s,
        on_lost=on_lost,
    )


def _play_warm(
    warm: WarmPool,
    engine: Engine,
    league: repo.League,
    block: Any,
    plan: Block,
    keepers: list[LeaseKeeper],
    settings: Any,
) -> RemoteRun:
    """The block's matches on the warm pool's live bots, which go back (or are retired) after.

    Each entrant plays on one process per lane (:func:`arena.matches.deal_lanes`: one per
    rotation), each a process that has never seen the block's deal (:meth:`WarmPool.take`). A bot
    whose seats had any fault, that exited, or whose block did not finish (its lease lost, the
    referee failed) is retired, never used again; its exit goes with the seats' fault details
    as a fresh process's does.
    """
    taken: dict[str, WarmBot] = {}
    results: list[RemoteMatch] = []
    keeper = _keeper(engine, block, settings, lambda: warm.kill(list(taken.values())))
    keepers.append(keeper)
    seatings = plan.seatings()
    lanes = deal_lanes([MatchPlan(tuple(_name(p) for p in seating), block.seed) for seating in seatings])
    with keeper:
        try:
            results = _play_lanes_warm(warm, engine, league, lanes, taken)
            _note_speeds(warm, league, block.entrants, [lanes.match(match) for match in results])
        finally:
            complete = len(results) == len(seatings) and keeper.lost is None
            exits = _give_back(warm, taken, results, complete)
    return lanes.run(RemoteRun(results, {lane: exit.status for lane, exit in exits.items()}, exits))


def _play_lanes_warm(
    warm: WarmPool, engine: Engine, league: repo.League, lanes: Lanes, taken: dict[str, WarmBot]
) -> list[RemoteMatch]:
    """Every match of ``lanes`` on the warm pool: a process per lane (into ``taken``, by lane, as
    they are taken), none of which has played any of its lane's deals before; the results by lane."""
    positions = {_name(position): position for position in range(len(league.entrants))}
    for lane, entrant in lanes.owner.items():
        taken[lane] = _take(warm, engine, league, positions[entrant], lanes.seeds[lane])
    client = warm.client
    ids, _ = client.create_matches(
        league.variant,
        league.config,
        lanes.plans,
        seat_key=league.seat_key,
        standing={lane: bot.token for lane, bot in taken.items()},
    )
    return list(client.results(ids, timeout=24 * 3600))


def _take(
    warm: WarmPool, engine: Engine, league: repo.League, position: int, seeds: Iterable[int]
) -> WarmBot:
    """A live warm process for a league entrant that has played none of these deal seeds (its
    code unpacked into the pool once)."""
    version = league.entrants[position]
    key = Version(version.sha256, version.entry_point, league.variant)
    directory = warm.code_dir(key, lambda path: unpack(repo.code_of(engine, version), path))
    return warm.take(key, bot_spec(directory, version.entry_point), f"{version.bot}@{version.version}", seeds)


def _give_back(
    warm: WarmPool, taken: Mapping[str, WarmBot], results: Sequence[RemoteMatch], complete: bool
) -> dict[str, ProcessExit]:
    """Give the processes back: kept warm only if their games all finished without a fault of
    theirs; returns how each retired one ended, by the name it played under (its lane)."""
    faulted = {s.entrant for match in results for s in match.seats if any(s.faults.values())}
    exits: dict[str, ProcessExit] = {}
    for entrant, bot in taken.items():
        exit = warm.give_back(bot, reusable=complete and entrant not in faulted)
        if exit is not None:
            exits[entrant] = exit
    return exits


def _play_group(engine: Engine, warm: WarmPool, items: list[_Claimed]) -> list[BlockOutcome]:
    """Claimed blocks of one league as one set of matches on the warm pool (see :func:`play_blocks`).

    Each league entrant of the set plays on one warm process per lane (:func:`arena.matches.deal_lanes`):
    lane k plays the entrant's k-th match of every deal of the set (rotation k of each block it
    sits in), so no process holds two hands of one deal; the matches are created in one call, so
    each step's requests to a lane's process go in one message.
    A block whose lease was lost is not stored (its games end with the set's); a bot with any
    fault in the set, or whose set did not finish, is retired as after a block of its own.
    """
    if len(items) == 1:
        item = items[0]
        item.keeper.__exit__(None, None, None)
        return [_play_claimed(engine, item.block, item.league, item.started, load_settings(), warm=warm)]
    league = items[0].league
    positions = sorted({position for item in items for position in item.block.entrants})
    plans = [
        MatchPlan(tuple(_name(p) for p in seating), item.block.seed)
        for item in items
        for seating in item.plan.seatings()
    ]
    lanes = deal_lanes(plans)
    taken: dict[str, WarmBot] = {}
    results: list[RemoteMatch] = []
    try:
        results = _play_lanes_warm(warm, engine, league, lanes, taken)
        _note_speeds(warm, league, positions, [lanes.match(match) for match in results])
    except Exception as exc:
        for item in items:
            item.keeper.__exit__(None, None, None)
            if item.keeper.lost:
                metrics.block_ended(league.variant, "lost", item.started)
            else:
                metrics.block_ended(league.variant, "failed", item.started)
                repo.fail_block(engine, item.block.id, f"{type(exc).__name__}: {exc}", claim=item.block.claim)
        raise
    finally:
        complete = len(results) == len(plans) and not any(item.keeper.lost for item in items)
        exits = _give_back(warm, taken, results, complete)
        for item in items:
            item.keeper.__exit__(None, None, None)
    outcomes: list[BlockOutcome] = []
    error: BlockError | None = None
    played = lanes.run(RemoteRun(results, {lane: exit.status for lane, exit in exits.items()}, exits))
    offset = 0
    for item in items:
        count = len(item.plan.seatings())
        run = RemoteRun(played.matches[offset : offset + count], played.exit_codes, played.exits)
        offset += count
        if item.keeper.lost:
            metrics.block_ended(league.variant, "lost", item.started)
            outcomes.append(BlockOutcome(item.block.id, "lease lost"))
            continue
        try:
            outcomes.append(_store(engine, item.block, league, item.plan, run, item.started))
        except BlockError as exc:  # that block is failed; the others of the set are stored
            error = error or exc
    if error is not None:
        raise error
    return outcomes


def _note_speeds(
    warm: WarmPool, league: repo.League, positions: Sequence[int], results: Sequence[RemoteMatch]
) -> None:
    """Each entrant's mean time per decision in these matches, by bot version, for :func:`_shareable`."""
    for position in set(positions):
        seats = [s for match in results for s in match.seats if s.entrant == _name(position)]
        decisions = sum(s.decisions for s in seats)
        if decisions:
            warm.decision_ms[league.entrants[position].sha256] = sum(s.think_ms for s in seats) / decisions


def _play_fresh(
    engine: Engine,
    league: repo.League,
    block: Any,
    plan: Block,
    keepers: list[LeaseKeeper],
    settings: Any,
    sandbox: bool,
) -> RemoteRun:
    """The block with a referee of its own and a fresh process per bot, all stopped at its end."""
    with block_directories(block.id) as (root, bots_dir):
        # Only root enters the block; each sandboxed bot gets its own directory bound into
        # a root of its own (workers.sandbox), never this one or a rival's.
        os.chmod(root, 0o700)
        remote = remote_bots.remote_entrants(league, block.entrants, _name)
        specs = {}
        for position in block.entrants:
            if _name(position) in remote:
                continue  # plays from its author's machine: no code, no process here
            version = league.entrants[position]
            directory = root / f"bot{position}"
            unpack(repo.code_of(engine, version), directory)
            _readable(directory)
            specs[_name(position)] = bot_spec(directory, version.entry_point)
        plans = [MatchPlan(tuple(_name(p) for p in seating), block.seed) for seating in plan.seatings()]
        launch = sandbox_for(root) if sandbox else None
        if launch is not None:
            # The bots' private directories go next to the block's, swept with it (workers.play.lease).
            launch.workdir = bots_dir  # type: ignore[attr-defined]
        referee = remote_bots.remote_referee() if remote else referee_in_thread(root)
        with metrics.counting_bots(launch) as counted, referee as client:
            bots = ProcessGroup(counted)
            keeper = _keeper(engine, block, settings, bots.kill)
            keepers.append(keeper)
            with keeper:
                seated = remote_bots.await_remote(engine, block.id, client, remote, plans) if remote else {}
                # One process per lane (arena.matches.deal_lanes): none plays two seats of the
                # block's deal. A remote bot is its author's one connection: not split.
                return play_lanes(
                    specs,
                    plans,
                    variant=league.variant,
                    config=league.config,
                    client=client,
                    seat_key=league.seat_key,
                    launch=bots,
                    **seated,
                )


def _name(position: int) -> str:
    return f"entrant{position}"


def _readable(directory: Path) -> None:
    """Let the bot's sandbox user read its files, once bound into its sandbox (the root is 0700)."""
    for path in [directory, *directory.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


def _record(
    rotation: int,
    seed: int,
    seating: tuple[int, ...],
    match: RemoteMatch,
    league: repo.League,
    exits: Mapping[str, ProcessExit],
) -> repo.MatchRecordRow:
    seats = sorted(match.seats, key=lambda s: s.seat)
    return repo.MatchRecordRow(
        rotation=rotation,
        seed=seed,
        digest=match.digest,
        termination=str(match.transcript.get("outcome", {}).get("termination", "")),
        seats=[
            repo.SeatRecord(
                seat=s.seat,
                position=seating[s.seat],
                bot_version_id=league.entrants[seating[s.seat]].id,
                score=s.score,
                rank=s.rank,
                faults=s.faults,
                defaulted=s.defaulted,
                forfeited=s.forfeited,
                think_ms=s.think_ms,
                fault_detail=seat_fault_detail(s.faults, s.reasons, exits.get(s.entrant)),
            )
            for s in seats
        ],
        transcript=match.transcript,
    )
