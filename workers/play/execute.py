"""Play blocks: claim each, fetch the bots, run a referee and the bots, store the results.

This is the body of the Celery task ``sixnimmt.play_block`` and of the local pool alike. It is
idempotent: a block already stored is skipped, and storing is one transaction that writes
nothing if another delivery got there first. Bot faults are results, never errors; only
infrastructure failures (the store, the referee, the machine) raise, and those are retried.

One path for every block (docs/architecture.md, "A block's path"): a claimed block becomes a
:class:`ClaimedBlock` (its row, league, plan, settings and running lease keeper, built once); blocks
are played as a *set* (a block on its own is a set of one) by one loop, :func:`_play_set`, on
either of two kinds of :class:`Processes`: :class:`FreshProcesses` (a referee and a process per lane
of the set's own, all stopped at its end) or :class:`WarmProcesses` (the warm pool's referee and
live processes, taken and given back). Each block of the set is then stored on its own.
"""

from __future__ import annotations

import enum
import os
import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from sqlalchemy import Engine

from arena.matches import FinishedMatch, MatchPlan, MatchRun, ProcessExit, deal_lanes, play_lanes
from arena.referee_thread import referee_in_thread
from arena.tournament import Block
from referee.settings import Settings
from referee.settings import load as load_settings
from workers import metrics
from workers.bots import connected as remote_bots
from workers.bots.artifacts import bot_spec, unpack, unpack_readable
from workers.play.faults import seat_fault_detail
from workers.play.lease import LeaseKeeper, LeaseLostError, ProcessGroup, block_directories
from workers.play.warm import Version, WarmBot, WarmPool
from workers.sandbox import sandbox_for
from workers.store import repo, standings


class BlockStatus(enum.StrEnum):
    """What happened to a block. A ``str``: logs, the Celery task's result and a league run's
    counts show its value, and it equals that text."""

    STORED = "stored"
    """Played and stored by this worker."""
    DONE_ALREADY = "done already"
    """Stored before it was claimed: nothing to do."""
    RACED = "raced"
    """Played, but another copy stored it first: nothing stored."""
    LEASED_ELSEWHERE = "leased elsewhere"
    """Another worker holds a live lease on it (it is being played)."""
    LEASE_LOST = "lease lost"
    """Its lease was lost while it was played: stopped, nothing stored (its new player stores it)."""


class BlockError(RuntimeError):
    """A block could not be played for a reason that is not a bot's fault (retried)."""


@dataclass(frozen=True, slots=True)
class BlockOutcome:
    """What happened to a block (:class:`BlockStatus`), and how many matches were stored."""

    block_id: int
    status: BlockStatus
    matches: int = 0


def worker_name() -> str:
    """This process, as it appears in ``blocks.claimed_by``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def claim_and_play(
    engine: Engine,
    block_id: int,
    *,
    worker: str | None = None,
    sandbox: bool = True,
    warm: WarmPool | None = None,
) -> BlockOutcome:
    """Claim, play and store one block (see the module docstring): a set of one.

    Every bot runs in the sandbox (:mod:`workers.sandbox`); ``sandbox=False`` is for tests of
    the rest of the machinery only. With a ``warm`` pool (:mod:`workers.play.warm`) the block's bots
    are the pool's live processes and its referee is the pool's, unless the league asks for
    fresh processes or the block has remote entrants; without one, the block starts its own
    referee and bot processes.
    """
    claimed = _claim(engine, block_id, worker, load_settings(), {})
    if isinstance(claimed, BlockOutcome):
        return claimed
    return _play_set([claimed], _processes_for(claimed, warm, sandbox=sandbox))[0]


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
    that plays on fresh processes or remote bots, is played on its own (as :func:`claim_and_play`).
    Each block keeps its own claim, lease and store transaction: its outcome is what
    :func:`claim_and_play` would return. The first error is raised once every block is over.
    ``leagues`` holds leagues the caller has read already, by id (the others are read here).
    """
    if warm is None or at_once <= 1:
        return [claim_and_play(engine, block_id, worker=worker, warm=warm) for block_id in block_ids]
    pool = warm
    settings = load_settings()
    outcomes: dict[int, BlockOutcome] = {}
    errors: list[BaseException] = []
    read = dict(leagues or {})
    group: list[ClaimedBlock] = []

    def play(items: list[ClaimedBlock], processes: Processes) -> None:
        try:
            for outcome in _play_set(items, processes):
                outcomes[outcome.block_id] = outcome
        except repo.NotFoundError:
            raise
        except Exception as exc:
            errors.append(exc)

    try:
        for block_id in block_ids:
            # Its lease is kept from its claim on, also while the set before it plays (a set can
            # last longer than a lease); its games end with its own set's.
            claimed = _claim(engine, block_id, worker, settings, read)
            if isinstance(claimed, BlockOutcome):
                outcomes[block_id] = claimed
                continue
            if not _shareable(pool, claimed.league, [(claimed.block, claimed.plan)]):
                play([claimed], _processes_for(claimed, pool))
                continue
            if group and (
                len(group) >= at_once
                or group[0].league.id != claimed.league.id
                or not _shareable(pool, claimed.league, [(c.block, c.plan) for c in [*group, claimed]])
            ):
                full, group = group, [claimed]
                play(full, WarmProcesses(pool))
            else:
                group.append(claimed)
        full, group = group, []
        if full:
            play(full, WarmProcesses(pool))
    finally:
        for item in group:  # not played (an error above): stop renewing; the lease runs out
            item.stop()
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

    This is what a Celery worker does with each ``sixnimmt.play_block`` message: every block still
    has its own message, and the message of a block played here already finds it stored (or
    leased, and looks again later), which costs a claim attempt. A block claimed by another worker
    meanwhile is skipped: a claim is a locked compare-and-set. Pending blocks whose bots are not
    warm here are left to the worker they are routed to.
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


# -- a claimed block -------------------------------------------------------------------------------


@dataclass(slots=True)
class ClaimedBlock:
    """A block this worker has claimed, and everything playing it needs, built once at the claim:
    the store, the settings (read once), its league, its row, its plan, its remote entrants and
    its lease keeper (renewing from the claim on, until :meth:`stop`)."""

    engine: Engine
    settings: Settings
    league: repo.League
    block: repo.BlockRow
    plan: Block
    remote: dict[str, str]
    """Entrant name → bot account of the entrants that play from their authors' machines."""
    keeper: LeaseKeeper
    started: float
    """``time.monotonic()`` when it was claimed (for the block's duration)."""

    def plans(self) -> list[MatchPlan]:
        """The block's matches, one per seat rotation, seats named by entrant."""
        return [
            MatchPlan(tuple(_name(p) for p in seating), self.block.seed) for seating in self.plan.seatings()
        ]

    def stopping(self, stop: Callable[[], None]) -> None:
        """Losing the lease from now on calls ``stop`` (stops the block's bots); lost already: raises."""
        self.keeper.on_lost = stop
        if self.keeper.lost:
            raise LeaseLostError(self.keeper.lost)

    def stop(self) -> None:
        """Stop renewing the lease (the block is over, or left for its lease to run out)."""
        self.keeper.__exit__(None, None, None)


def _claim(
    engine: Engine, block_id: int, worker: str | None, settings: Settings, leagues: dict[int, repo.League]
) -> ClaimedBlock | BlockOutcome:
    """The claimed block, its lease kept from now on; or the outcome of a block that cannot be
    claimed. ``leagues`` caches the leagues read, by id."""
    started = time.monotonic()
    try:
        with metrics.STORE_WRITE_SECONDS.labels("claim_block").time():
            block = repo.claim_block(engine, block_id, worker or worker_name(), lease_s=settings.lease_s)
    except repo.LeaseHeldError:
        metrics.block_ended("", "skipped")
        return BlockOutcome(block_id, BlockStatus.LEASED_ELSEWHERE)
    if block is None:
        metrics.block_ended("", "skipped")
        return BlockOutcome(block_id, BlockStatus.DONE_ALREADY)
    if block.league_id not in leagues:
        leagues[block.league_id] = repo.league_by_id(engine, block.league_id)
    league = leagues[block.league_id]
    keeper = LeaseKeeper(
        engine,
        block.id,
        block.claim,
        lease_s=settings.lease_s,
        renew_s=settings.lease_renew_s,
        on_lost=lambda: None,
    )
    return ClaimedBlock(
        engine=engine,
        settings=settings,
        league=league,
        block=block,
        plan=Block(block.number, block.entrants, block.seed),
        # A block with remote entrants plays on the referee remote bots connect to (workers.bots.connected).
        remote=remote_bots.remote_entrants(league, block.entrants, _name),
        keeper=keeper.__enter__(),
        started=started,
    )


def _shareable(warm: WarmPool, league: repo.League, blocks: Sequence[tuple[repo.BlockRow, Block]]) -> bool:
    """Whether these blocks may be played as one set on ``warm``'s bots (see :func:`play_blocks`)."""
    if league.fresh_processes:
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


# -- the one loop ----------------------------------------------------------------------------------


def _play_set(items: Sequence[ClaimedBlock], processes: Processes) -> list[BlockOutcome]:
    """Claimed blocks of one league as one set of matches on ``processes``, each then stored on its own.

    Each league entrant of the set plays on one process per lane (:func:`arena.matches.deal_lanes`):
    lane k plays the entrant's k-th match of every deal of the set (rotation k of each block it
    sits in), so no process holds two hands of one deal. A block whose lease was lost is not
    stored (``lease lost``); if the set could not be played, each block whose lease holds is
    failed (claimable again) and the error raised, unless every lease was lost. A block whose
    matches did not all finish is failed, the others stored, and its :class:`BlockError` raised.
    """
    league = items[0].league
    plans = [plan for item in items for plan in item.plans()]
    try:
        played = processes.play(items, plans)
    except repo.NotFoundError:
        raise
    except Exception as exc:
        for item in items:
            item.stop()
            if item.keeper.lost:
                # Another worker may be playing the block now: it stores it, this one stores nothing.
                metrics.block_ended(league.variant, "lost", item.started)
            else:
                metrics.block_ended(league.variant, "failed", item.started)
                repo.fail_block(
                    item.engine, item.block.id, f"{type(exc).__name__}: {exc}", claim=item.block.claim
                )
        if all(item.keeper.lost for item in items):
            return [BlockOutcome(item.block.id, BlockStatus.LEASE_LOST) for item in items]
        raise
    finally:
        for item in items:
            item.stop()
    outcomes: list[BlockOutcome] = []
    error: BlockError | None = None
    offset = 0
    for item in items:
        count = len(item.plan.seatings())
        run = MatchRun(played.matches[offset : offset + count], played.exit_codes, played.exits)
        offset += count
        if item.keeper.lost:
            metrics.block_ended(league.variant, "lost", item.started)
            outcomes.append(BlockOutcome(item.block.id, BlockStatus.LEASE_LOST))
            continue
        try:
            outcomes.append(_store(item, run))
        except BlockError as exc:  # that block is failed; the others of the set are stored
            error = error or exc
    if error is not None:
        raise error
    return outcomes


def _store(item: ClaimedBlock, run: MatchRun) -> BlockOutcome:
    """Store a played block's matches in one transaction (a match that did not finish fails it)."""
    block, league = item.block, item.league
    played = []
    for rotation, (seating, match) in enumerate(zip(item.plan.seatings(), run.matches, strict=True)):
        if match.status != "finished":
            error = f"match {rotation} {match.status}: {match.error}"
            metrics.block_ended(league.variant, "failed", item.started)
            repo.fail_block(item.engine, block.id, error, claim=block.claim)
            raise BlockError(error)
        played.append(_record(rotation, block.seed, seating, match, league, run.exits))
    with metrics.STORE_WRITE_SECONDS.labels("record_block").time():
        stored = repo.record_block(item.engine, block.id, played, claim=block.claim)
    status = BlockStatus.STORED if stored else BlockStatus.RACED
    metrics.block_ended(league.variant, status.value, item.started)
    if stored:  # the league's stored table follows its results (never raises)
        standings.block_stored(item.engine, league.id, every_s=item.settings.standings_every_s)
    return BlockOutcome(block.id, status, len(played))


# -- where the bots run ----------------------------------------------------------------------------


class Processes(Protocol):
    """Where a set's bots run. :meth:`play` takes a process per lane, creates the set's matches on
    their referee, waits for the results and gives the processes back (stops or keeps them)."""

    def play(self, items: Sequence[ClaimedBlock], plans: list[MatchPlan]) -> MatchRun:
        """Every match of ``plans`` (the set's, block after block), told by entrant
        (:meth:`arena.matches.Lanes.run`)."""
        ...


def _processes_for(item: ClaimedBlock, warm: WarmPool | None, *, sandbox: bool = True) -> Processes:
    """The warm pool's processes for a block when there is a pool, unless its league asks for fresh
    processes or it has remote entrants; else processes of its own."""
    if warm is not None and not item.remote and not item.league.fresh_processes:
        return WarmProcesses(warm)
    return FreshProcesses(sandbox=sandbox)


@dataclass(frozen=True, slots=True)
class FreshProcesses:
    """A referee of the block's own and a fresh (sandboxed) process per lane, all stopped at its
    end (:func:`arena.matches.play_lanes`). Plays a set of one block."""

    sandbox: bool = True

    def play(self, items: Sequence[ClaimedBlock], plans: list[MatchPlan]) -> MatchRun:
        (item,) = items
        block, league = item.block, item.league
        with block_directories(block.id) as (root, bots_dir):
            # Only root enters the block; each sandboxed bot gets its own directory bound into
            # a root of its own (workers.sandbox), never this one or a rival's.
            os.chmod(root, 0o700)
            specs = {}
            for position in block.entrants:
                if _name(position) in item.remote:
                    continue  # plays from its author's machine: no code, no process here
                version = league.entrants[position]
                directory = root / f"bot{position}"
                unpack_readable(repo.code_of(item.engine, version), directory)
                specs[_name(position)] = bot_spec(directory, version.entry_point)
            launch = sandbox_for(root) if self.sandbox else None
            if launch is not None:
                # The bots' private directories go next to the block's, swept with it (workers.play.lease).
                launch.workdir = bots_dir
            referee = remote_bots.remote_referee() if item.remote else referee_in_thread(root)
            with metrics.counting_bots(launch) as counted, referee as client:
                bots = ProcessGroup(counted)
                item.stopping(bots.kill)
                seated = (
                    remote_bots.await_remote(item.engine, block.id, client, item.remote, plans)
                    if item.remote
                    else {}
                )
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


@dataclass(frozen=True, slots=True)
class WarmProcesses:
    """The warm pool's referee and live processes (:mod:`workers.play.warm`), given back after.

    Each lane's process has never seen the set's deals (:meth:`WarmPool.take`). A bot whose seats
    had any fault, that exited, or whose set did not finish (a lease lost, the referee failed) is
    retired, never used again; its exit goes with the seats' fault details as a fresh process's
    does. A block played on its own stops its bots when its lease is lost; a set of several goes
    on (the other blocks' games are on the same processes), and the block is not stored.
    """

    warm: WarmPool

    def play(self, items: Sequence[ClaimedBlock], plans: list[MatchPlan]) -> MatchRun:
        warm, league, engine = self.warm, items[0].league, items[0].engine
        lanes = deal_lanes(plans)
        taken: dict[str, WarmBot] = {}
        results: list[FinishedMatch] = []
        if len(items) == 1:
            items[0].stopping(lambda: warm.kill(list(taken.values())))
        try:
            positions = {_name(position): position for position in range(len(league.entrants))}
            for lane, entrant in lanes.owner.items():
                taken[lane] = _take(warm, engine, league, positions[entrant], lanes.seeds[lane])
            ids, _ = warm.client.create_matches(
                league.variant,
                league.config,
                lanes.plans,
                seat_key=league.seat_key,
                standing={lane: bot.token for lane, bot in taken.items()},
            )
            results = list(warm.client.results(ids, timeout=24 * 3600))
            entrants = [p for item in items for p in item.block.entrants]
            _note_speeds(warm, league, entrants, [lanes.match(match) for match in results])
        finally:
            complete = len(results) == len(plans) and not any(item.keeper.lost for item in items)
            exits = _give_back(warm, taken, results, complete)
        return lanes.run(MatchRun(results, {lane: exit.status for lane, exit in exits.items()}, exits))


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
    warm: WarmPool, taken: Mapping[str, WarmBot], results: Sequence[FinishedMatch], complete: bool
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


def _note_speeds(
    warm: WarmPool, league: repo.League, positions: Sequence[int], results: Sequence[FinishedMatch]
) -> None:
    """Each entrant's mean time per decision in these matches, by bot version, for :func:`_shareable`."""
    for position in set(positions):
        seats = [s for match in results for s in match.seats if s.entrant == _name(position)]
        decisions = sum(s.decisions for s in seats)
        if decisions:
            warm.decision_ms[league.entrants[position].sha256] = sum(s.think_ms for s in seats) / decisions


# -- helpers ---------------------------------------------------------------------------------------


def _name(position: int) -> str:
    return f"entrant{position}"


def _record(
    rotation: int,
    seed: int,
    seating: tuple[int, ...],
    match: FinishedMatch,
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
                # FaultKind is a str enum: the store takes its kinds by name.
                faults=cast("Mapping[str, int]", s.faults),
                defaulted=s.defaulted,
                forfeited=s.forfeited,
                think_ms=s.think_ms,
                fault_detail=seat_fault_detail(s.faults, s.reasons, exits.get(s.entrant)),
            )
            for s in seats
        ],
        transcript=match.transcript,
    )
