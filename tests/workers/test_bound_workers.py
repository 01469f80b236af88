"""A worker plays only its own store's started leagues, whatever its broker holds (issue 29).

The hostile case: two deployments, two stores, one broker. Store B starts its leagues, and their
messages reach store A's worker; store A has leagues of the same ids with the same block ids, one
that nobody started and one started whose messages were never sent. Before messages named their
store, A's worker played B's messages against A's store and finished A's leagues. Now it refuses
them (and forged, old-format and malformed ones),
acknowledges and drops each, logs each kind once and counts them; then, given its own store's
messages once that league is started, it plays the league to the end (the control: the same
worker, the same broker).

No mocks: PostgreSQL (two databases), Redis, a ``sixnimmt worker`` with two pool processes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from testkit import free_port

from workers import league as leagues
from workers.queue import messages, runner
from workers.queue.messages import BlockMessage, Refusal
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

BOTS = ["random", "heuristic", "lowest", "highest"]
TABLE = 4


def _sixnimmt(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


# -- the message format, without services --------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "parsed"),
    [
        ((7, 3, "a" * 32), {}, BlockMessage("a" * 32, 3, 7)),
        ((7,), {}, Refusal.OLD_FORMAT),
        ((7, 3), {}, Refusal.MALFORMED),
        ((7, 3, "A" * 32), {}, Refusal.MALFORMED),
        ((7, 3, "a" * 31), {}, Refusal.MALFORMED),
        ((7, 3, "\x1b]8;;http://x\x07" + "a" * 20), {}, Refusal.MALFORMED),
        ((7, True, "a" * 32), {}, Refusal.MALFORMED),
        (("7", 3, "a" * 32), {}, Refusal.MALFORMED),
        ((0, 3, "a" * 32), {}, Refusal.MALFORMED),
        ((7, -3, "a" * 32), {}, Refusal.MALFORMED),
        (("7",), {}, Refusal.MALFORMED),
        ((), {"block_id": 7}, Refusal.MALFORMED),
        ((7, 3, "a" * 32), {"extra": 1}, Refusal.MALFORMED),
        ((7, 3, "a" * 32, 1), {}, Refusal.MALFORMED),
    ],
)
def test_a_message_names_block_league_and_store(args: Any, kwargs: Any, parsed: Any) -> None:
    assert messages.parse(args, kwargs) == parsed
    if isinstance(parsed, BlockMessage):
        assert parsed.args() == args


FORKED_CHILDREN = """
import json, multiprocessing, sys
from workers.queue import messages

def first_in_child(log, key, conn):
    conn.send(log.first(key))
    conn.close()

log = messages.RefusalLog(limit=3)
log.share()
context = multiprocessing.get_context("fork")
key = ("other_store", "b" * 32, 1)
pipes = [context.Pipe(duplex=False) for _ in range(4)]
children = [context.Process(target=first_in_child, args=(log, key, sent)) for _, sent in pipes]
for child in children:
    child.start()
firsts = [received.recv() for received, _ in pipes]
for child in children:
    child.join(30)
parent = log.first(key)
kinds = [log.first(("other_store", "c" * 32, n)) for n in range(10)]
codes = [c.exitcode for c in children]
print(json.dumps({"firsts": firsts, "parent": parent, "kinds": kinds, "codes": codes}))
"""


def test_the_refusal_log_is_shared_by_the_processes_forked_after_it(tmp_path: Path) -> None:
    """Each kind is logged by one of a worker's pool processes (forked from the main process),
    and the log leaves no file behind (a killed worker's would litter its temporary directory).

    Forked from a fresh interpreter, as Celery's main process forks its pool: a test process
    that has run gRPC threads is no parent to fork from."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", FORKED_CHILDREN], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert list(tmp_path.iterdir()) == []
    assert said["codes"] == [0, 0, 0, 0], done.stderr
    assert sorted(said["firsts"]) == [False, False, False, True]
    assert said["parent"] is False  # the parent too
    # A flood of kinds stops being logged at the limit (the counter goes on).
    assert said["kinds"] == [True, True, False, False, False, False, False, False, False, False]


# -- the command ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["bot_sdk.cli", "worker", "--hostname", "w1@%h"],
        ["celery", "-A", "workers.queue.app", "worker", "--loglevel=INFO"],
    ],
    ids=["sixnimmt-worker", "celery-worker"],
)
def test_a_worker_without_a_broker_setting_stops_with_one_line(argv: list[str], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SIXNIMMT_BROKER_URL"}
    env["SIXNIMMT_DATABASE_URL"] = f"sqlite:///{tmp_path / 'store.db'}"
    done = subprocess.run(
        [sys.executable, "-m", *argv], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert lines == [
        "sixnimmt: error: a worker takes its blocks from a broker: set SIXNIMMT_BROKER_URL"
        " (e.g. redis://HOST:6379/0) to the broker its store's leagues are started on"
    ], done.stderr
    assert "celery@" not in done.stdout and "Connected to" not in done.stdout, done.stdout


def test_the_worker_command_documents_its_hostname() -> None:
    shown = _sixnimmt("worker", "--help", env={})
    assert shown.returncode == 0, shown.stderr
    assert "--hostname" in shown.stdout and "sixnimmt-PID@%h" in shown.stdout


# -- the hostile case, with a real worker --------------------------------------------------------


@pytest.fixture
def two_stores(pg_url: str, postgres_databases: Any) -> Iterator[tuple[Any, Any, str, str]]:
    """Store A (the worker's) and store B (another deployment's), both migrated, each its own id."""
    other_url = postgres_databases.new()
    a, b = make_engine(pg_url), make_engine(other_url)
    upgrade(b)  # pg_url is migrated already
    try:
        yield a, b, pg_url, other_url
    finally:
        a.dispose()
        b.dispose()


def _finished(engine: Any, league_id: int) -> Callable[[], bool]:
    return lambda: repo.league_phase(engine, league_id) == "finished"


def _metric(port: int, name: str) -> dict[str, float]:
    """The samples of a counter on a worker's /metrics: label set → value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        labels: float(value)
        for labels, value in re.findall(rf"^{name}\{{(.*?)\}} (\S+)$", text, flags=re.MULTILINE)
    }


@pytest.mark.slow
@pytest.mark.xdist_group("celery-services")
def test_a_worker_refuses_another_stores_messages_and_leagues_not_started(
    two_stores: tuple[Any, Any, str, str],
    redis_url: str,
    broker: Any,
    celery_workers: Callable[..., Any],
    store: Any,
) -> None:
    a, b, url_a, url_b = two_stores
    store_a, store_b = repo.store_id(a), repo.store_id(b)
    assert store_a != store_b and re.fullmatch(r"[0-9a-f]{32}", store_a)
    config = {"hands": 1, "target": None}
    league_a = leagues.create(a, "same", BOTS, config=config, table_size=TABLE, deals=2, seed=5)
    league_b = leagues.create(b, "same", BOTS, config=config, table_size=TABLE, deals=2, seed=5)
    second_b = leagues.create(b, "second", BOTS, config=config, table_size=TABLE, deals=1, seed=6)
    second_a = leagues.create(a, "second", BOTS, config=config, table_size=TABLE, deals=1, seed=6)
    blocks_a = repo.blocks_of(a, league_a.id)
    # The hostile case: the same league ids and block ids in both stores.
    assert (league_a.id, second_a.id) == (league_b.id, second_b.id)
    assert [x.id for x in blocks_a] == [x.id for x in repo.blocks_of(b, league_b.id)]
    assert [x.id for x in repo.blocks_of(a, second_a.id)] == [x.id for x in repo.blocks_of(b, second_b.id)]
    # A's second league is started, its messages kept: only B's messages name its block.
    held = broker.hand_over(a, second_a)

    port = free_port()
    worker = celery_workers(
        "bound",
        database_url=url_a,
        broker_url=redis_url,
        concurrency=2,
        cli=True,
        env={"SIXNIMMT_WORKER_METRICS_PORT": str(port), "SIXNIMMT_RECONCILE_S": "1"},
    )
    # Store B's operator starts its leagues on the shared broker, as they would with their store.
    env_b = {"SIXNIMMT_DATABASE_URL": url_b, "SIXNIMMT_BROKER_URL": redis_url}
    for name in ("same", "second"):
        started = _sixnimmt("league", "start", name, env=env_b)
        assert started.returncode == 0, started.stderr
    # Again by hand, so each of B's leagues has several messages: each kind is logged once.
    b_messages = [BlockMessage(store_b, league_b.id, x.id) for x in blocks_a] * 2
    sent = [broker.send(m) for m in b_messages]
    first, second = blocks_a
    forged = {
        # Store A's own id, a league nobody started.
        Refusal.NOT_STARTED: [BlockMessage(store_a, league_a.id, first.id)] * 3,
        Refusal.OTHER_LEAGUE: [BlockMessage(store_a, league_a.id + 7, second.id)] * 2,
        Refusal.UNKNOWN_BLOCK: [BlockMessage(store_a, league_a.id, 9999)] * 2,
    }
    for copies in forged.values():
        sent += [broker.send(m) for m in copies]
    old = [broker.send_raw(first.id) for _ in range(2)]  # before messages named their store
    escape = "\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07"
    malformed = [broker.send_raw(first.id, league_a.id, escape), broker.send_raw("x", 1, store_a)]
    sent += old + malformed
    # B's CLI sent 3 messages; every message ends refused, in one run each.
    total = len(sent) + 3

    def refused() -> list[list[str]] | None:
        runs = list(worker.task_outcomes().values())
        return runs if len(runs) >= total else None

    runs = store.wait(refused, 120, "every message to be refused", 0.2)
    assert all(r == ["succeeded: 'refused'"] for r in runs), runs
    assert all(worker.task_outcomes()[t] == ["succeeded: 'refused'"] for t in sent)

    # Nothing was played in either store, and nobody finished store A's league.
    assert all((x.status, x.attempts) == ("pending", 0) for x in repo.blocks_of(a, league_a.id))
    assert repo.league_counts(a, league_a.id)["matches"] == 0
    assert repo.league_phase(a, league_a.id) == "created"
    assert [(x.status, x.attempts) for x in repo.blocks_of(a, second_a.id)] == [("pending", 0)]
    assert repo.league_phase(a, second_a.id) == "started"
    assert all((x.status, x.attempts) == ("pending", 0) for x in repo.blocks_of(b, league_b.id))
    # Acknowledged and dropped: nothing waits or is held unacknowledged.
    client = redis.Redis.from_url(redis_url)
    try:
        assert client.llen("sixnimmt-blocks") == 0 and client.hlen("unacked") == 0
    finally:
        client.close()

    # Each kind logged once, by one of the two pool processes, whatever the number of copies.
    log = worker.log()
    assert "\x1b" not in log, "a terminal escape from the broker reached the log"
    warnings = [line for line in log.splitlines() if "sixnimmt.play_block refused" in line]
    expected = [
        f"messages of store {store_b} (league {league_b.id}); this worker's store is {store_a}",
        f"messages of store {store_b} (league {second_b.id})",
        f"blocks of league {league_a.id}, which was never started",
        f"messages naming league {league_a.id + 7} for blocks of another league",
        "messages for blocks this store does not have",
        "the format before messages named their store",
        "a malformed message",
    ]
    for text in expected:
        assert sum(text in line for line in warnings) == 1, (text, warnings)
    assert len(warnings) == len(expected), warnings

    counted = _metric(port, "sixnimmt_worker_messages_refused_total")
    assert counted == {
        'reason="other_store"': len(b_messages) + 3,
        'reason="not_started"': 3,
        'reason="other_league"': 2,
        'reason="unknown_block"': 2,
        'reason="old_format"': 2,
        'reason="malformed"': 2,
    }, counted

    # The control: given store A's own messages, the same worker plays its leagues to the end,
    # the one started now and the one whose messages were kept.
    runner.start(a, repo.find_league(a, "same"), send=broker.send)
    for message in held.values():
        broker.send(message)
    for league in (league_a, second_a):
        store.wait(_finished(a, league.id), 120, f"A's league {league.name} to finish", 0.2)
        store.assert_once(store.facts(a, league.id), table_size=TABLE)
        # By this worker, under the node name given to `sixnimmt worker --hostname`.
        assert worker.claimed_all(repo.blocks_of(a, league.id))
    assert all(x.status == "pending" for x in repo.blocks_of(b, league_b.id)), "store B untouched"
