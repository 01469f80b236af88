"""Fault reasons end to end: sandboxed bots that raise, crash and shout, a league on PostgreSQL,
``league status`` (text and JSON), the stored ``fault_detail``, and ``bot submit``'s message."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from testkit import sixnimmt as run_cli

from arena.matches import BotProcess
from workers.bots.artifacts import SubmissionError, pack
from workers.bots.submit import submit
from workers.store import repo
from workers.store.schema import seat_results

RAISER = """
from bot_sdk import ClassicBot

class Raiser(ClassicBot):
    def choose_card(self, view):
        if len(view.hand) % 3 == 0:
            raise ValueError("boom")
        return view.hand[0]
"""
CRASHER = """
import os, sys
from bot_sdk import ClassicBot

class Crasher(ClassicBot):
    def choose_card(self, view):
        if len(view.hand) == 7:
            sys.stderr.write("x" * 200_000 + "\\ndying now\\n")
            sys.stderr.flush()
            os._exit(3)
        return view.hand[0]
"""


def sixnimmt(cwd: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(cwd, *args, env={"SIXNIMMT_DATABASE_URL": url})


def store_unchecked(engine: Any, path: Path) -> None:
    """Store a bot file as a version without its conformance check (which these bots fail)."""
    artifact = pack(path, max_bytes=1 << 20)
    repo.add_bot_version(
        engine, path.stem, artifact.content, artifact.sha256, artifact.entry_point, "classic"
    )


def test_league_status_names_each_bots_fault_reasons(tmp_path: Path, pg_url: str, pg_engine: Any) -> None:
    for name, source in (("raiser.py", RAISER), ("crasher.py", CRASHER)):
        (tmp_path / name).write_text(source)
        store_unchecked(pg_engine, tmp_path / name)
    options = ["-o", "hands=1", "-o", "target=None"]
    created = sixnimmt(
        tmp_path, pg_url, "league", "create", "bad", "--bots", "raiser,crasher,random", "--table", "3",
        "--deals", "1", *options,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    ran = sixnimmt(tmp_path, pg_url, "league", "run", "bad", "--local", "--processes", "1")
    assert ran.returncode == 0, ran.stderr
    assert "x" * 1000 not in ran.stderr + ran.stdout  # a bot's stderr never reaches the worker's

    status = sixnimmt(tmp_path, pg_url, "league", "status", "bad", "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    reasons = data["fault_reasons"]
    assert set(reasons) == {"raiser@1", "crasher@1"}
    (raised,) = reasons["raiser@1"]["faults"]
    assert raised["kind"] == "exception" and raised["count"] == data["faults"]["exception"] > 0
    assert raised["reason"].splitlines()[-1] == "ValueError: boom"
    assert 'raiser.py", line 7, in choose_card' in raised["reason"]
    assert reasons["raiser@1"]["exits"] == []  # it exited cleanly
    crashed = reasons["crasher@1"]
    assert {f["kind"] for f in crashed["faults"]} == {"crash"}
    assert crashed["exits"] == [{"exit": "exited with status 3", "stderr": "dying now", "seats": 3}]

    text = sixnimmt(tmp_path, pg_url, "league", "status", "bad").stdout
    assert re.search(r"^bot +fault +count +reason$", text, re.MULTILINE), text
    raised_row = r"^raiser@1 +exception +\d+ +ValueError: boom \(at raiser\.py:7, in choose_card\)$"
    assert re.search(raised_row, text, re.MULTILINE), text
    crashed_row = (
        r"^crasher@1 +process +3 +process exited with status 3 \(behind 3 seats\); stderr: dying now$"
    )
    assert re.search(crashed_row, text, re.MULTILINE), text

    with pg_engine.connect() as conn:
        details = [json.loads(d) for d in conn.execute(select(seat_results.c.fault_detail)).scalars() if d]
    crash_details = [d for d in details if d["exit"] and d["exit"]["status"] == 3]
    assert len(crash_details) == 3
    for detail in crash_details:
        assert len(detail["exit"]["stderr"]) <= 4096
        assert detail["exit"]["stderr"].endswith("dying now\n")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def broken(:\n", "importing syntax.py failed: syntax.py, line 1: SyntaxError: "),
        (RAISER, "exception ×"),
    ],
    ids=["syntax error", "raises"],
)
def test_submit_names_the_bots_own_error(
    tmp_path: Path, pg_engine: object, source: str, expected: str
) -> None:
    path = tmp_path / "syntax.py"
    path.write_text(source)
    with pytest.raises(SubmissionError) as caught:
        submit(pg_engine, path, "bad", games=2)
    message = str(caught.value)
    assert expected in message, message
    assert "/tmp" not in message and "sixnimmt-" not in message and "disconnect" not in message
    assert len(message.splitlines()) == 1


def test_the_sandbox_names_the_limit_that_killed_a_bot() -> None:
    from workers.sandbox import Limits, Sandbox

    spin = "import sys\nsys.stderr.write('spinning\\n')\nsys.stderr.flush()\nwhile True: pass"
    with Sandbox(Limits(cpu_s=1)) as sandbox:
        process = BotProcess(sandbox([sys.executable, "-c", spin], {}, stderr=subprocess.PIPE))
        process.wait(60)
    exit = process.exit()
    assert (exit.status, exit.signal) == (None, "SIGKILL")
    assert exit.limit == "CPU time limit 1 s (RLIMIT_CPU) reached"
    assert exit.describe() == "killed by SIGKILL: CPU time limit 1 s (RLIMIT_CPU) reached"
    assert "spinning" in exit.stderr
