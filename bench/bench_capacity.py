"""Capacity: what one PostgreSQL and one Redis can feed (docs/capacity.md).

``store.blocks_per_s.{8,32,64}``: N simulated workers, each its own process, play blocks through the
store exactly as a Celery worker's task does (``workers.queue.tasks.play_block``), with results made
up on the spot and no bots or referee: accept the message (``workers.queue.messages.accept``: the
store's id, the block, the league's phase), look for pending blocks beside it
(``repo.pending_blocks_beside``, what a warm worker does with each message), claim the block under a
lease (``repo.claim_block``), read its league (``repo.league_by_id``), renew the lease once
(``repo.renew_lease``), store four made-up matches (``repo.record_block``: the block marked stored,
its matches, seat results and transcripts, one statement on PostgreSQL), look at the league's stored table
(``workers.store.standings.block_stored``: a look at most every ``SIXNIMMT_STANDINGS_EVERY_S`` per
process, skipped while another process has the league's turn) and advance the league
(``workers.queue.reconcile.advance``). Each worker takes every N-th block of a league of 2,000
blocks a second of window (all sent: ``queued_at`` set, as ``league start`` does), as the broker
would hand each block's one message to one worker, plays one block before the window (imports,
connection, its first look at the table) and then as many as it can: blocks stored in the window
over its length. Each worker also reports its own CPU and its PostgreSQL backend's (``/proc``: the
server runs on this machine), printed on stderr per block with each phase's share of the wall time.

``store.claim_p99_ms.64``: the 99th percentile of ``repo.claim_block``'s wall time at 64 workers.

``store.server_cpu_ms_per_block.64``: the CPU time of the 64 workers' PostgreSQL backends (user and
system, ``/proc``) over the blocks stored in the window: what one block costs the database
itself, whoever shares its cores; one dedicated core stores 1,000 / that many blocks a second.

``store.worker_cpu_ms_per_block.64``: the 64 simulated workers' own CPU time (user and system) over
the blocks they stored in the window: what the store's calls cost a worker, SQLAlchemy and psycopg
included (the made-up results are a tenth of a millisecond of it).

``store.worker_cpu_ms_per_block.1`` and ``store.server_cpu_ms_per_block.1``: the same two with one
simulated worker alone, steadier than the 64-worker figures on a busy machine.

``store.pg_blocks_per_s.64`` and ``store.pg_cpu_ms_per_block.64``: what one PostgreSQL sustains when
the workers' own CPU is elsewhere, as in a deployment: a block's statements exactly as a worker
sends them (:func:`pgbench_script`, built from the store's own statement objects; the block's id
from a sequence, standing in for the broker's message) run by 64 pgbench clients (C: a few
microseconds of client CPU a statement) for the window, prepared as psycopg prepares them; blocks
stored a second, and the CPU of the whole PostgreSQL (its backends, WAL writer, checkpointer and
autovacuum, from ``/proc``) per block. ``--quick``: 8 clients, ``.8``. Needs ``pgbench`` (PostgreSQL's
client package) on ``PATH``; without it these two are left out, said on stderr.

``store.reconcile_pass_s.100k``: one reconciliation pass (``workers.queue.reconcile.reconcile``, as a
worker runs it every ``SIXNIMMT_RECONCILE_S``) over a store of 100,000 blocks (ten started leagues of
10,000: 90% stored, 1% running under a live lease, 9% waiting with a message sent a moment ago),
median of three passes. The rows are written with COPY.

``broker.messages_per_s``: ``sixnimmt.play_block`` messages built and published by the real Celery
app (Celery's message protocol, ``BlockMessage`` arguments) to a queue of its own on Redis, then
consumed and acknowledged with kombu; messages over the wall time of both.

PostgreSQL: ``SIXNIMMT_BENCH_DATABASE_URL`` (default ``postgresql://127.0.0.1:5432/test``); each run
creates a database of its own there and drops it at the end. Redis: ``SIXNIMMT_BENCH_BROKER_URL``
(default ``redis://127.0.0.1:6379/15``), a queue of its own, deleted at the end.

``--quick`` (``make bench-quick``): short windows and small stores, a smoke run; its figures are not
figures. Run this file as ``python bench/bench_capacity.py worker …`` to be one simulated worker
(what :func:`store_blocks_per_s` starts).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE = "postgresql://127.0.0.1:5432/test"
DEFAULT_BROKER = "redis://127.0.0.1:6379/15"
TABLE = 4
"""Seats a table: a block is four matches (one per seat rotation) of four seats."""


# -- a fresh database ------------------------------------------------------------------------------


def _admin_url() -> str:
    return _libpq(os.environ.get("SIXNIMMT_BENCH_DATABASE_URL", DEFAULT_DATABASE))


def _libpq(url: str) -> str:
    """``url`` as libpq takes it (psycopg, pgbench): no SQLAlchemy driver name."""
    return "postgresql://" + url.split("://", 1)[1]


def _with_database(url: str, name: str) -> str:
    base, _, _ = url.rpartition("/")
    return f"{base}/{name}"


@contextlib.contextmanager
def fresh_database() -> Iterator[str]:
    """A new database on the bench's PostgreSQL, migrated to the newest schema; dropped afterwards."""
    import psycopg

    admin = _admin_url()
    name = f"sixnimmt_bench_capacity_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = _with_database(admin, name)
    try:
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _engine(url: str) -> Any:
    from workers.store.engine import make_engine

    return make_engine(url)


def _migrate(url: str) -> None:
    from workers.store.migrate import upgrade

    engine = _engine(url)
    upgrade(engine)
    engine.dispose()


def _entrants(count: int = TABLE) -> list[Any]:
    from workers.store import repo

    out = []
    for i in range(count):
        content = f"# capacity bench bot {i}\n".encode()
        import hashlib

        out.append(
            repo.NewVersion(f"capbot{i}", content, hashlib.sha256(content).hexdigest(), "bot.py", "classic")
        )
    return out


def make_league(engine: Any, name: str, blocks: int, *, started: bool = True) -> int:
    """A league of four bots at one table of four, ``blocks`` blocks (one deal each), started."""
    from workers.store import repo

    versions = _stored_versions(engine)
    league_id = repo.create_league(
        engine,
        name,
        variant="classic",
        config={},
        seed=1,
        format="round_robin",
        table_size=TABLE,
        deals=blocks,
        entrants=versions,
        planned=[(n, n, list(range(TABLE))) for n in range(blocks)],
    )
    if started:
        repo.start_league(engine, league_id)
        # ``league start`` sends every block's message, noting when (blocks.queued_at).
        from sqlalchemy import update

        from workers.store.schema import blocks as blocks_table

        with engine.begin() as conn:
            conn.execute(
                update(blocks_table)
                .where(blocks_table.c.league_id == league_id)
                .values(queued_at=dt.datetime.now(dt.UTC))
            )
    return league_id


def _stored_versions(engine: Any) -> list[Any]:
    from workers.store import repo

    versions = []
    for entrant in _entrants():
        version, _new = repo.add_bot_version(
            engine, entrant.bot, entrant.content, entrant.sha256, entrant.entry_point, "classic"
        )
        versions.append(version)
    return versions


# -- one simulated worker --------------------------------------------------------------------------


def made_up(block: Any, league: Any) -> list[Any]:
    """Four finished matches of a block, scores drawn at random: what a worker stores after play."""
    from workers.store import repo

    rng = random.Random(block.id)
    played = []
    for rotation in range(TABLE):
        seating = block.entrants[rotation:] + block.entrants[:rotation]
        scores = [rng.randrange(0, 40) for _ in seating]
        order = sorted(scores)
        seats = [
            repo.SeatRecord(
                seat=seat,
                position=position,
                bot_version_id=league.entrants[position].id,
                score=score,
                rank=order.index(score) + 1,
                faults={},
                defaulted=0,
                forfeited=False,
                think_ms=rng.randrange(1, 50),
            )
            for seat, (position, score) in enumerate(zip(seating, scores, strict=True))
        ]
        transcript = {
            "seed": block.seed,
            "rotation": rotation,
            "scores": scores,
            "steps": [[1, 2, 3, 4]] * 10,
        }
        played.append(
            repo.MatchRecordRow(rotation, block.seed, "sha256:" + "0" * 64, "finished", seats, transcript)
        )
    return played


def worker_main(argv: list[str]) -> int:
    """``worker URL LEAGUE INDEX COUNT SECONDS``: play this worker's share of the league's blocks for
    SECONDS after a line ``go`` on stdin (``ready`` is printed once connected); print what it did."""
    url, league_id, index, count, seconds = argv[0], int(argv[1]), int(argv[2]), int(argv[3]), float(argv[4])
    with_standings = argv[5:6] != ["no-standings"]
    from workers.queue import messages, reconcile
    from workers.store import repo, standings

    engine = _engine(url)
    store = repo.store_id(engine)
    mine = [b.id for b in repo.blocks_of(engine, league_id)][index::count]
    with engine.connect() as conn:
        backend = int(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
    name = f"capacity-{index}@bench"
    sent: list[Any] = []
    clock = time.perf_counter

    def one_block(block_id: int) -> list[float]:
        marks = [clock()]
        message = messages.accept(engine, (block_id, league_id, store), {})
        assert message is not None
        marks.append(clock())
        repo.pending_blocks_beside(engine, block_id, limit=8 * 16)
        marks.append(clock())
        block = repo.claim_block(engine, block_id, name, lease_s=60)
        assert block is not None
        marks.append(clock())
        league = repo.league_by_id(engine, league_id)
        marks.append(clock())
        assert repo.renew_lease(engine, block_id, block.claim, lease_s=60)
        marks.append(clock())
        assert repo.record_block(engine, block_id, made_up(block, league), claim=block.claim)
        marks.append(clock())
        if with_standings:
            standings.block_stored(engine, league_id)
        marks.append(clock())
        reconcile.advance(engine, league_id, sent.append)
        marks.append(clock())
        return marks

    # One block before the window: imports, the connection, the first look at the league's table
    # (the next one is SIXNIMMT_STANDINGS_EVERY_S later, as in a worker that has been running).
    one_block(mine.pop(0))
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return 1
    phases = dict.fromkeys(PHASES, 0.0)
    claims: list[float] = []
    done = 0
    deadline = clock() + seconds
    cpu, server = time.process_time(), _process_cpu_s(backend)
    for block_id in mine:
        if clock() >= deadline:
            break
        marks = one_block(block_id)
        if marks[-1] > deadline:
            break
        done += 1
        claims.append((marks[3] - marks[2]) * 1000)
        for key, a, b in zip(PHASES, marks[:-1], marks[1:], strict=True):
            phases[key] += b - a
    report = {
        "blocks": done,
        "claims_ms": claims,
        "phases": phases,
        "cpu_s": time.process_time() - cpu,
        "server_cpu_s": _process_cpu_s(backend) - server,
    }
    print(json.dumps(report), flush=True)
    engine.dispose()
    return 0


PHASES = ("accept", "beside", "claim", "league", "renew", "record", "standings", "advance")
"""A simulated block's steps, in order (see the module docstring)."""


def _process_cpu_s(pid: int) -> float:
    """CPU seconds (user and system) of a process on this machine (``/proc``): the worker's
    PostgreSQL backend, the server running here beside the simulated workers."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICK


TICK = os.sysconf("SC_CLK_TCK")


# -- the figures -----------------------------------------------------------------------------------


def store_blocks_per_s(
    url: str, workers: int, seconds: float, *, env: dict[str, str] | None = None, standings: bool = True
) -> dict[str, Any]:
    """N simulated workers on a league of their own for ``seconds``: blocks/s, claim times, phases."""
    engine = _engine(url)
    league_id = make_league(
        engine, f"capacity-{workers}-{uuid.uuid4().hex[:6]}", _blocks_for(workers, seconds)
    )
    engine.dispose()
    argv = [sys.executable, str(Path(__file__).resolve()), "worker", url, str(league_id)]
    procs = [
        subprocess.Popen(
            [*argv, str(i), str(workers), str(seconds), "standings" if standings else "no-standings"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(workers)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"a simulated worker did not start: {line!r}")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reports = []
        for proc in procs:
            assert proc.stdout is not None
            reports.append(json.loads(proc.stdout.readline()))
    finally:
        for proc in procs:
            with contextlib.suppress(Exception):
                proc.stdin.close()  # type: ignore[union-attr]
            proc.wait(60)
    blocks = sum(r["blocks"] for r in reports)
    claims = sorted(c for r in reports for c in r["claims_ms"])
    phases = {k: sum(r["phases"][k] for r in reports) for k in reports[0]["phases"]}
    total = sum(phases.values()) or 1.0
    return {
        "blocks_per_s": blocks / seconds,
        "claim_p99_ms": claims[min(len(claims) - 1, int(0.99 * len(claims)))] if claims else float("nan"),
        "claim_p50_ms": claims[len(claims) // 2] if claims else float("nan"),
        "phases": {k: round(v / total, 3) for k, v in phases.items()},
        "server_cpu_ms_per_block": 1000 * sum(r["server_cpu_s"] for r in reports) / max(1, blocks),
        "workers_cpu_ms_per_block": 1000 * sum(r["cpu_s"] for r in reports) / max(1, blocks),
        "ms_per_block": {k: round(1000 * v / max(1, blocks), 2) for k, v in phases.items()},
    }


def _blocks_for(workers: int, seconds: float) -> int:
    """Enough blocks for the window at up to 2,000 blocks/s, at least 50 a worker."""
    return max(workers * 50, int(2000 * seconds) + workers)


def build_store(url: str, total: int, leagues: int = 10) -> list[int]:
    """``total`` blocks in ``leagues`` started leagues (written with COPY): 90% stored, 1% running
    under a live lease, 9% waiting with a message sent a moment ago."""
    import psycopg

    engine = _engine(url)
    # Each league is created with its block 0 (stored below, as done); the others are copied in.
    ids = [make_league(engine, f"reconcile-{i}", 1) for i in range(leagues)]
    engine.dispose()
    now = dt.datetime.now(dt.UTC)
    per = total // leagues
    buffer = io.StringIO()
    for league_id in ids:
        for n in range(1, per):
            share = n % 100
            if share < 90:
                status, lease, claimed, queued, finished = (
                    "done",
                    None,
                    "w@h",
                    now,
                    now - dt.timedelta(seconds=per - n),
                )
            elif share < 91:
                status, lease, claimed, queued, finished = (
                    "running",
                    now + dt.timedelta(seconds=600),
                    "w@h",
                    now,
                    None,
                )
            else:
                status, lease, claimed, queued, finished = "pending", None, None, now, None
            fields = [
                league_id,
                n,
                n,
                json.dumps(list(range(TABLE))),
                status,
                1 if claimed else 0,
                claimed or r"\N",
                lease.isoformat() if lease else r"\N",
                queued.isoformat(),
                finished.isoformat() if finished else r"\N",
            ]
            buffer.write("\t".join(str(f) for f in fields) + "\n")
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        with cur.copy(
            "COPY blocks (league_id, number, seed, entrants, status, attempts, claimed_by, lease_until,"
            " queued_at, finished_at) FROM STDIN"
        ) as copy:
            copy.write(buffer.getvalue())
        cur.execute(
            "UPDATE blocks SET status = 'done', finished_at = now(), queued_at = now() WHERE number = 0"
        )
        cur.execute("ANALYZE blocks")
    return ids


# -- the database alone: the store's statements from pgbench ---------------------------------------

WORKER = "capacity@pgbench"
"""The claim's worker name in the pgbench script (every client's: each block is claimed once)."""


def _sql_literal(value: Any) -> str:
    """A value as an SQL literal: a string or an array (its text form) quoted, NULL, a boolean or
    a number as it is."""
    if isinstance(value, list):
        value = "{" + ",".join(_array_element(v) for v in value) + "}"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return _array_element(value)


def _array_element(value: Any) -> str:
    """An element of an array's text form: NULL, a boolean, a number, or a quoted string."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(f"no SQL literal for {value!r}")


def _with_values(sql: str, values: dict[str, Any], variables: dict[str, str]) -> str:
    """``sql``'s psycopg parameters (``%(name)s``) written in: those in ``variables`` as the pgbench
    expressions given there (``:b``, ``now()``), the others as literals of ``values``; on one line."""
    return re.sub(
        r"%\((\w+)\)s",
        lambda m: variables.get(m.group(1)) or _sql_literal(values[m.group(1)]),
        " ".join(sql.split()),  # the statement's own whitespace only: the literals keep theirs
    )


def _as_pgbench(statement: Any, variables: dict[str, str]) -> str:
    """One of the store's prebuilt statements as PostgreSQL receives it from psycopg, its
    parameters in ``variables`` written as pgbench expressions and every other one (the
    statement's own constants) as a literal."""
    from sqlalchemy.dialects import postgresql

    # As SQLAlchemy sends it to psycopg (IN lists expanded), the variables' values made up here.
    sent = statement.compile(dialect=postgresql.psycopg.dialect()).construct_expanded_state(
        dict.fromkeys(variables, 0)
    )
    return _with_values(sent.statement, sent.parameters, variables)


def pgbench_script(engine: Any, league_id: int) -> str:
    """A pgbench transaction that is one block's store work, statement for statement what a worker
    sends (:func:`worker_main`'s phases: the message's league, the pending blocks beside it, the
    claim, the league, the renewal, the results, ``advance``'s progress), each built from the
    store's own statement objects; the block's id comes from a sequence first, standing in for the
    broker's message (one statement more than a worker makes)."""
    from workers.store import repo
    from workers.store.repo.blocks import _BESIDE, _CLAIM, _RENEW
    from workers.store.repo.leagues import _BLOCK_LEAGUE, _LEAGUE_BY_ID, _LEAGUE_PROGRESS
    from workers.store.repo.results import _RECORD_SQL, record_params

    block = repo.BlockRow(1, league_id, 0, 1, tuple(range(TABLE)), "running", 1)
    played = made_up(block, repo.league_by_id(engine, league_id))
    claim = {"now": "now()", "block": ":b", "any_claim": "false", "worker": _sql_literal(WORKER)}
    record_sql = _with_values(_RECORD_SQL, record_params(0, played, None), claim | {"attempt": ":attempts"})
    lines = [
        "SELECT nextval('capacity_queue') AS b \\gset",
        _as_pgbench(_BLOCK_LEAGUE, {"block_id": ":b"}),
        _as_pgbench(_BESIDE, {"block_id": ":b", "limit": "128"}),
        _as_pgbench(
            _CLAIM,
            {
                "block_id": ":b",
                "now": "now()",
                "worker": _sql_literal(WORKER),
                "until": "(now() + interval '60 s')",
            },
        )
        + " \\gset",
        _as_pgbench(_LEAGUE_BY_ID, {"key": str(league_id)}),
        _as_pgbench(
            _RENEW,
            {
                "block_id": ":b",
                "worker": _sql_literal(WORKER),
                "attempt": ":attempts",
                "until": "(now() + interval '60 s')",
            },
        ),
        record_sql,
        _as_pgbench(_LEAGUE_PROGRESS, {"league_id": str(league_id)}),
    ]
    # A statement ends with ";", or with \gset (which takes its row into variables: :b, :attempts).
    return "".join(line + "\n" if line.endswith("\\gset") else line + ";\n" for line in lines)


def _postgres_cpu_s() -> float:
    """CPU seconds of this machine's PostgreSQL so far: each postmaster's own and its children's
    that ended (``/proc``: cutime, cstime), and its live children's (backends, the WAL writer, the
    checkpointer, autovacuum)."""
    stats: dict[int, tuple[str, int, list[str]]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            text = (entry / "stat").read_text()
            comm = text[text.index("(") + 1 : text.rindex(")")]
            fields = text[text.rindex(")") + 2 :].split()
            stats[int(entry.name)] = (comm, int(fields[1]), fields)
    total = 0
    for comm, parent, fields in stats.values():
        if not comm.startswith("postgres"):
            continue
        parent_comm = stats.get(parent, ("", 0, []))[0]
        if parent_comm.startswith("postgres"):
            total += int(fields[11]) + int(fields[12])  # a child: its own
        else:
            total += sum(int(f) for f in fields[11:15])  # the postmaster: its own and ended children's
    return total / TICK


def store_pg_blocks_per_s(
    url: str, clients: int, seconds: float, *, transactions: int | None = None
) -> dict[str, Any]:
    """What one PostgreSQL sustains: :func:`pgbench_script` from ``clients`` pgbench clients (C, a
    few microseconds of client CPU a statement) for ``seconds`` (or ``transactions`` blocks each),
    prepared statements as psycopg makes them; blocks stored a second, the database's CPU per
    block, and the league they were stored in."""
    engine = _engine(url)
    size = clients * transactions if transactions is not None else int(3000 * seconds)
    league_id = make_league(engine, f"pgbench-{clients}-{uuid.uuid4().hex[:6]}", size + 1000)
    script = pgbench_script(engine, league_id)
    with engine.begin() as conn:
        first = conn.exec_driver_sql(
            "SELECT min(id) FROM blocks WHERE league_id = %s", (league_id,)
        ).scalar_one()
        conn.exec_driver_sql("DROP SEQUENCE IF EXISTS capacity_queue")
        conn.exec_driver_sql(f"CREATE SEQUENCE capacity_queue START {int(first)}")
    engine.dispose()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "block.sql"
        path.write_text(script)
        cpu = _postgres_cpu_s()
        out = subprocess.run(
            ["pgbench", "-n", "-M", "prepared", "-c", str(clients), "-j", "2",
             *(["-t", str(transactions)] if transactions is not None else ["-T", str(int(seconds))]),
             "-f", str(path), _libpq(url)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if out.returncode != 0:
            raise RuntimeError(f"pgbench failed: {out.stderr.strip()[-2000:]}")
        engine = _engine(url)
        try:
            with engine.connect() as conn:
                for _ in range(200):  # the backends of pgbench's connections end after it: wait for them
                    left = conn.exec_driver_sql(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'"
                    ).scalar_one()
                    if not left:
                        break
                    time.sleep(0.05)
                database_cpu = _postgres_cpu_s() - cpu
                stored = conn.exec_driver_sql(
                    "SELECT count(*) FROM blocks WHERE league_id = %s AND status = 'done'", (league_id,)
                ).scalar_one()
        finally:
            engine.dispose()
    processed = int(_pgbench_field(out.stdout, "number of transactions actually processed:").split("/")[0])
    if processed != stored:
        raise RuntimeError(f"pgbench processed {processed} blocks but {stored} are stored: {out.stdout}")
    tps = float(_pgbench_field(out.stdout, "tps =").split()[0])
    return {
        "blocks_per_s": tps,
        "cpu_ms_per_block": 1000 * database_cpu / max(1, stored),
        "blocks": stored,
        "league_id": league_id,
    }


def _pgbench_field(output: str, label: str) -> str:
    for line in output.splitlines():
        if line.startswith(label):
            return line[len(label) :].strip()
    raise RuntimeError(f"pgbench printed no {label!r}: {output}")


def reconcile_pass_s(url: str, passes: int = 3) -> float:
    """The median wall time of ``passes`` reconciliation passes over the store as it is."""
    from workers.queue import reconcile

    engine = _engine(url)
    sent: list[Any] = []
    times = []
    try:
        for _ in range(passes):
            started = time.perf_counter()
            reconcile.reconcile(engine, sent.append, grace_s=300.0, failed_grace_s=300.0)
            times.append(time.perf_counter() - started)
    finally:
        engine.dispose()
    return statistics.median(times)


def broker_messages_per_s(count: int) -> float:
    """``count`` play_block messages published by the real Celery app, then consumed and acked."""
    from kombu import Connection, Queue

    broker = os.environ.get("SIXNIMMT_BENCH_BROKER_URL", DEFAULT_BROKER)
    os.environ["SIXNIMMT_BROKER_URL"] = broker
    from workers.queue.app import make_app
    from workers.queue.messages import BlockMessage

    app = make_app()
    app.conf.broker_url = broker
    queue_name = f"sixnimmt-bench-{uuid.uuid4().hex[:8]}"
    store = uuid.uuid4().hex
    task = app.signature("sixnimmt.play_block")
    got = 0
    started = time.perf_counter()
    with app.producer_or_acquire() as producer:
        for i in range(count):
            args = BlockMessage(store, 1, i + 1).args()
            task.clone(args=args).apply_async(queue=queue_name, producer=producer)
    with Connection(broker) as conn:
        queue = Queue(queue_name, routing_key=queue_name)
        with conn.SimpleQueue(queue) as simple:
            while got < count:
                message = simple.get(block=True, timeout=10)
                message.ack()
                got += 1
            simple.queue.delete()
        # Celery declared an exchange of the queue's name: kombu keeps its bindings in two keys.
        conn.default_channel.client.delete(
            f"_kombu.binding.{queue_name}", f"_kombu.binding_permanent.{queue_name}"
        )
    elapsed = time.perf_counter() - started
    return count / elapsed


def run(quick: bool) -> Iterator[dict[str, Any]]:
    seconds = 2.0 if quick else 12.0
    sizes = (8, 32, 64) if not quick else (8, 16)
    with fresh_database() as url:
        _migrate(url)
        p99 = server = workers_cpu = None
        for workers in sizes:
            result = store_blocks_per_s(url, workers, seconds)
            yield {
                "name": f"store.blocks_per_s.{workers}",
                "value": round(result["blocks_per_s"], 1),
                "unit": "blocks/s",
            }
            print(f"bench: capacity {workers} workers: {json.dumps(result)}", file=sys.stderr)
            p99, server = result["claim_p99_ms"], result["server_cpu_ms_per_block"]
            workers_cpu = result["workers_cpu_ms_per_block"]
        if not quick:
            yield {"name": "store.claim_p99_ms.64", "value": round(p99 or 0.0, 2), "unit": "ms"}
            yield {"name": "store.server_cpu_ms_per_block.64", "value": round(server or 0.0, 2), "unit": "ms"}
            yield {
                "name": "store.worker_cpu_ms_per_block.64",
                "value": round(workers_cpu or 0.0, 2),
                "unit": "ms",
            }
        # The database alone: the same statements from 64 pgbench clients, whose own CPU is small.
        if shutil.which("pgbench") is None:
            print("bench: capacity: no pgbench on PATH: store.pg_* not measured", file=sys.stderr)
        else:
            alone_db = store_pg_blocks_per_s(url, 64 if not quick else 8, seconds)
            print(f"bench: capacity pgbench: {json.dumps(alone_db)}", file=sys.stderr)
            suffix = "64" if not quick else "8"
            yield {
                "name": f"store.pg_blocks_per_s.{suffix}",
                "value": round(alone_db["blocks_per_s"], 1),
                "unit": "blocks/s",
            }
            yield {
                "name": f"store.pg_cpu_ms_per_block.{suffix}",
                "value": round(alone_db["cpu_ms_per_block"], 2),
                "unit": "ms",
            }
        # One simulated worker alone: what a block costs each side without 64 processes on the cores.
        alone = store_blocks_per_s(url, 1, seconds)
        yield {
            "name": "store.worker_cpu_ms_per_block.1",
            "value": round(alone["workers_cpu_ms_per_block"], 2),
            "unit": "ms",
        }
        yield {
            "name": "store.server_cpu_ms_per_block.1",
            "value": round(alone["server_cpu_ms_per_block"], 2),
            "unit": "ms",
        }
    with fresh_database() as url:
        _migrate(url)
        total = 10_000 if quick else 100_000
        build_store(url, total)
        name = "store.reconcile_pass_s.100k" if not quick else "store.reconcile_pass_s.10k"
        yield {"name": name, "value": round(reconcile_pass_s(url), 3), "unit": "s"}
    yield {
        "name": "broker.messages_per_s",
        "value": round(broker_messages_per_s(2_000 if quick else 20_000)),
        "unit": "messages/s",
    }


def main(argv: list[str]) -> int:
    if argv and argv[0] == "worker":
        return worker_main(argv[1:])
    for row in run("--quick" in argv):
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
