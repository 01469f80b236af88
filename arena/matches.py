"""Play through a real referee: start one locally, create matches, run every bot as a process.

Everything crosses process boundaries: the referee is ``sixnimmt referee serve`` in its own
process, each entrant is ``python -m bot_sdk.run SPEC`` in its own process holding one token
for all of its seats, and results come back over the admin API. :func:`play_lanes` splits each
entrant into one process per *lane* first, so that no process plays two seats of one deal (a
duplicate block's rotations: :class:`Lanes`).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bot_sdk import command
from referee import wire
from referee.faults import FaultKind
from sixnimmt.v1 import game_pb2, referee_pb2, referee_pb2_grpc

STDERR_KEEP_BYTES = 64 << 10
"""The end of a bot's stderr kept while it runs (the rest is read and dropped)."""
STDERR_TAIL_CHARS = 4096
"""The end of a bot's stderr reported with its exit (stored with a seat's faults)."""


class RefereeError(RuntimeError):
    """The referee could not be started or reached, or refused a request."""


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """One match to play: the entrant in each seat and the seed."""

    entrants: tuple[str, ...]
    seed: int


@dataclass(slots=True)
class SeatOutcome:
    """One seat's result, as the referee reports it."""

    seat: int
    entrant: str
    score: int
    rank: int
    faults: dict[FaultKind, int]
    defaulted: int
    decisions: int
    forfeited: bool
    think_ms: int
    reasons: list[tuple[FaultKind, str, int]] = field(default_factory=list)
    """Why the faults happened: (kind, reason, count), distinct reasons."""


@dataclass(slots=True)
class FinishedMatch:
    """A finished match."""

    match_id: str
    status: str
    seats: list[SeatOutcome]
    digest: str
    transcript: dict[str, Any] = field(repr=False)
    error: str = ""


def default_time_control() -> dict[str, int]:
    """The platform's time control, ``decision_ms`` and ``bank_ms`` (``SIXNIMMT_DECISION_MS``,
    ``SIXNIMMT_BANK_MS``): what a league's referee gives its blocks, and what ``bot play``,
    ``bot check`` and a submission's check ask for unless told otherwise (:func:`play_matches`'s
    keywords)."""
    from referee.settings import load as load_settings

    settings = load_settings()
    return {"decision_ms": settings.decision_ms, "bank_ms": settings.bank_ms}


def time_control_text(decision_ms: int, bank_ms: int) -> str:
    """How the headers say it: ``time control: 2000 ms a decision + 10000 ms bank``."""
    return f"time control: {decision_ms} ms a decision + {bank_ms} ms bank"


RESULTS_IN_FLIGHT = 32
"""GetResult calls :meth:`RefereeClient.results` keeps waiting at once from a referee without
GetResults."""


class RefereeClient:
    """The admin API of a referee, with a deadline on every call."""

    def __init__(self, address: str, timeout: float = 30.0, admin_token: str = "") -> None:
        self.address = address
        self.timeout = timeout
        self.channel = grpc.insecure_channel(address)
        self.stub = referee_pb2_grpc.RefereeStub(self.channel)
        self.metadata = (("authorization", f"Bearer {admin_token}"),)

    def close(self) -> None:
        """Close the channel."""
        self.channel.close()

    def wait_serving(self, timeout: float = 20.0) -> None:
        """Block until the referee's health check says SERVING."""
        stub = health_pb2_grpc.HealthStub(self.channel)
        deadline = time.monotonic() + timeout
        while True:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                raise RefereeError(f"the referee at {self.address} is not serving after {timeout:.0f} s")
            time.sleep(0.05)

    def create_matches(
        self,
        variant: str,
        config: Mapping[str, Any],
        plans: Sequence[MatchPlan],
        *,
        decision_ms: int = 0,
        bank_ms: int | None = None,
        connect_ms: int = 0,
        max_faults: int = 0,
        send_events: bool = True,
        seat_key: bytes = b"",
        standing: Mapping[str, str] | None = None,
        remote: Mapping[str, str] | None = None,
        remote_wait: bool = False,
    ) -> tuple[list[str], dict[str, str]]:
        """Create the matches; returns their ids and each entrant's token.

        ``seat_key`` keys the bots' seat seeds (empty: the referee picks a random key).
        ``standing`` maps entrants to standing tokens (:meth:`open_standing`): their seats are
        played by the bots already connected with those tokens. ``remote`` maps entrants to bot
        accounts whose remote bots play them (docs/remote.md; ``remote_wait``: an offline one's
        seats wait the connect window instead of failing the call); they get no token.
        """
        request = referee_pb2.CreateMatchesRequest(
            seat_seed_key=seat_key,
            standing=dict(standing or {}),
            remote=dict(remote or {}),
            remote_wait=remote_wait,
        )
        text = json.dumps(dict(config))
        for plan in plans:
            request.matches.add(variant=variant, config_json=text, seed=plan.seed, entrants=plan.entrants)
        if decision_ms or bank_ms is not None or connect_ms:
            request.time_control.decision_ms = decision_ms
            request.time_control.bank_ms = bank_ms or 0
            request.time_control.connect_ms = connect_ms
        request.fault_policy.max_faults = max_faults
        request.fault_policy.omit_events = not send_events
        try:
            response = self.stub.CreateMatches(request, timeout=self.timeout, metadata=self.metadata)
        except grpc.RpcError as exc:
            raise RefereeError(f"CreateMatches failed: {_describe(exc)}") from exc
        return list(response.match_ids), {t.entrant: t.token for t in response.tokens}

    def open_standing(self, name: str = "") -> str:
        """A standing entrant's token: a bot connection that outlives its matches."""
        try:
            reply = self.stub.OpenStanding(
                referee_pb2.OpenStandingRequest(name=name), timeout=self.timeout, metadata=self.metadata
            )
        except grpc.RpcError as exc:
            raise RefereeError(f"OpenStanding failed: {_describe(exc)}") from exc
        return str(reply.token)

    def close_standing(self, tokens: Sequence[str], reason: str = "") -> int:
        """Release standing tokens: each bot gets its goodbye once its games are over."""
        try:
            reply = self.stub.CloseStanding(
                referee_pb2.CloseStandingRequest(tokens=list(tokens), reason=reason),
                timeout=self.timeout,
                metadata=self.metadata,
            )
        except grpc.RpcError as exc:
            raise RefereeError(f"CloseStanding failed: {_describe(exc)}") from exc
        return int(reply.closed)

    def results(self, match_ids: Sequence[str], *, timeout: float | None = None) -> Iterator[FinishedMatch]:
        """Each match's result once it has finished, in the order given; ``timeout`` bounds the
        whole call.

        One ``GetResults`` stream carries them all. A call per result (``GetResult``) cost the
        referee and this client a unary call each: reading 600 finished results took 0.4 s that
        way, most of it the calls' own cost. A referee without ``GetResults`` (an older version)
        is read the old way: up to :data:`RESULTS_IN_FLIGHT` calls waiting at once.
        """
        if not match_ids:
            return
        request = referee_pb2.GetResultsRequest(match_ids=list(match_ids), wait=True)
        stream = self.stub.GetResults(request, timeout=timeout or self.timeout, metadata=self.metadata)
        done = 0
        try:
            for reply in stream:
                done += 1
                yield _match_from_wire(reply)
        except grpc.RpcError as exc:
            if done == 0 and exc.code() is grpc.StatusCode.UNIMPLEMENTED:
                yield from self._results_one_by_one(match_ids, timeout)
                return
            raise _result_failed(match_ids[done] if done < len(match_ids) else "?", exc) from exc
        finally:
            stream.cancel()
        if done < len(match_ids):
            raise RefereeError(f"GetResults ended after {done} of {len(match_ids)} results")

    def _results_one_by_one(self, match_ids: Sequence[str], timeout: float | None) -> Iterator[FinishedMatch]:
        """:meth:`results` from a referee that has only ``GetResult``: calls waiting at once."""
        pending: deque[tuple[str, Any]] = deque()
        ids = iter(match_ids)
        try:
            while True:
                while len(pending) < RESULTS_IN_FLIGHT:
                    match_id = next(ids, None)
                    if match_id is None:
                        break
                    request = referee_pb2.GetResultRequest(match_id=match_id, wait=True)
                    call = self.stub.GetResult.future(
                        request, timeout=timeout or self.timeout, metadata=self.metadata
                    )
                    pending.append((match_id, call))
                if not pending:
                    return
                match_id, call = pending.popleft()
                try:
                    reply = call.result()
                except grpc.RpcError as exc:
                    raise _result_failed(match_id, exc) from exc
                yield _match_from_wire(reply)
        finally:
            for _, call in pending:
                call.cancel()

    def result(self, match_id: str, *, wait: bool = True, timeout: float | None = None) -> FinishedMatch:
        """A match's result; with ``wait``, once it has finished."""
        try:
            reply = self.stub.GetResult(
                referee_pb2.GetResultRequest(match_id=match_id, wait=wait),
                timeout=timeout or self.timeout,
                metadata=self.metadata,
            )
        except grpc.RpcError as exc:
            raise _result_failed(match_id, exc) from exc
        return _match_from_wire(reply)


def _result_failed(match_id: str, exc: grpc.RpcError) -> RefereeError:
    """The error of a failed read of ``match_id``'s result, whichever call read it."""
    return RefereeError(f"GetResult({match_id}) failed: {_describe(exc)}")


def _describe(exc: grpc.RpcError) -> str:
    if isinstance(exc, grpc.Call):
        return f"{exc.code().name}: {exc.details()}"
    return str(exc)


def _match_from_wire(reply: game_pb2.MatchResult) -> FinishedMatch:
    status = wire.STATUS_FROM_WIRE.get(reply.status, "unknown")
    seats = [
        SeatOutcome(
            s.seat,
            s.entrant,
            s.score,
            s.rank,
            wire.seat_faults_from_wire(s),
            s.defaulted,
            s.decisions,
            s.forfeited,
            s.think_ms,
            wire.seat_reasons_from_wire(s),
        )
        for s in reply.seats
    ]
    transcript = json.loads(reply.transcript_json) if reply.transcript_json else {}
    return FinishedMatch(reply.match_id, status, seats, reply.digest, transcript, reply.error)


def python_command(*args: str) -> list[str]:
    """A command line running this Python with the project importable."""
    return [sys.executable, *args]


@contextmanager
def local_referee(env: Mapping[str, str] | None = None) -> Iterator[RefereeClient]:
    """Start ``sixnimmt referee serve`` on a private Unix socket; stop it on exit."""
    with tempfile.TemporaryDirectory(prefix="sixnimmt-") as tmp:
        socket = f"unix:{Path(tmp) / 'referee.sock'}"
        ready = Path(tmp) / "ready"
        admin_token = secrets.token_hex(24)
        log = open(Path(tmp) / "referee.log", "w+")  # noqa: SIM115 - read back on failure
        process = subprocess.Popen(
            python_command(
                "-m", "bot_sdk.cli", "referee", "serve", "--listen", socket, "--ready-file", str(ready)
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
            # A private referee: no metrics port of its own (parallel ones would clash over it).
            env={
                **os.environ,
                "SIXNIMMT_REFEREE_METRICS_PORT": "0",
                **(env or {}),
                "SIXNIMMT_ADMIN_TOKEN": admin_token,
            },
        )
        client = RefereeClient(socket, admin_token=admin_token)
        try:
            deadline = time.monotonic() + 30
            while not ready.exists():
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RefereeError(f"the referee did not start:\n{log.read()[-2000:]}")
                time.sleep(0.02)
            client.wait_serving()
            yield client
        finally:
            client.close()
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


Launcher = Callable[..., "subprocess.Popen[bytes]"]
"""Starts a bot process: ``launch(argv, env, stderr=subprocess.PIPE)``, and for a command bot
``cwd=`` its directory."""


def _popen(
    argv: list[str], env: dict[str, str], *, stderr: int | None = None, cwd: str | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, cwd=cwd
    )


@dataclass(frozen=True, slots=True)
class ProcessExit:
    """How a bot process ended: its exit status or signal, the limit that killed it, its stderr's end."""

    status: int | None
    """The exit status; ``None`` when a signal ended it (or it never ended)."""
    signal: str | None = None
    """The signal that ended it, e.g. ``SIGKILL``."""
    limit: str | None = None
    """Why the signal came, when the launcher knows (a sandbox's ``exit_reason``): the resource
    limit that killed it, or ``stopped by its launcher`` (a bot that did not stop after goodbye)."""
    stderr: str = ""
    """The last :data:`STDERR_TAIL_CHARS` characters the process wrote to stderr."""

    @property
    def clean(self) -> bool:
        """Whether the process exited with status 0."""
        return self.status == 0

    def describe(self) -> str:
        """One line: how it ended."""
        if self.signal:
            return f"killed by {self.signal}" + (f": {self.limit}" if self.limit else "")
        if self.status is None:
            return "did not stop; killed"
        return f"exited with status {self.status}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form (the store's ``fault_detail`` holds it)."""
        return {"status": self.status, "signal": self.signal, "limit": self.limit, "stderr": self.stderr}


def _limit(process: Any) -> str | None:
    """The limit that killed ``process``, from its launcher's ``exit_reason()`` if it has one.

    A sandboxed process says e.g. ``killed by SIGKILL: CPU time limit 600 s (RLIMIT_CPU) reached``;
    the part after the signal is the limit. A plain process has no such method: ``None``.
    """
    reason = getattr(process, "exit_reason", None)
    text = reason() if callable(reason) else None
    if not text or not text.startswith("killed by ") or ": " not in text:
        return None
    return str(text.split(": ", 1)[1])


class BotProcess:
    """A started bot process whose stderr is read into a capped buffer by a thread of its own.

    A bot can write without end: only the last :data:`STDERR_KEEP_BYTES` are kept, and nothing
    reaches this process's own stderr.
    """

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.pid = process.pid
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None
        if process.stderr is not None:
            self._reader = threading.Thread(target=self._drain, name=f"bot-stderr-{process.pid}", daemon=True)
            self._reader.start()

    def _drain(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        fd = stream.fileno()
        try:
            while chunk := os.read(fd, 1 << 16):
                with self._lock:
                    self._tail += chunk
                    if len(self._tail) > STDERR_KEEP_BYTES:
                        del self._tail[: len(self._tail) - STDERR_KEEP_BYTES]
        except OSError:
            pass
        finally:
            stream.close()

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def poll(self) -> int | None:
        return self.process.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.process.wait(timeout)

    def kill(self) -> None:
        self.process.kill()

    def terminate(self) -> None:
        self.process.terminate()

    def stderr_tail(self, chars: int = STDERR_TAIL_CHARS) -> str:
        """The end of what the process wrote to stderr so far (after it ended: all of it was read)."""
        if self._reader is not None and self.process.returncode is not None:
            self._reader.join(2)  # the pipe's last bytes (a grandchild may hold it open: not for long)
        with self._lock:
            text = bytes(self._tail).decode(errors="replace")
        return text[-chars:]

    def exit(self) -> ProcessExit:
        """How the process ended (call once it has been waited for)."""
        code = self.process.returncode
        name = None
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
        limit = _limit(self.process) if name else None
        return ProcessExit(code if code is not None and code >= 0 else None, name, limit, self.stderr_tail())


def spawn_bot(
    spec: str,
    *,
    referee: str,
    token: str,
    variant: str,
    name: str,
    env: Mapping[str, str] | None = None,
    launch: Launcher | None = None,
) -> BotProcess:
    """Start one bot process; the one place that spawns bot processes.

    A Python bot's spec runs as ``python -m bot_sdk.run SPEC``; a command bot's
    (:mod:`bot_sdk.command`: ``cmd:COMMAND``, a directory with a ``bot.toml``) runs its own
    program in its own directory, ``launch(argv, env, stderr=…, cwd=DIR)``.
    ``launch(argv, env, stderr=subprocess.PIPE)`` starts it (default: a plain
    :class:`subprocess.Popen`); a sandbox such as ``workers.sandbox.Sandbox`` plugs in here. The
    bot's stderr goes into a capped buffer (:meth:`BotProcess.stderr_tail`), never to ours.
    """
    environment = {**os.environ, **(env or {}), "SIXNIMMT_REFEREE": referee, "SIXNIMMT_TOKEN": token}
    program = command.parse(spec)
    if program is None:
        argv = python_command("-m", "bot_sdk.run", spec, "--variant", variant, "--name", name)
        return BotProcess((launch or _popen)(argv, environment, stderr=subprocess.PIPE))
    try:
        started = (launch or _popen)(
            list(program.argv), environment, stderr=subprocess.PIPE, cwd=program.directory
        )
    except OSError as exc:  # no such program, not executable: the author's error, in one line
        raise command.CommandError(
            f"{program.where()}: cannot start {program.argv[0]!r}: {exc.strerror}"
        ) from None
    return BotProcess(started)


@dataclass(slots=True)
class MatchRun:
    """Every match of a run on a referee process, and how each bot process ended."""

    matches: list[FinishedMatch]
    exit_codes: dict[str, int | None]
    """Entrant → the bot process's exit status (``None``: killed after it did not stop)."""
    exits: dict[str, ProcessExit] = field(default_factory=dict)
    """Entrant → how its process ended, with the end of its stderr."""


def play_matches(
    specs: Mapping[str, str],
    plans: Sequence[MatchPlan],
    *,
    variant: str = "classic",
    config: Mapping[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    client: RefereeClient | None = None,
    launch: Launcher | None = None,
    seat_key: bytes = b"",
    **time_control: Any,
) -> MatchRun:
    """Play ``plans`` with each entrant (a key of ``specs``) as one bot process.

    ``launch`` starts the bot processes (see :func:`spawn_bot`).
    """
    if client is None:
        with local_referee() as started:
            return play_matches(
                specs,
                plans,
                variant=variant,
                config=config,
                progress=progress,
                client=started,
                launch=launch,
                seat_key=seat_key,
                **time_control,
            )
    limit = matches_at_once()
    if len(plans) > limit:
        parts = [
            play_matches(
                specs,
                plans[start : start + limit],
                variant=variant,
                config=config,
                progress=progress,
                client=client,
                launch=launch,
                seat_key=seat_key,
                **time_control,
            )
            for start in range(0, len(plans), limit)
        ]
        return _joined(parts)
    ids, tokens = client.create_matches(variant, config or {}, plans, seat_key=seat_key, **time_control)
    processes = {
        entrant: spawn_bot(
            specs[entrant], referee=client.address, token=token, variant=variant, name=entrant, launch=launch
        )
        for entrant, token in tokens.items()
    }
    exit_codes: dict[str, int | None] = {}
    exits: dict[str, ProcessExit] = {}
    # A command bot's program that ends before its games do (it exits at once, it crashes) stops
    # the run with one line, rather than leaving its seats to time out game after game.
    watched = {entrant: processes[entrant] for entrant in processes if command.is_command(specs[entrant])}
    grace = 0.0  # a run that stops early has nothing left for its bots to finish
    results: list[FinishedMatch] = []
    try:
        ended: Iterable[FinishedMatch] = (
            (_wait_result(client, match_id, watched, plans, ids) for match_id in ids)
            if watched
            else client.results(ids, timeout=24 * 3600)
        )
        for match in ended:
            results.append(match)
            if progress:
                progress(1)
        grace = GOODBYE_GRACE_S
        return MatchRun(results, exit_codes, exits)
    finally:
        silent = _stopped_answering(results)
        # The bots that stopped answering first: one asleep in its decision would not see its
        # goodbye, and waiting the others' grace for it is time for nothing.
        for entrant in sorted(processes, key=lambda entrant: entrant not in silent):
            process = processes[entrant]
            if entrant in silent and grace:
                exits[entrant], stopped = stop_bot(process, STOP_GRACE_S, STOPPED_AFTER_TIMEOUTS)
            else:
                exits[entrant], stopped = stop_bot(process, grace, None)
            exit_codes[entrant] = None if stopped else process.returncode


STOPPED_AFTER_TIMEOUTS = "stopped when its games were over: it had timed out"
"""The :attr:`ProcessExit.limit` of a bot :func:`play_matches` stopped at once for its timeouts."""
GOODBYE_GRACE_S = 10.0
"""Seconds a bot that answered every request has to exit after its goodbye before it is killed."""
STOP_GRACE_S = 1.0
"""Seconds a bot that timed out has, after the SIGTERM it gets when its games are over, before SIGKILL."""


def _stopped_answering(results: Iterable[FinishedMatch]) -> set[str]:
    """The entrants with a timed-out seat: they may be stuck in a decision, deaf to their goodbye."""
    return {s.entrant for match in results for s in match.seats if s.faults.get(FaultKind.TIMEOUT)}


def stop_bot(process: BotProcess, grace: float, why: str | None) -> tuple[ProcessExit, bool]:
    """End ``process``, returning how it ended and whether it had to be stopped.

    With ``why`` (it stopped answering): SIGTERM at once if it is still running, SIGKILL if it
    has not exited ``grace`` seconds later, its exit saying ``why`` (unless its launcher names a
    resource limit that killed it). Without: it has ``grace`` seconds to exit after its goodbye, then
    SIGKILL.
    """
    if why is None:
        try:
            process.wait(grace)
            return process.exit(), False
        except subprocess.TimeoutExpired:
            process.kill()  # killed by SIGKILL: it did not stop after goodbye
            process.wait()
            return process.exit(), True
    if process.poll() is not None:
        return process.exit(), False
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    ended = process.exit()
    # A sandbox says its own signals were "stopped by its launcher": here is why it sent them.
    if ended.limit in (None, "stopped by its launcher"):
        ended = replace(ended, limit=why)
    return ended, True


def matches_at_once() -> int:
    """The most matches :func:`play_matches` creates at once: half the results a referee keeps
    (``SIXNIMMT_KEEP_RESULTS``), at most 2,000.

    A referee keeps the latest finished results only (bounded in count and memory), and the run
    reads them in the order they were created: with more games in flight than it keeps, the
    first to finish could be dropped before they are read, and a run of hours would fail at its
    end. A longer run plays in parts of this size, one after another, each with its own bot
    processes; the games, their seeds and their order are the same.
    """
    from referee.settings import load as load_settings

    return max(1, min(2000, load_settings().keep_results // 2))


def _joined(parts: Sequence[MatchRun]) -> MatchRun:
    """One run of consecutive parts: every match in order; per entrant, the first exit of a part
    that did not end cleanly, else the last."""
    matches = [match for part in parts for match in part.matches]
    exit_codes: dict[str, int | None] = {}
    exits: dict[str, ProcessExit] = {}
    for part in parts:
        for entrant, code in part.exit_codes.items():
            if entrant in exit_codes and exit_codes[entrant] != 0:
                continue  # the first part whose process did not end cleanly stands
            exit_codes[entrant] = code
            if entrant in part.exits:
                exits[entrant] = part.exits[entrant]
    return MatchRun(matches, exit_codes, exits)


class BotExitedError(RefereeError):
    """A command bot's process ended while games it plays in were still running."""

    def __init__(self, entrant: str, exit: ProcessExit) -> None:
        last = [line for line in exit.stderr.splitlines() if line.strip()][-1:]
        super().__init__(
            f"the bot {entrant} {exit.describe()} before its games ended"
            + (f"; its stderr ends: {last[0].strip()}" if last else " (nothing on its stderr)")
        )
        self.entrant = entrant
        self.exit = exit


def _wait_result(
    client: RefereeClient,
    match_id: str,
    watched: Mapping[str, BotProcess],
    plans: Sequence[MatchPlan],
    ids: Sequence[str],
) -> FinishedMatch:
    """``match_id``'s result once it is over; :class:`BotExitedError` when a watched bot ends first."""
    while True:
        try:
            return client.result(match_id, wait=True, timeout=0.5)
        except RefereeError as exc:
            cause = exc.__cause__
            if not (isinstance(cause, grpc.Call) and cause.code() == grpc.StatusCode.DEADLINE_EXCEEDED):
                raise
        for entrant, process in watched.items():
            if process.poll() is None:
                continue
            mine = [i for i, plan in zip(ids, plans, strict=True) if entrant in plan.entrants]
            if any(client.result(i, wait=False).status in ("waiting", "running") for i in mine):
                raise BotExitedError(entrant, process.exit())


LANE_MARK = "~"
"""Joins an entrant's name and its lane number in the name of a lane's process (``entrant3~1``)."""


@dataclass(frozen=True, slots=True)
class Lanes:
    """The matches of a run split so that no bot process plays two seats of one deal.

    A league plays each table as a duplicate block: one deal, replayed once per seat rotation.
    A process that played an entrant's seats in every rotation would hold, at its first decision,
    every hand of the deal (its own hand of each rotation is another seat's hand in the others).
    So an entrant's seats are split into *lanes* by deal seed: the k-th seat it holds among the
    matches of one seed goes to its lane k, and each lane is a process of its own (its own token,
    its own sandbox). A lane plays one seat of every deal it meets, so it still gets many games
    per message when the run holds many deals (several blocks as one set).
    """

    plans: list[MatchPlan]
    """The matches, each seat named by its lane (lane 0 keeps the entrant's name)."""
    owner: dict[str, str]
    """Lane → the entrant it plays for."""
    seeds: dict[str, frozenset[int]]
    """Lane → the deal seeds of its matches."""

    def by_entrant(self) -> dict[str, list[str]]:
        """Entrant → its lanes, lane 0 first."""
        out: dict[str, list[str]] = {}
        for lane, entrant in self.owner.items():
            out.setdefault(entrant, []).append(lane)
        return out

    def run(self, run: MatchRun) -> MatchRun:
        """A run of :attr:`plans` told by entrant, as if each entrant had been one process: every
        seat (and each transcript's ``meta.seats``) names its entrant again; an entrant's exit is
        the first of its lanes' that did not end cleanly, else lane 0's (a fault of any lane is the
        entrant's)."""
        matches = [self.match(match) for match in run.matches]
        exit_codes: dict[str, int | None] = {}
        exits: dict[str, ProcessExit] = {}
        for entrant, lanes in self.by_entrant().items():
            ended = [lane for lane in lanes if lane in run.exits]
            worst = next((lane for lane in ended if not run.exits[lane].clean), ended[0] if ended else None)
            if worst is not None:
                exits[entrant] = run.exits[worst]
            codes = [lane for lane in lanes if lane in run.exit_codes]
            code = next((lane for lane in codes if run.exit_codes[lane] != 0), codes[0] if codes else None)
            if code is not None:
                exit_codes[entrant] = run.exit_codes[code]
        return MatchRun(matches, exit_codes, exits)

    def match(self, match: FinishedMatch) -> FinishedMatch:
        """``match`` with its seats named by entrant again (see :meth:`run`)."""
        seats = [replace(s, entrant=self.owner.get(s.entrant, s.entrant)) for s in match.seats]
        transcript = match.transcript
        meta = transcript.get("meta") if isinstance(transcript, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("seats"), list):
            named = [self.owner.get(name, name) if isinstance(name, str) else name for name in meta["seats"]]
            transcript = {**transcript, "meta": {**meta, "seats": named}}
        return replace(match, seats=seats, transcript=transcript)


def deal_lanes(plans: Sequence[MatchPlan], *, whole: Iterable[str] = ()) -> Lanes:
    """Split each entrant's seats of ``plans`` into lanes by deal seed (see :class:`Lanes`).

    The entrants in ``whole`` are not split (a remote bot is one connection its author runs:
    there is no process of ours to split it into).
    """
    keep = set(whole)
    held: dict[tuple[str, int], int] = {}
    owner: dict[str, str] = {}
    seeds: dict[str, set[int]] = {}
    out = []
    for plan in plans:
        names = []
        for entrant in plan.entrants:
            if entrant in keep:
                lane = entrant
            else:
                k = held.get((entrant, plan.seed), 0)
                held[(entrant, plan.seed)] = k + 1
                lane = entrant if k == 0 else f"{entrant}{LANE_MARK}{k}"
            owner[lane] = entrant
            seeds.setdefault(lane, set()).add(plan.seed)
            names.append(lane)
        out.append(MatchPlan(tuple(names), plan.seed))
    return Lanes(out, owner, {lane: frozenset(s) for lane, s in seeds.items()})


def play_lanes(
    specs: Mapping[str, str],
    plans: Sequence[MatchPlan],
    *,
    remote: Mapping[str, str] | None = None,
    **options: Any,
) -> MatchRun:
    """:func:`play_matches` with each entrant split into lanes (:func:`deal_lanes`): no process it
    starts plays two seats of one deal. The run is told by entrant (:meth:`Lanes.run`).

    ``remote`` (entrant → bot account) names the entrants that play from their authors' machines
    (docs/remote.md): each is its one connection, not split. The other options are
    :func:`play_matches`'s.
    """
    lanes = deal_lanes(plans, whole=remote or {})
    lane_specs = {lane: specs[entrant] for lane, entrant in lanes.owner.items() if entrant in specs}
    extra = {"remote": remote} if remote else {}
    return lanes.run(play_matches(lane_specs, lanes.plans, **options, **extra))
