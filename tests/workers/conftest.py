"""Real services for the league tests: PostgreSQL databases, Redis broker DBs, ``celery worker`` processes.

Nothing here is mocked. The machine's PostgreSQL (``127.0.0.1:5432``, user ``postgres``, trust
auth) gets databases named ``sixnimmt_test_<pid>_<n>`` that are dropped afterwards; Redis
(``127.0.0.1:6379``) lends each test one of its numbered databases, chosen under a file lock so
that parallel sessions and xdist workers never share one, and flushed before and after.
A :class:`CeleryWorker` is a real ``celery -A workers.queue.app worker`` subprocess that is killed,
with every process under it, when the test ends. :class:`PrivatePostgres` is a throwaway
PostgreSQL cluster for tests that stop the database.

Everything skips (with the reason) when PostgreSQL or Redis cannot be reached.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import pytest
from testkit import free_port as free_port  # re-exported for this kit's users
from testkit import wait_for as wait_for

from workers import procs

PROJECT = Path(__file__).resolve().parents[2]
PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"
PG_BIN = Path(os.environ.get("SIXNIMMT_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
REDIS_DBS = range(15, 0, -1)
"""Redis databases tests may borrow (never 0, the default broker's)."""
LOCK_DIR = Path(tempfile.gettempdir())
DB_PREFIX = "sixnimmt_test_"


@contextlib.contextmanager
def file_lock(name: str, timeout: float = 900.0) -> Iterator[None]:
    """An exclusive lock shared by every process on this machine (xdist workers, other sessions)."""
    with open(LOCK_DIR / name, "w") as handle:
        wait_for(lambda: _try_lock(handle), timeout, f"the lock {name}", interval=0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _try_lock(handle: IO[str]) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


# -- PostgreSQL ------------------------------------------------------------------------------


def database_url(database: str, *, host: str = PG_HOST, port: int = PG_PORT) -> str:
    """The SQLAlchemy URL of a database (psycopg 3)."""
    return f"postgresql+psycopg://{PG_USER}@{host}:{port}/{database}"


def _admin(host: str = PG_HOST, port: int = PG_PORT) -> Any:
    import psycopg

    return psycopg.connect(
        host=host, port=port, user=PG_USER, dbname="postgres", autocommit=True, connect_timeout=5
    )


def create_database(name: str, *, host: str = PG_HOST, port: int = PG_PORT) -> str:
    """Create an empty database and return its URL."""
    with _admin(host, port) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return database_url(name, host=host, port=port)


def drop_database(name: str, *, host: str = PG_HOST, port: int = PG_PORT) -> None:
    """Drop a database, closing whatever connections are left."""
    with _admin(host, port) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _drop_orphans() -> None:
    """Drop test databases left by sessions that were killed (their pid is gone)."""
    with _admin() as conn:
        names = [r[0] for r in conn.execute("SELECT datname FROM pg_database")]
        for name in names:
            match = re.fullmatch(rf"{DB_PREFIX}(\d+)(_\d+)?", name)
            if match and not procs.alive(int(match.group(1))):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def migrated_engine(url: str) -> Any:
    """An engine on ``url`` with the store's schema brought to the newest revision."""
    from workers.store.engine import make_engine
    from workers.store.migrate import upgrade

    engine = make_engine(url)
    upgrade(engine)
    return engine


class Databases:
    """Creates fresh databases on the shared PostgreSQL for one session and drops them at its end."""

    def __init__(self) -> None:
        self._numbers = itertools.count(1)
        self.created: list[str] = []

    def new(self) -> str:
        """A new, empty database's URL."""
        name = f"{DB_PREFIX}{os.getpid()}_{next(self._numbers)}"
        url = create_database(name)
        self.created.append(name)
        return url

    def drop_all(self) -> None:
        for name in self.created:
            with contextlib.suppress(Exception):
                drop_database(name)


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[Databases]:
    """A factory of fresh databases on 127.0.0.1:5432 (skips if PostgreSQL is not there)."""
    try:
        _drop_orphans()
    except Exception as exc:  # psycopg.OperationalError, or psycopg missing
        pytest.skip(f"PostgreSQL at {PG_HOST}:{PG_PORT} is not reachable: {exc}")
    databases = Databases()
    try:
        yield databases
    finally:
        databases.drop_all()


@pytest.fixture(scope="session")
def pg_session_url(postgres_databases: Databases) -> str:
    """One migrated database for the whole session (``sixnimmt_test_<pid>_<n>``); tests share it."""
    url = postgres_databases.new()
    migrated_engine(url).dispose()
    return url


@pytest.fixture
def pg_url(postgres_databases: Databases) -> str:
    """A fresh migrated database for this test alone."""
    url = postgres_databases.new()
    migrated_engine(url).dispose()
    return url


@pytest.fixture
def engine(pg_url: str) -> Iterator[Any]:
    """An engine on :func:`pg_url`'s database, disposed of after the test (a module may define
    an ``engine`` of its own)."""
    from workers.store.engine import make_engine

    engine = make_engine(pg_url)
    yield engine
    engine.dispose()


@pytest.fixture
def pg_engine(pg_url: str) -> Iterator[Any]:
    """An engine on this test's fresh database."""
    from workers.store.engine import make_engine

    engine = make_engine(pg_url)
    try:
        yield engine
    finally:
        engine.dispose()


class PrivatePostgres:
    """A PostgreSQL cluster of its own (initdb in a temp dir), to be stopped and started at will.

    Tests that stop the database use this, never the machine's shared server. The data directory
    belongs to the ``postgres`` user (PostgreSQL refuses to run as root); :meth:`destroy` stops
    the server and removes everything.
    """

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="sixnimmt-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self.root.chmod(0o700)
        self._run(PG_BIN / "initdb", "-D", self.data, "-A", "trust", "-U", PG_USER, "--no-sync", "-E", "UTF8")

    def _run(self, *argv: Any, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.as_postgres, *map(str, argv)],
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
            cwd=self.root,
        )

    def start(self) -> None:
        """Start the server (again) on the same port; returns once it accepts connections."""
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        done = self._run(
            PG_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w", "start", check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {done.stdout}{done.stderr}{self.server_log()}")

    def stop(self, mode: str = "immediate") -> None:
        """Stop the server (``immediate``: as if it crashed)."""
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def running(self) -> bool:
        return self._run(PG_BIN / "pg_ctl", "-D", self.data, "status", check=False).returncode == 0

    def server_log(self) -> str:
        try:
            return self.log.read_text()[-3000:]
        except OSError:
            return ""

    def url(self, database: str = "postgres") -> str:
        return database_url(database, port=self.port)

    def create_database(self, name: str) -> str:
        return create_database(name, port=self.port)

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            if self.running():
                self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def private_postgres(postgres_databases: Databases) -> Iterator[PrivatePostgres]:
    """A started private cluster; always stopped and removed afterwards."""
    if not (PG_BIN / "initdb").exists():
        pytest.skip(f"no PostgreSQL binaries in {PG_BIN} (set SIXNIMMT_TEST_PG_BIN)")
    cluster = PrivatePostgres()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


# -- Redis -----------------------------------------------------------------------------------


def redis_client(db: int) -> Any:
    import redis

    return redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db, socket_timeout=10)


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis database of this test's own (a lock file reserves it), flushed before and after."""
    try:
        redis_client(0).ping()
    except Exception as exc:
        pytest.skip(f"Redis at {REDIS_HOST}:{REDIS_PORT} is not reachable: {exc}")
    for db in REDIS_DBS:
        handle = open(LOCK_DIR / f"sixnimmt-test-redis-{db}.lock", "w")  # noqa: SIM115 - held till the end
        if not _try_lock(handle):
            handle.close()
            continue
        try:
            client = redis_client(db)
            client.flushdb()
            yield f"redis://{REDIS_HOST}:{REDIS_PORT}/{db}"
            client.flushdb()
            client.close()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        return
    pytest.fail(f"every Redis database in {list(REDIS_DBS)} is in use by other tests")


@pytest.fixture
def exclusive_machine() -> Iterator[None]:
    """Serialise the heavy real-service tests (worker kills, database outages) on this machine.

    They do not share data (each has its own databases and Redis DB), but each runs a worker and
    its bots; on a small machine two at once slow each other enough to blur their timing.
    """
    with file_lock("sixnimmt-test-celery.lock"):
        yield


# -- processes ----------------------------------------------------------------------------------


def children_map() -> dict[int, list[int]]:
    """Parent pid → child pids, from /proc."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces; the ppid follows the state.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (not ``pid`` itself)."""
    tree = children_map()
    out: list[int] = []
    todo = list(tree.get(pid, []))
    while todo:
        child = todo.pop()
        out.append(child)
        todo.extend(tree.get(child, []))
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def kill_tree(pid: int) -> list[int]:
    """SIGKILL ``pid`` and everything under it at once (stopped first, so nothing respawns or escapes).

    Returns the pids killed.
    """
    frozen: set[int] = set()
    while True:
        current = {pid, *descendants(pid)} - frozen
        if not current:
            break
        for p in current:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGSTOP)
        frozen |= current
    for p in frozen:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
    return sorted(frozen)


class CeleryWorker:
    """A real ``celery -A workers.queue.app worker`` subprocess with the store and broker of a test.

    ``env`` adds ``SIXNIMMT_*`` settings; the worker's log is kept in :attr:`log_path` and
    printed by the fixture when a test fails. ``cli``: started as ``sixnimmt worker`` instead
    (the same app, with the command's own checks and its ``/metrics`` exporter).
    """

    def __init__(
        self,
        name: str,
        *,
        database_url: str,
        broker_url: str,
        directory: Path,
        concurrency: int = 1,
        env: Mapping[str, str] | None = None,
        cli: bool = False,
    ) -> None:
        self.name = name
        self.log_path = directory / f"worker-{name}.log"
        self.environ = {
            **os.environ,
            "SIXNIMMT_DATABASE_URL": database_url,
            "SIXNIMMT_BROKER_URL": broker_url,
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "workers.queue.app",
            "worker",
            "--pool=prefork",
            f"--concurrency={concurrency}",
            f"--hostname={name}@%h",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        if cli:
            argv = [sys.executable, "-m", "bot_sdk.cli", "worker", f"--concurrency={concurrency}"]
            argv += [f"--hostname={name}@%h", "--loglevel=INFO"]
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            argv,
            cwd=PROJECT,
            env=self.environ,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.killed: list[int] = []

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def wait_ready(self, timeout: float = 60) -> CeleryWorker:
        """Wait until the worker consumes from its queue."""

        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"worker {self.name} exited ({self.process.returncode}):\n{self.log()}")
            return " ready." in self.log()

        wait_for(ready, timeout, f"worker {self.name} to be ready")
        return self

    def bot_processes(self) -> list[int]:
        """The bot processes under this worker (the bots themselves, not the sandbox's bwrap
        monitor and the PID 1 shell above each: their command lines hold the bot's too)."""
        return [
            p
            for p in descendants(self.pid)
            if "bot_sdk.run" in (line := cmdline(p))
            and not line.startswith(("/usr/bin/bwrap", "bwrap", "/usr/bin/prlimit", "prlimit"))
            and "sixnimmt-init" not in line
        ]

    def task_outcomes(self) -> dict[str, list[str]]:
        """Task id → what each run returned or raised, from the worker's log."""
        outcomes: dict[str, list[str]] = {}
        for line in self.log().splitlines():
            m = re.search(r"sixnimmt\.play_block\[([0-9a-f-]+)\] (succeeded|retry|raised)[^:]*: (.*)", line)
            if m:
                outcomes.setdefault(m.group(1), []).append(f"{m.group(2)}: {m.group(3)}".strip())
        return outcomes

    def unsettled(self, done: set[int]) -> list[list[str]]:
        """The runs of every task whose last run neither succeeded nor found its block leased by
        the pool process that played it beside another (``execute.play_with_pending``): that one
        looks again later and finds it stored, so it counts as settled once the block is in
        ``done`` (the ids of the stored blocks)."""
        unsettled = []
        for runs in self.task_outcomes().values():
            leased = re.fullmatch(
                r"retry: Retry in [\d.]+s: LeaseHeldError\('block (\d+) is leased'\)", runs[-1]
            )
            if not (runs[-1].startswith("succeeded") or (leased and int(leased.group(1)) in done)):
                unsettled.append(runs)
        return unsettled

    def claimed_all(self, blocks: Sequence[Any]) -> bool:
        """Whether this worker claimed every one of ``blocks`` (store rows): by the message that
        named it, or beside another's (``execute.play_with_pending``), never a local pool."""
        return all((b.claimed_by or "").startswith(f"{self.name}@") for b in blocks)

    def kill(self) -> list[int]:
        """kill -9 the whole worker: its main process and every process under it."""
        self.killed = kill_tree(self.pid)
        self.process.wait(30)
        return self.killed

    def stop(self) -> None:
        """Ask the worker to stop, then kill whatever is left of it (always safe to call)."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(15)
        if self.process.poll() is None or descendants(self.pid):
            kill_tree(self.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(15)
        self._log.close()


@pytest.fixture
def celery_workers(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., CeleryWorker]]:
    """Start real workers with ``start(name, database_url=…, broker_url=…, concurrency=…, env=…)``.

    Each is started in its own session and killed (with every process under it) at teardown;
    the logs of a failed test's workers are printed.
    """
    started: list[CeleryWorker] = []
    blocks_tmp = Path(tempfile.mkdtemp(prefix="sixnimmt-worker-tmp-"))
    blocks_tmp.chmod(0o711)  # sandbox users must reach their block directories inside

    def start(name: str, **kwargs: Any) -> CeleryWorker:
        env = {"TMPDIR": str(blocks_tmp), **kwargs.pop("env", {})}
        worker = CeleryWorker(name, directory=tmp_path, env=env, **kwargs)
        started.append(worker)
        return worker.wait_ready()

    try:
        yield start
    finally:
        for worker in started:
            worker.stop()
        failed = getattr(request.node, "rep_call", None)
        if failed is not None and failed.failed:
            for worker in started:
                print(f"\n----- log of worker {worker.name} -----\n{worker.log()[-8000:]}")
        shutil.rmtree(blocks_tmp, ignore_errors=True)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the test item, so fixtures can tell whether the test failed."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


# -- sending blocks ------------------------------------------------------------------------


class Broker:
    """Sends ``sixnimmt.play_block`` through a given Redis DB with the real task object.

    ``workers.queue.tasks.play_block`` is bound to ``workers.queue.app.app``, whose broker is read from the
    environment at import; each send here passes this test's broker connection explicitly.
    Workers play only blocks of started leagues: :meth:`hand_over` starts a league as ``league
    start`` does but keeps its messages for the test to send when it wants.
    """

    def __init__(self, url: str) -> None:
        from workers.queue.app import app

        self.url = url
        self.connection = app.connection_for_write(url)

    def send(self, message: Any) -> str:
        """``play_block.apply_async(message.args())`` on this broker; returns the task id."""
        from workers.queue.tasks import play_block

        return str(play_block.apply_async(message.args(), connection=self.connection).id)

    def send_raw(self, *args: Any) -> str:
        """A ``play_block`` message with these arguments, whatever they are (old or forged ones)."""
        from workers.queue.tasks import play_block

        return str(play_block.apply_async(args, connection=self.connection).id)

    @staticmethod
    def hand_over(engine: Any, league: Any) -> dict[int, Any]:
        """Start ``league`` as ``league start`` does, but return its messages unsent: block id →
        message.

        Its blocks count as queued for ever (from before the start: no reconciliation running
        meanwhile sees one unqueued), so the workers' reconciliation sends none of them (the test
        does), while it goes on with the rest: heartbeats, warm routes, leases, later rounds.
        """
        import datetime as dt

        from sqlalchemy import update

        from workers.queue.messages import BlockMessage
        from workers.store import repo
        from workers.store.schema import blocks

        with engine.begin() as conn:
            conn.execute(
                update(blocks)
                .where(blocks.c.league_id == league.id)
                .values(queued_at=dt.datetime(9999, 1, 1, tzinfo=dt.UTC))
            )
        repo.start_league(engine, league.id)
        return {
            block.id: BlockMessage.of(engine, league.id, block.id)
            for block in repo.claimable_blocks(engine, league.id)
        }

    def pending(self) -> int:
        """Messages waiting in the queue (not those held by a worker)."""
        import redis

        client = redis.Redis.from_url(self.url)
        try:
            return int(client.llen("sixnimmt-blocks"))
        finally:
            client.close()

    def close(self) -> None:
        self.connection.release()


@pytest.fixture
def broker(redis_url: str) -> Iterator[Broker]:
    """A :class:`Broker` on this test's Redis DB."""
    sender = Broker(redis_url)
    try:
        yield sender
    finally:
        sender.close()


# -- what the store holds ----------------------------------------------------------------------


def store_facts(engine: Any, league_id: int) -> dict[str, Any]:
    """What the store holds for a league, for exactly-once checks.

    ``blocks``: number → (status, attempts); ``matches``: (block number, rotation) → rows stored;
    ``digests``: (block number, rotation) → digest; ``seats`` and ``transcripts`` per match id.
    """
    from sqlalchemy import func, select

    from workers.store.schema import blocks, matches, seat_results, transcripts

    with engine.connect() as conn:
        rows = conn.execute(
            select(blocks.c.number, blocks.c.status, blocks.c.attempts).where(blocks.c.league_id == league_id)
        ).all()
        played = conn.execute(
            select(blocks.c.number, matches.c.rotation, matches.c.id, matches.c.digest)
            .join(matches, matches.c.block_id == blocks.c.id)
            .where(blocks.c.league_id == league_id)
        ).all()
        ids = [m.id for m in played]
        seats = dict(
            conn.execute(
                select(seat_results.c.match_id, func.count())
                .where(seat_results.c.match_id.in_(ids))
                .group_by(seat_results.c.match_id)
            ).all()
        )
        bodies = dict(
            conn.execute(
                select(transcripts.c.match_id, func.count())
                .where(transcripts.c.match_id.in_(ids))
                .group_by(transcripts.c.match_id)
            ).all()
        )
    counts: dict[tuple[int, int], int] = {}
    for m in played:
        counts[(m.number, m.rotation)] = counts.get((m.number, m.rotation), 0) + 1
    return {
        "blocks": {r.number: (r.status, r.attempts) for r in rows},
        "matches": counts,
        "digests": {(m.number, m.rotation): m.digest for m in played},
        "match_ids": {(m.number, m.rotation): m.id for m in played},
        "seats": {m.id: seats.get(m.id, 0) for m in played},
        "transcripts": {m.id: bodies.get(m.id, 0) for m in played},
    }


def assert_stored_once(facts: Mapping[str, Any], *, table_size: int) -> None:
    """Every block done, each (block, rotation) stored exactly once with all its seats and transcript."""
    rotations = range(table_size)
    assert all(status == "done" for status, _ in facts["blocks"].values()), facts["blocks"]
    expected = {(number, r): 1 for number in facts["blocks"] for r in rotations}
    assert facts["matches"] == expected
    assert set(facts["seats"].values()) == {table_size}
    assert set(facts["transcripts"].values()) == {1}


@pytest.fixture
def store() -> Any:
    """The store-inspection helpers: ``store.facts(engine, league_id)``, ``store.assert_once(...)``,
    ``store.wait(condition, timeout, what, interval)``."""

    class Helpers:
        facts = staticmethod(store_facts)
        assert_once = staticmethod(assert_stored_once)
        wait = staticmethod(wait_for)

    return Helpers
