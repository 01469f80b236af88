"""The workers' metrics: blocks played in this process, task runs and retries, the queue depth read
from Redis, and a real ``sixnimmt worker`` (prefork pool, multiprocess mode) scraped over HTTP.

Nothing is mocked: blocks are played by ``workers.play.execute.claim_and_play`` with sandboxed bot processes
and a referee in a thread, on a SQLite store; the queue is a real Redis database.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from obskit import assert_bounded, assert_histogram_consistent, free_port, local, scrape, wait_for

from workers import league as leagues
from workers import metrics
from workers.play.execute import claim_and_play
from workers.queue import runner
from workers.queue.messages import BlockMessage
from workers.store import repo

PROJECT = Path(__file__).resolve().parents[2]
CONFIG = {"hands": 1, "target": None}
TASK = "sixnimmt.play_block"


def _league(engine: Any, bots: list[str], deals: int = 2) -> repo.League:
    return leagues.create(engine, "obs", bots, config=CONFIG, table_size=2, deals=deals, seed=7)


class GaugeWatch:
    """Samples a gauge of this process every few milliseconds and keeps its peak."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, local(self.name))

    def __enter__(self) -> GaugeWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_blocks_bot_processes_and_store_writes_are_counted(engine: Any) -> None:
    league = _league(engine, ["random", "lowest"])
    blocks = repo.blocks_of(engine, league.id)
    names = [
        ("sixnimmt_worker_blocks_total", {"variant": "classic", "outcome": "stored"}),
        ("sixnimmt_worker_blocks_total", {"variant": "", "outcome": "skipped"}),
        ("sixnimmt_worker_block_duration_seconds_count", {"variant": "classic"}),
        ("sixnimmt_worker_store_write_duration_seconds_count", {"operation": "record_block"}),
        ("sixnimmt_worker_store_write_duration_seconds_count", {"operation": "claim_block"}),
        ("sixnimmt_referee_matches_total", {"variant": "classic", "termination": "hands_played"}),
        ("sixnimmt_referee_decision_latency_seconds_count", {"variant": "classic"}),
    ]
    before = {(name, tuple(labels.items())): local(name, **labels) for name, labels in names}

    def moved(name: str, **labels: str) -> float:
        return local(name, **labels) - before[(name, tuple(labels.items()))]

    with GaugeWatch("sixnimmt_worker_bot_processes") as bots:
        for block in blocks:
            assert claim_and_play(engine, block.id).status == "stored"  # sandboxed bots, as in production
    assert claim_and_play(engine, blocks[0].id).status == "done already"

    assert len(blocks) == 2
    assert moved("sixnimmt_worker_blocks_total", variant="classic", outcome="stored") == 2
    assert moved("sixnimmt_worker_blocks_total", variant="", outcome="skipped") == 1
    assert moved("sixnimmt_worker_block_duration_seconds_count", variant="classic") == 2
    assert moved("sixnimmt_worker_store_write_duration_seconds_count", operation="record_block") == 2
    assert moved("sixnimmt_worker_store_write_duration_seconds_count", operation="claim_block") == 3
    assert bots.peak == 4  # a block of two entrants, two rotations: a process per entrant and lane
    assert local("sixnimmt_worker_bot_processes") == 0
    # The referee runs in this process, so its metrics moved here too: two rotations per block.
    assert moved("sixnimmt_referee_matches_total", variant="classic", termination="hands_played") == 4
    assert moved("sixnimmt_referee_decision_latency_seconds_count", variant="classic") >= 4 * 2 * 10


def test_every_task_run_is_counted_with_its_outcome_and_retry_reason(
    engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import workers.queue.tasks as tasks

    league = _league(engine, ["random", "lowest"], deals=1)
    block = repo.blocks_of(engine, league.id)[0]
    repo.start_league(engine, league.id)  # workers play only started leagues' blocks
    args = BlockMessage.of(engine, league.id, block.id).args()
    outcomes = {
        o: local("sixnimmt_worker_tasks_total", task=TASK, outcome=o)
        for o in ("succeeded", "retried", "failed")
    }
    retries = local("sixnimmt_worker_task_retries_total", task=TASK, reason="OperationalError")
    runs = local("sixnimmt_worker_task_duration_seconds_count", task=TASK)

    monkeypatch.setenv("SIXNIMMT_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    monkeypatch.setattr(tasks, "_engine", None)
    assert tasks.play_block.apply(args=args).get() == "stored"
    tasks._engine.dispose()

    # An unreachable store is an infrastructure error: retried (eagerly here) until max_retries.
    # (An empty store, where every query fails; a missing directory is refused before any query.)
    (tmp_path / "gone").mkdir()
    monkeypatch.setenv("SIXNIMMT_DATABASE_URL", f"sqlite:///{tmp_path / 'gone' / 'store.db'}")
    monkeypatch.setattr(tasks, "_engine", None)
    with caplog.at_level(logging.INFO, logger="workers.metrics"):
        assert tasks.play_block.apply(args=args).failed()
    tasks._engine.dispose()

    limit = tasks.play_block.max_retries
    assert local("sixnimmt_worker_tasks_total", task=TASK, outcome="succeeded") - outcomes["succeeded"] == 1
    assert local("sixnimmt_worker_tasks_total", task=TASK, outcome="retried") - outcomes["retried"] == limit
    assert local("sixnimmt_worker_tasks_total", task=TASK, outcome="failed") - outcomes["failed"] == 1
    assert (
        local("sixnimmt_worker_task_retries_total", task=TASK, reason="OperationalError") - retries == limit
    )
    assert local("sixnimmt_worker_task_duration_seconds_count", task=TASK) - runs == limit + 2
    assert local("sixnimmt_worker_tasks_running", task=TASK) == 0
    assert f"sixnimmt.play_block{args!r} attempt 1 will be retried" in caplog.text
    assert f"sixnimmt.play_block{args!r} attempt 1 failed" not in caplog.text
    assert "will be retried: (sqlite3.OperationalError)" in caplog.text
    assert f"attempt {limit + 1} failed: OperationalError" in caplog.text


def test_the_queue_depth_is_read_from_redis_at_each_scrape(redis_url: str) -> None:
    from workers.queue.app import app
    from workers.queue.tasks import play_block as task

    def read(collector: metrics.QueueDepth) -> dict[str, float]:
        return {s.name: s.value for family in collector.collect() for s in family.samples}

    depth = metrics.QueueDepth(redis_url, ["sixnimmt-blocks"])
    assert read(depth) == {"sixnimmt_worker_queue_messages": 0, "sixnimmt_worker_broker_up": 1}
    with app.connection_for_write(redis_url) as connection:
        for block_id in (1, 2, 3):
            task.apply_async((block_id,), connection=connection)
        task.apply_async((4,), connection=connection, priority=6)  # kombu keeps it in a list of its own
    assert read(depth) == {"sixnimmt_worker_queue_messages": 4, "sixnimmt_worker_broker_up": 1}
    nobody = metrics.QueueDepth(f"redis://127.0.0.1:{free_port()}/0", ["sixnimmt-blocks"])
    assert read(nobody) == {"sixnimmt_worker_broker_up": 0}


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.add(int(entry))
    return found


@pytest.mark.slow
def test_a_prefork_worker_serves_the_metrics_of_all_its_processes(
    engine: Any, redis_url: str, tmp_path: Path
) -> None:
    """``sixnimmt worker --concurrency 2``: one endpoint adds up its pool processes, even dead ones."""
    from workers.queue.app import app
    from workers.queue.tasks import play_block as task

    league = _league(engine, ["random", "lowest", "highest"])
    blocks = repo.blocks_of(engine, league.id)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    samples_dir = tmp_path / "metrics"
    blocks_tmp = Path(tempfile.mkdtemp(prefix="sixnimmt-obs-"))
    blocks_tmp.chmod(0o711)  # sandbox users must reach their block directories inside
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env.update(
        SIXNIMMT_DATABASE_URL=str(engine.url),
        SIXNIMMT_BROKER_URL=redis_url,
        PROMETHEUS_MULTIPROC_DIR=str(samples_dir),
        TMPDIR=str(blocks_tmp),
        PYTHONUNBUFFERED="1",
        # One block per message: the counts below are per task, and a pool process that plays a
        # pending block beside its own leaves that block's message to retry (a "retried" run).
        SIXNIMMT_BLOCKS_AT_ONCE="1",
    )
    log_path = tmp_path / "worker.log"
    argv = [sys.executable, "-m", "bot_sdk.cli", "worker", "--concurrency", "2", "--metrics-port", str(port)]
    with open(log_path, "w") as log:
        worker = subprocess.Popen(
            argv, cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:

        def ready() -> bool:
            assert worker.poll() is None, log_path.read_text()
            return " ready." in log_path.read_text()

        wait_for(ready, 60, "the worker to be ready")
        assert scrape(url).value("sixnimmt_worker_broker_up") == 1
        with app.connection_for_write(redis_url) as connection:
            # Started as `league start` starts a league: its messages name the store and league.
            runner.start(engine, league, send=lambda m: task.apply_async(m.args(), connection=connection))
        wait_for(
            lambda: all(b.status == "done" for b in repo.blocks_of(engine, league.id)), 240, "every block"
        )
        pool = wait_for(
            lambda: _children(worker.pid) if len(_children(worker.pid)) == 2 else None, 30, "pool"
        )
        after = wait_for(
            lambda: (s := scrape(url)).value("sixnimmt_worker_tasks_total", outcome="succeeded") == 6 and s,
            30,
            "the last task to be counted",
        )
        assert len(blocks) == 6
        assert after.value("sixnimmt_worker_blocks_total", variant="classic", outcome="stored") == 6
        assert after.value("sixnimmt_worker_block_duration_seconds_count", variant="classic") == 6
        assert (
            after.value("sixnimmt_worker_store_write_duration_seconds_count", operation="record_block") == 6
        )
        assert after.value("sixnimmt_worker_task_duration_seconds_count", task=TASK) == 6
        assert (
            after.value("sixnimmt_referee_matches_total", variant="classic") == 12
        )  # from the pool's referees
        assert (
            after.value("sixnimmt_referee_decision_latency_seconds_count", variant="classic") >= 12 * 2 * 10
        )
        assert_histogram_consistent(after, "sixnimmt_referee_decision_latency_seconds", variant="classic")
        for gauge in ("sixnimmt_worker_bot_processes", "sixnimmt_worker_tasks_running"):
            assert after.value(gauge) == 0
        assert after.value("sixnimmt_worker_queue_messages", queue="sixnimmt-blocks") == 0
        assert_bounded(after, [str(engine.url), redis_url, "entrant0", "entrant1", "entrant2", "@1"])
        writers = {int(p.stem.rsplit("_", 1)[1]) for p in samples_dir.glob("counter_*.db")}
        assert writers & pool, f"no pool process wrote samples: {writers} vs pool {pool}"

        # A pool process dies: Celery replaces it, its counts stay, its live gauges are dropped.
        victim = min(pool)
        os.kill(victim, signal.SIGKILL)
        wait_for(lambda: len(_children(worker.pid) - pool) == 1, 60, "a new pool process")
        again = scrape(url)
        assert again.value("sixnimmt_worker_blocks_total", outcome="stored") == 6
        assert again.value("sixnimmt_referee_matches_total") == 12
        assert not list(samples_dir.glob(f"gauge_live*_{victim}.db"))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(30)
        shutil.rmtree(blocks_tmp, ignore_errors=True)
