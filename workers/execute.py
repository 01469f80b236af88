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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from arena.referee_thread import referee_in_thread
from arena.remote import MatchPlan, ProcessExit, RemoteMatch, RemoteRun, play_remote
from arena.tournament import Block
from referee.settings import load as load_settings
from workers import metrics
from workers import remote as remote_bots
from workers.artifacts import bot_spec, unpack
from workers.faults import seat_fault_detail
from workers.lease import LeaseKeeper, LeaseLostError, ProcessGroup, block_directories
from workers.store import repo
from workers.warm import Version, WarmBot, WarmPool


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
    the rest of the machinery only. With a ``warm`` pool (:mod:`workers.warm`) the block's bots
    are the pool's live processes and its referee is the pool's, unless the league asks for
    fresh processes; without one, the block starts its own referee and bot processes.
    """
    started = time.monotonic()
    settings = load_settings()
    try:
        with metrics.STORE_WRITE_SECONDS.labels("claim_block").time():
            block = repo.claim_block(engine, block_id, worker or worker_name(), lease_s=settings.lease_s)
    except repo.LeaseHeldError:
        metrics.block_ended("", "skipped")
        return BlockOutcome(block_id, "leased elsewhere")
    if block is None:
        metrics.block_ended("", "skipped")
        return BlockOutcome(block_id, "done already")
    keepers: list[LeaseKeeper] = []
    league = repo.league_by_id(engine, block.league_id)
    plan = Block(block.number, block.entrants, block.seed)
    try:
        # A block with remote entrants plays on the referee remote bots connect to (workers.remote).
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
            return BlockOutcome(block_id, "lease lost")
        metrics.block_ended(league.variant, "failed", started)
        repo.fail_block(engine, block_id, f"{type(exc).__name__}: {exc}", claim=block.claim)
        raise
    played = []
    for rotation, (seating, match) in enumerate(zip(plan.seatings(), run.matches, strict=True)):
        if match.status != "finished":
            error = f"match {rotation} {match.status}: {match.error}"
            metrics.block_ended(league.variant, "failed", started)
            repo.fail_block(engine, block_id, error, claim=block.claim)
            raise BlockError(error)
        played.append(_record(rotation, block.seed, seating, match, league, run.exits))
    with metrics.STORE_WRITE_SECONDS.labels("record_block").time():
        stored = repo.record_block(engine, block_id, played, claim=block.claim)
    metrics.block_ended(league.variant, "stored" if stored else "raced", started)
    return BlockOutcome(block_id, "stored" if stored else "raced", len(played))


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

    A bot whose seats had any fault, that exited, or whose block did not finish (its lease lost,
    the referee failed) is retired, never used again; its exit goes with the seats' fault details
    as a fresh process's does.
    """
    taken: dict[str, WarmBot] = {}
    results: list[RemoteMatch] = []
    exits: dict[str, ProcessExit] = {}
    keeper = _keeper(engine, block, settings, lambda: warm.kill(list(taken.values())))
    keepers.append(keeper)
    seatings = plan.seatings()
    with keeper:
        try:
            for position in block.entrants:
                version = league.entrants[position]
                key = Version(version.sha256, version.entry_point, league.variant)
                directory = warm.code_dir(
                    key, lambda path, sha=version.sha256: unpack(repo.artifact(engine, sha), path)
                )
                spec = bot_spec(directory, version.entry_point)
                taken[_name(position)] = warm.take(key, spec, f"{version.bot}@{version.version}")
            client = warm.client
            ids, _ = client.create_matches(
                league.variant,
                league.config,
                [MatchPlan(tuple(_name(p) for p in seating), block.seed) for seating in seatings],
                seat_key=league.seat_key,
                standing={entrant: bot.token for entrant, bot in taken.items()},
            )
            results = [client.result(match_id, wait=True, timeout=24 * 3600) for match_id in ids]
        finally:
            faulted = {s.entrant for match in results for s in match.seats if any(s.faults.values())}
            complete = len(results) == len(seatings) and keeper.lost is None
            for entrant, bot in taken.items():
                exit = warm.give_back(bot, reusable=complete and entrant not in faulted)
                if exit is not None:
                    exits[entrant] = exit
    return RemoteRun(results, {entrant: exit.status for entrant, exit in exits.items()}, exits)


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
            unpack(repo.artifact(engine, version.sha256), directory)
            _readable(directory)
            specs[_name(position)] = bot_spec(directory, version.entry_point)
        plans = [MatchPlan(tuple(_name(p) for p in seating), block.seed) for seating in plan.seatings()]
        launch = sandbox_for(root) if sandbox else None
        if launch is not None:
            # The bots' private directories go next to the block's, swept with it (workers.lease).
            launch.workdir = bots_dir  # type: ignore[attr-defined]
        referee = remote_bots.remote_referee() if remote else referee_in_thread(root)
        with metrics.counting_bots(launch) as counted, referee as client:
            bots = ProcessGroup(counted)
            keeper = _keeper(engine, block, settings, bots.kill)
            keepers.append(keeper)
            with keeper:
                seated = remote_bots.await_remote(engine, block.id, client, remote, plans) if remote else {}
                return play_remote(
                    specs,
                    plans,
                    variant=league.variant,
                    config=league.config,
                    client=client,
                    seat_key=league.seat_key,
                    launch=bots,
                    **seated,
                )


def sandbox_for(directory: Path) -> Callable[..., Any]:
    """The launcher that confines bots whose directories (``directory/NAME``) are under ``directory``.

    Each bot sees its own directory only, read-only; the referee socket is bound in by itself.
    """
    from workers.sandbox import Limits, Sandbox

    return Sandbox(Limits.from_settings(load_settings()), bots_in=[directory])


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
