"""The API's validations on the league's Celery workers (a broker set): real Redis, a real PostgreSQL
store, real ``celery -A workers.queue.app worker`` processes, the API served for real.

An upload is stored pending with its archive and validated by a worker (the archive cleared, the
version stored); a worker killed in the middle of a check has the check run again by another; a
check that cannot run is retried, then the submission is invalid saying why; one whose check
stopped its workers three times is not handed out again; a submission whose message was lost is
queued again by the next API's start.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import psycopg
import pytest
from apikit import GOOD_BOT, PROJECT, site, wait_done, wait_valid
from sqlalchemy import Engine, select, update
from testkit import borrowed_redis, wait_for

from bot_sdk.client import pack_archive
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import submissions

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"

pytestmark = pytest.mark.slow


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis database no other test uses meanwhile (testkit.borrowed_redis)."""
    with borrowed_redis() as url:
        yield url


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database, migrated, dropped after the test."""
    name = f"sixnimmt_apicelery_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is not reachable: {exc}")
    url = f"postgresql://postgres@127.0.0.1:5432/{name}"
    store = make_engine(url)
    upgrade(store)
    store.dispose()
    try:
        yield url
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _descendants(pid: int) -> list[int]:
    tree, out, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Worker:
    """A real ``celery -A workers.queue.app worker`` over the test's store and broker."""

    def __init__(self, name: str, directory: Path, env: Mapping[str, str]) -> None:
        self.name, self.log_path = name, directory / f"worker-{name}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        argv = [sys.executable, "-m", "celery", "-A", "workers.queue.app", "worker", "--pool=prefork"]
        argv += ["--concurrency=1", f"--hostname={name}@%h", "--loglevel=INFO", "--without-gossip"]
        argv += ["--without-mingle", "--without-heartbeat"]
        self.process = subprocess.Popen(
            argv,
            cwd=PROJECT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for(self._ready, 120, f"worker {name} to be ready")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"worker {self.name} exited:\n{self.log()}")
        return " ready." in self.log()

    def kill(self) -> None:
        """SIGKILL the worker and every process under it (stopped first, so nothing respawns)."""
        frozen: set[int] = set()
        while current := {self.process.pid, *_descendants(self.process.pid)} - frozen:
            for pid in current:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
            frozen |= current
        for pid in frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(20)
        if self.process.poll() is None:
            self.kill()
        self._log.close()


@pytest.fixture
def workers(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """Start workers with ``start(name, database_url, broker_url, **env)``; all stopped at the end."""
    started: list[Worker] = []
    scratch = Path(tempfile.mkdtemp(prefix="sixnimmt-worker-tmp-"))
    scratch.chmod(0o711)  # sandbox users reach their directories inside

    def start(name: str, database_url: str, broker_url: str, **env: str) -> Worker:
        environ = {"SIXNIMMT_DATABASE_URL": database_url, "SIXNIMMT_BROKER_URL": broker_url}
        worker = Worker(name, tmp_path, {"TMPDIR": str(scratch), **environ, **env})
        started.append(worker)
        return worker

    try:
        yield start
    finally:
        for worker in started:
            worker.stop()
            print(f"\n----- log of worker {worker.name} -----\n{worker.log()[-6000:]}")
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)


def _row(engine: Engine, submission_id: int) -> Any:
    with engine.connect() as conn:
        return conn.execute(select(submissions).where(submissions.c.id == submission_id)).one()


def _upload(api: Any, name: str) -> int:
    sent = api.client().post("/v1/submissions", query={"name": name}, body=pack_archive(GOOD_BOT))
    assert sent["status"] == "pending", sent
    return int(sent["id"])


def test_an_upload_waits_with_its_archive_then_a_worker_validates_it(
    tmp_path: Path, pg_url: str, redis_url: str, workers: Any
) -> None:
    env = {"SIXNIMMT_BROKER_URL": redis_url}
    with site(tmp_path, env, engine=make_engine(pg_url)) as api:
        number = _upload(api, "queued")
        # No worker yet: pending, its archive kept, counted in the API's gauge of pending validations.
        row = _row(api.engine, number)
        assert row.status == "pending" and row.archive, row.status
        with urllib.request.urlopen(f"{api.url}/metrics", timeout=30) as answer:
            metrics = answer.read().decode()
        assert "sixnimmt_api_pending_validations 1.0" in metrics
        assert 'sixnimmt_api_submissions_total{outcome="accepted"}' in metrics
        worker = workers("one", pg_url, redis_url)
        done = wait_valid(api.client(), number)
        assert done["version"] == "queued@1"
        # Cleared once decided (just after the submission's end).
        wait_for(lambda: _row(api.engine, number).archive is None, 60, "the archive cleared")
        assert "sixnimmt.validate_submission" in worker.log() and "succeeded" in worker.log()


def test_a_check_whose_worker_dies_runs_again_on_another(
    tmp_path: Path, pg_url: str, redis_url: str, workers: Any
) -> None:
    fast = {"SIXNIMMT_VISIBILITY_TIMEOUT_S": "5"}  # an unacknowledged check goes to another worker soon
    with site(tmp_path, {"SIXNIMMT_BROKER_URL": redis_url}, engine=make_engine(pg_url)) as api:
        first = workers("first", pg_url, redis_url, **fast)
        number = _upload(api, "survivor")

        def checking() -> bool:  # the bot under check runs under the first worker
            return any("bot_sdk" in _cmdline(p) for p in _descendants(first.process.pid))

        wait_for(checking, 240, "the first worker to run the bot's check")
        first.kill()
        assert _row(api.engine, number).status == "pending"  # nothing decided, nothing lost
        workers("second", pg_url, redis_url, **fast)
        assert wait_valid(api.client(), number)["version"] == "survivor@1"


def test_a_check_that_cannot_run_is_retried_then_invalid_saying_why(
    tmp_path: Path, pg_url: str, redis_url: str, workers: Any
) -> None:
    with site(tmp_path, {"SIXNIMMT_BROKER_URL": redis_url}, engine=make_engine(pg_url)) as api:
        # A worker that finds no bubblewrap on its PATH: the sandbox refuses to run any bot.
        worker = workers("broken", pg_url, redis_url, PATH="/nonexistent")
        number = _upload(api, "unlucky")
        done = wait_done(api.client(), number, timeout=300)
        assert done["status"] == "invalid"
        assert done["reason"].startswith("the check could not run (4 tries; the platform's failure"), done
        assert done["version"] is None
        wait_for(lambda: _row(api.engine, number).archive is None, 60, "the archive cleared")
        assert worker.log().count("validate_submission") >= 4  # the first try and three retries


def test_a_check_that_stopped_its_workers_three_times_is_not_handed_out_again(
    tmp_path: Path, pg_url: str, redis_url: str, workers: Any
) -> None:
    import redis

    from workers.queue.validations import MAX_DEATHS, STARTS_KEY

    with site(tmp_path, {"SIXNIMMT_BROKER_URL": redis_url}, engine=make_engine(pg_url)) as api:
        number = _upload(api, "deadly")
        # The starts three deliveries left before their workers died, as the task counts them.
        redis.Redis.from_url(redis_url).set(STARTS_KEY.format(id=number), MAX_DEATHS)
        workers("one", pg_url, redis_url)
        done = wait_done(api.client(), number)
        assert done["status"] == "invalid" and done["version"] is None
        assert done["reason"].startswith(f"its check stopped the worker that ran it {MAX_DEATHS} times"), done


def test_an_apis_start_queues_again_a_validation_whose_message_was_lost(
    tmp_path: Path, pg_url: str, redis_url: str, workers: Any
) -> None:
    import redis

    env = {"SIXNIMMT_BROKER_URL": redis_url}
    with site(tmp_path, env, engine=make_engine(pg_url)) as api:
        number = _upload(api, "lost")
    redis.Redis.from_url(redis_url).flushdb()  # the message is gone; the archive is not
    store = make_engine(pg_url)
    with store.begin() as conn:
        old = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)
        conn.execute(update(submissions).where(submissions.c.id == number).values(created_at=old))
    store.dispose()
    workers("one", pg_url, redis_url)
    from api.app import create_app
    from referee.settings import load

    store = make_engine(pg_url)
    try:
        app = create_app(store, load(env))  # its start finds the stale submission and queues it again

        def decided() -> Any:  # its end, then its archive cleared
            row = _row(store, number)
            return row if row.status != "pending" and row.archive is None else None

        row = wait_for(decided, 240, "the submission queued again to be validated")
        assert row.status == "valid" and row.archive is None, row.reason
        app.state.validator.close()
    finally:
        store.dispose()
