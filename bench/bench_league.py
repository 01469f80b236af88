"""Leagues end to end: four random bots, one-hand games, every bot a sandboxed process.

``league.local.hands_per_s``
    A league played by ``workers.league.run_local`` (the local process pool, one process per
    core) on SQLite in a temporary directory. Hands per second from two league sizes (4 and 124
    deals): the difference in hands over the difference in wall time, so creating the pool and
    the league cancels out; the median of three such pairs. Every block still pays its own costs
    (a referee, four bot processes, claiming, storing): those are part of a league's throughput.
``league.celery.hands_per_s``
    The same leagues through Redis and two real ``celery worker`` processes (concurrency 1
    each) on PostgreSQL, queued and awaited by ``workers.queue.runner.run_celery``; same method.
``league.block_overhead_ms``
    What a block costs besides playing it: scheduling, claiming and storing. The sum of

    * ``league.block_dispatch_ms``: from ``play_block.apply_async`` in the caller to the block's
      claim in the store (``blocks.claimed_at``) by an idle Celery worker: the broker round
      trip, the worker taking the task, and the claim (median over blocks sent one at a time);
    * ``league.block_claim_store_ms``: the rest of ``workers.play.execute.claim_and_play`` that is not
      play, on PostgreSQL: the claim transaction, reading the league, fetching and unpacking the
      four bots' artifacts into a fresh temporary directory (and removing it afterwards), and the
      one transaction that stores the block's four matches (seat results and transcripts).
      Measured as the wall time of ``claim_and_play`` minus the time spent inside its referee
      context (starting the referee, the sandboxed bots, the games and stopping them); median
      over blocks.

``league.celery.scaling_2w``
    Hands per second of one league (96 deals, 24 with ``--quick``) on two workers over the same on
    one worker, in this run (goal >= 1.6); each after a warm-up league of a quarter as many deals,
    so every worker's bots are warm. Blocks go to a worker holding their bots warm (at most two waiting per
    worker, the rest to the shared queue), so both cores play instead of starting bots.
``league.celery.cores_busy_1w`` / ``league.celery.cores_busy_2w``
    How many of the machine's cores were busy (``/proc/stat``: every process on it) while one /
    two workers played that league.
``league.celery.efficiency_2w``
    Throughput per busy core of two workers over that of one, from the same two leagues:
    (hands/s on two workers ÷ ``cores_busy_2w``) ÷ (hands/s on one ÷ ``cores_busy_1w``) (goal
    >= 0.9). Below 1 when a hand costs more CPU with two workers (contention in the store, the
    broker or the machine); unlike ``scaling_2w`` it does not depend on how many cores one worker
    leaves idle.
``league.celery.scaling_bound``
    The machine's cores over ``cores_busy_1w``: the most two workers can give over one here when
    a hand costs the same CPU on either (a worker's referee, its four bots and the store already
    run side by side, so one worker keeps more than one core busy).
``league.warm.block_overhead_ms``
    A block on a worker process's warm bots, excluding play: the wall time of
    ``workers.play.execute.claim_and_play`` with a warmed-up ``workers.play.warm.WarmPool`` (on SQLite, in
    this process) minus the time from its ``CreateMatches`` to its last result. What is left is
    claiming the block, reading the league, taking the warm bots, creating the matches and
    storing the results (median over blocks; goal <= 20).
``run.make_run_s``
    ``make run`` on the installed venv, timed from the shell: the Makefile's league (the example
    bot and the five reference bots, every table of four, ``LEAGUE_DEALS`` deals, whole games)
    created and played on a fresh SQLite store in a temporary directory (goal < 20 s). With
    ``--quick``, one deal.

Needs PostgreSQL at ``SIXNIMMT_BENCH_PG`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``,
where a database ``sixnimmt_bench_<pid>`` is created and dropped) and Redis at
``SIXNIMMT_BENCH_REDIS`` (default ``redis://127.0.0.1:6379``; a numbered database is borrowed
under the same lock files as the tests', flushed before and after). Without them the local
figure is still reported and the module fails with the reason.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from sqlalchemy.engine import make_url

PROJECT = Path(__file__).resolve().parents[1]
BOTS = ["random*4"]  # one table of four: the reference random bot entered four times
CONFIG = {"hands": 1, "target": None}
TABLE = 4
REDIS_DBS = range(15, 0, -1)


def _league(engine: Any, name: str, deals: int) -> Any:
    from workers import league as leagues

    return leagues.create(engine, name, BOTS, config=CONFIG, table_size=TABLE, deals=deals, seed=deals)


def _hands(league: Any) -> int:
    return league.deals * TABLE * int(CONFIG["hands"])  # one table of four: four rotations a deal


def local_hands_per_s(sizes: tuple[int, int], rounds: int) -> float:
    """``run_local`` on SQLite: (hands₂ − hands₁) / (t₂ − t₁) for leagues of ``sizes`` deals, the
    median of ``rounds`` such pairs. Each league starts its own pool and bots (about a second,
    varying by a few tenths): the larger league plays for several seconds, so that variation is
    small against the difference (with 4 and 24 deals it was not: one run measured t₂ < t₁)."""
    rates = [_local_pair(sizes, number) for number in range(rounds)]
    return statistics.median(rates)


def _local_pair(sizes: tuple[int, int], number: int) -> float:
    from workers import league as leagues
    from workers.store.engine import make_engine
    from workers.store.migrate import upgrade

    with tempfile.TemporaryDirectory(prefix="sixnimmt-bench-") as tmp:
        engine = make_engine(f"sqlite:///{tmp}/league.db")
        try:
            upgrade(engine)
            times, hands = [], []
            for deals in sizes:
                league = _league(engine, f"local{number}-{deals}", deals)
                start = time.perf_counter()
                counts = leagues.run_local(engine, league, processes=os.cpu_count() or 1)
                times.append(time.perf_counter() - start)
                assert counts == {"stored": deals}, counts
                hands.append(_hands(league))
        finally:
            engine.dispose()
    return (hands[1] - hands[0]) / (times[1] - times[0])


# -- services -------------------------------------------------------------------------------


@contextlib.contextmanager
def _postgres_database() -> Iterator[str]:
    import psycopg

    admin = os.environ.get("SIXNIMMT_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"sixnimmt_bench_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(admin.replace("postgresql://", "postgresql+psycopg://", 1)).set(database=name)
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def _redis_database() -> Iterator[str]:
    """A numbered Redis database nobody else uses (the tests' lock files), flushed around use."""
    import redis

    base = os.environ.get("SIXNIMMT_BENCH_REDIS", "redis://127.0.0.1:6379").rstrip("/")
    for db in REDIS_DBS:
        handle: IO[str] = open(Path(tempfile.gettempdir()) / f"sixnimmt-test-redis-{db}.lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        url = f"{base}/{db}"
        client = redis.Redis.from_url(url)
        try:
            client.flushdb()
            yield url
        finally:
            client.flushdb()
            client.close()
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        return
    raise RuntimeError("every Redis database is in use")


def _descendants(pid: int) -> list[int]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(ppid, []).append(int(entry))
    out, todo = [], list(tree.get(pid, []))
    while todo:
        child = todo.pop()
        out.append(child)
        todo.extend(tree.get(child, []))
    return out


@contextlib.contextmanager
def _workers(count: int, database_url: str, broker_url: str, logs: Path) -> Iterator[list[Any]]:
    """``count`` real ``celery worker`` processes, concurrency 1 each; stopped on exit."""
    env = {**os.environ, "SIXNIMMT_DATABASE_URL": database_url, "SIXNIMMT_BROKER_URL": broker_url}
    processes = []
    handles: list[IO[str]] = []
    try:
        for i in range(count):
            log = logs / f"worker{i}.log"
            handles.append(log.open("w"))
            processes.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "workers.queue.app",
                        "worker",
                        "--pool=prefork",
                        "--concurrency=1",
                        f"--hostname=bench{i}-{os.getpid()}@%h",
                        "--loglevel=INFO",
                        "--without-gossip",
                        "--without-mingle",
                        "--without-heartbeat",
                    ],
                    cwd=PROJECT,
                    env=env,
                    stdout=handles[-1],
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + 60
        for i, process in enumerate(processes):
            log = logs / f"worker{i}.log"
            while " ready." not in log.read_text(errors="replace"):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"celery worker {i} did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.1)
        yield processes
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                for pid in [process.pid, *_descendants(process.pid)]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                process.wait(10)
        for handle in handles:
            handle.close()


@contextlib.contextmanager
def _app_on(broker_url: str) -> Iterator[Any]:
    """``workers.queue.app.app`` sending to ``broker_url`` (it reads the broker when first imported)."""
    previous = os.environ.get("SIXNIMMT_BROKER_URL")
    os.environ["SIXNIMMT_BROKER_URL"] = broker_url
    from workers.queue.app import app

    old = app.conf.broker_url
    app.conf.broker_url = broker_url
    try:
        yield app
    finally:
        app.conf.broker_url = old
        app.close()
        if previous is None:
            os.environ.pop("SIXNIMMT_BROKER_URL", None)
        else:
            os.environ["SIXNIMMT_BROKER_URL"] = previous


def _cpu_jiffies() -> tuple[int, int]:
    """The machine's busy and total CPU time so far (``/proc/stat``'s first line, in ticks)."""
    with open("/proc/stat") as stat:
        user, nice, system, idle, iowait, irq, softirq, steal = map(int, stat.readline().split()[1:9])
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


def celery_rate(engine: Any, deals: int, tag: str) -> tuple[float, float]:
    """Hands per second of one league of ``deals`` deals after a warm-up league of a quarter as
    many (every worker's bots start there), both through ``run_celery``: the figure the
    two-worker ratio is made of; and how many of the machine's cores were busy meanwhile (every
    process on it: the workers, their bots, PostgreSQL, Redis, this caller, anything else)."""
    from workers.queue import runner

    warmup = _league(engine, f"warmup{tag}", max(4, deals // 4))
    runner.run_celery(engine, warmup, poll_s=0.02, timeout_s=600)
    league = _league(engine, f"rate{tag}", deals)
    busy0, total0 = _cpu_jiffies()
    start = time.perf_counter()
    runner.run_celery(engine, league, poll_s=0.02, timeout_s=600)
    elapsed = time.perf_counter() - start
    busy1, total1 = _cpu_jiffies()
    cores = (os.cpu_count() or 1) * (busy1 - busy0) / max(1, total1 - total0)
    return _hands(league) / elapsed, cores


def celery_hands_per_s(engine: Any, sizes: tuple[int, int], tag: str = "") -> float:
    """``run_celery`` with the workers running: (hands₂ − hands₁) / (t₂ − t₁)."""
    from workers.queue import runner

    times, hands = [], []
    for deals in sizes:
        league = _league(engine, f"celery{tag}{deals}", deals)
        start = time.perf_counter()
        runner.run_celery(engine, league, poll_s=0.02, timeout_s=600)
        times.append(time.perf_counter() - start)
        hands.append(_hands(league))
    return (hands[1] - hands[0]) / (times[1] - times[0])


def dispatch_ms(engine: Any, blocks: int) -> float:
    """Median time from ``apply_async`` to the claim in the store, one block at a time, idle workers."""
    from sqlalchemy import select

    from workers.queue import reconcile
    from workers.queue.messages import BlockMessage
    from workers.queue.tasks import play_block
    from workers.store import repo
    from workers.store.schema import blocks as blocks_table

    delays = []
    # A league of one block each: a worker plays the pending blocks of a league beside the one
    # it was sent (workers.play.execute.play_with_pending), which would claim the next before it is sent.
    for number in range(blocks):
        league = _league(engine, f"dispatch{number}", 1)
        (block,) = repo.blocks_of(engine, league.id)
        # Started, and its block marked queued (as `league start` does), so the workers take this
        # message only: their reconciliation sends none of its own.
        repo.start_league(engine, league.id)
        repo.mark_queued(engine, block.id, not_since=reconcile.EPOCH)
        message = BlockMessage.of(engine, league.id, block.id)
        sent = dt.datetime.now(dt.UTC)
        play_block.apply_async(message.args())
        deadline = time.monotonic() + 120
        while repo.get_block(engine, block.id).status != "done":
            if time.monotonic() > deadline:
                raise TimeoutError(f"block {block.id} was not stored")
            time.sleep(0.02)
        with engine.connect() as conn:
            claimed = conn.execute(
                select(blocks_table.c.claimed_at).where(blocks_table.c.id == block.id)
            ).scalar_one()
        delays.append((claimed - sent).total_seconds() * 1000)
    return statistics.median(delays)


def claim_store_ms(engine: Any, blocks: int) -> float:
    """Median of ``claim_and_play`` wall time minus the time inside its referee context, in process."""
    from workers.play import execute
    from workers.store import repo

    league = _league(engine, "inprocess", blocks)
    inside: list[float] = []
    real = execute.referee_in_thread

    @contextlib.contextmanager
    def timed(directory: Path) -> Iterator[Any]:
        start = time.perf_counter()
        try:
            with real(directory) as client:
                yield client
        finally:
            inside.append(time.perf_counter() - start)

    overheads = []
    execute.referee_in_thread = timed  # type: ignore[assignment]
    try:
        for block in repo.blocks_of(engine, league.id):
            start = time.perf_counter()
            outcome = execute.claim_and_play(engine, block.id)
            total = time.perf_counter() - start
            assert outcome.status == "stored", outcome
            overheads.append((total - inside[-1]) * 1000)
    finally:
        execute.referee_in_thread = real  # type: ignore[assignment]
    return statistics.median(overheads)


def warm_overhead_ms(blocks: int) -> float:
    """Median of ``claim_and_play`` on warm bots minus the time from CreateMatches to the last result."""
    from arena.matches import RefereeClient
    from workers.play.execute import claim_and_play
    from workers.play.warm import WarmPool
    from workers.store import repo
    from workers.store.engine import make_engine
    from workers.store.migrate import upgrade

    inside: list[float] = []
    create, results = RefereeClient.create_matches, RefereeClient.results
    marks: dict[str, float] = {}

    def timed_create(self: Any, *args: Any, **kwargs: Any) -> Any:
        marks["start"] = time.perf_counter()
        return create(self, *args, **kwargs)

    def timed_results(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for value in results(self, *args, **kwargs):  # a block reads its results through this
            marks["end"] = time.perf_counter()
            yield value

    with tempfile.TemporaryDirectory(prefix="sixnimmt-bench-") as tmp:
        engine = make_engine(f"sqlite:///{tmp}/warm.db")
        pool = WarmPool()
        try:
            upgrade(engine)
            league = _league(engine, "warm", blocks + 1)
            todo = repo.blocks_of(engine, league.id)
            assert claim_and_play(engine, todo[0].id, warm=pool).status == "stored"  # the bots start here
            RefereeClient.create_matches = timed_create  # type: ignore[method-assign]
            RefereeClient.results = timed_results  # type: ignore[method-assign]
            overheads = []
            for block in todo[1:]:
                start = time.perf_counter()
                assert claim_and_play(engine, block.id, warm=pool).status == "stored"
                total = time.perf_counter() - start
                # CreateMatches' own round trip is overhead too: its reply time is inside "start".
                inside.append(marks["end"] - marks["start"])
                overheads.append((total - inside[-1]) * 1000)
            assert pool.started == TABLE * TABLE, pool.started  # a lane per entrant and rotation, once
        finally:
            RefereeClient.create_matches = create  # type: ignore[method-assign]
            RefereeClient.results = results  # type: ignore[method-assign]
            pool.close()
            engine.dispose()
    return statistics.median(overheads)


def make_run_s(deals: int) -> float:
    """Wall time of ``make run`` (installed venv) on a fresh store in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="sixnimmt-bench-run-") as tmp:
        env = {**os.environ, "SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp}/run.db"}
        env.pop("SIXNIMMT_BROKER_URL", None)
        start = time.perf_counter()
        done = subprocess.run(
            ["make", "-s", "run", "LEAGUE=bench-run", f"LEAGUE_DEALS={deals}"],
            cwd=PROJECT,
            env=env,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"make run failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def run(quick: bool) -> Iterator[dict[str, Any]]:
    local_sizes = (2, 12) if quick else (4, 124)
    celery_sizes = (2, 6) if quick else (4, 24)
    samples = 3 if quick else 10
    rate_deals = 24 if quick else 96
    local = local_hands_per_s(local_sizes, 1 if quick else 3)
    yield {"name": "league.local.hands_per_s", "value": round(local, 2), "unit": "hands/s"}
    warm = warm_overhead_ms(samples)
    yield {"name": "league.warm.block_overhead_ms", "value": round(warm, 1), "unit": "ms"}
    made = make_run_s(1 if quick else 2)
    yield {"name": "run.make_run_s", "value": round(made, 1), "unit": "s"}

    from workers.store.engine import make_engine
    from workers.store.migrate import upgrade

    logs = Path(tempfile.mkdtemp(prefix="sixnimmt-bench-workers-"))
    try:
        with _postgres_database() as url, _redis_database() as broker:
            engine = make_engine(url)
            try:
                upgrade(engine)
                with _app_on(broker):
                    with _workers(1, url, broker, logs):
                        one, busy_one = celery_rate(engine, rate_deals, "1w")
                    with _workers(2, url, broker, logs):
                        two, busy_two = celery_rate(engine, rate_deals, "2w")
                        yield {
                            "name": "league.celery.scaling_2w",
                            "value": round(two / one, 2),
                            "unit": "ratio",
                        }
                        yield {
                            "name": "league.celery.efficiency_2w",
                            "value": round((two / busy_two) / (one / busy_one), 2),
                            "unit": "ratio",
                        }
                        for name, busy in (("1w", busy_one), ("2w", busy_two)):
                            yield {
                                "name": f"league.celery.cores_busy_{name}",
                                "value": round(busy, 2),
                                "unit": "cores",
                            }
                        yield {
                            "name": "league.celery.scaling_bound",
                            "value": round((os.cpu_count() or 1) / busy_one, 2),
                            "unit": "ratio",
                        }
                        celery = celery_hands_per_s(engine, celery_sizes)
                        yield {
                            "name": "league.celery.hands_per_s",
                            "value": round(celery, 2),
                            "unit": "hands/s",
                        }
                        dispatch = dispatch_ms(engine, samples)
                claim_store = claim_store_ms(engine, samples)
            finally:
                engine.dispose()
        yield {"name": "league.block_overhead_ms", "value": round(dispatch + claim_store, 1), "unit": "ms"}
        yield {"name": "league.block_dispatch_ms", "value": round(dispatch, 1), "unit": "ms"}
        yield {"name": "league.block_claim_store_ms", "value": round(claim_store, 1), "unit": "ms"}
    finally:
        shutil.rmtree(logs, ignore_errors=True)
