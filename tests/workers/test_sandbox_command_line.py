"""A command bot's command line binds nothing of the host (issue 29): the PostgreSQL escape and its kin.

The attack: a directory bot whose ``bot.toml`` arguments name PostgreSQL's pid file, so that a
sandbox binding every named file's directory made the server's Unix socket reachable; the bot
then logs in as the superuser and runs ``COPY … TO PROGRAM`` on the host. Unconfined, the same
attack (``hostile_bots/pg_command.py``) creates its marker table and file, as a control. Here:
such a ``bot.toml`` is refused at submission with one line (``bot check``, ``bot submit``, a
league's entrants), forced into the store it fails its block with the reason recorded, and an
allowed command that attacks anyway reaches nothing. The marker never appears in PostgreSQL or
on the host. The same holds for ``../`` arguments naming a rival's files, absolute arguments and
a program path that climbs out.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, select, text
from testkit import sixnimmt

from arena.matches import local_referee, spawn_bot
from bot_sdk.command import CommandError, parse
from workers.bots.artifacts import SubmissionError, pack
from workers.sandbox import Limits, Sandbox
from workers.store import repo
from workers.store.schema import blocks

ATTACK = Path(__file__).resolve().parent / "hostile_bots" / "pg_command.py"
PG_DIR = "/var/run/postgresql"
ADMIN_URL = "postgresql+psycopg://postgres@/test?host=/var/run/postgresql"


def pid_file() -> str:
    """PostgreSQL's pid file, beside its socket (the file the attack names)."""
    names = sorted(name for name in os.listdir(PG_DIR) if name.endswith(".pid") or name.endswith(".lock"))
    assert names, f"no PostgreSQL pid file in {PG_DIR}"
    return f"{PG_DIR}/{names[0]}"


@pytest.fixture
def token() -> Iterator[str]:
    """A fresh marker name; afterwards its table and file are gone whatever happened."""
    value = secrets.token_hex(6)
    yield value
    with create_engine(ADMIN_URL).begin() as conn:
        conn.execute(text(f"DROP TABLE IF EXISTS sixnimmt_marker_{value}"))
    Path(f"/tmp/sixnimmt-marker-{value}").unlink(missing_ok=True)


def marker(token: str) -> tuple[bool, bool]:
    """Whether the attack's table exists in PostgreSQL, and its file on the host."""
    engine = create_engine(ADMIN_URL)
    with engine.connect() as conn:
        table = conn.execute(text("SELECT to_regclass(:name)"), {"name": f"sixnimmt_marker_{token}"}).scalar()
    engine.dispose()
    return table is not None, Path(f"/tmp/sixnimmt-marker-{token}").exists()


def attacker(where: Path, command: list[str], name: str = "attacker") -> Path:
    directory = where / name
    directory.mkdir(parents=True)
    shutil.copy(ATTACK, directory / "attack.py")
    (directory / "bot.toml").write_text(f"command = {json.dumps(command)}\n")
    return directory


def hostile_commands(token: str, rival: str) -> list[tuple[list[str], str]]:
    """Each command line of the attacks, and the words of the line refusing it."""
    return [
        (["python3", "attack.py", token, pid_file()], "names a path outside the bot's directory"),
        (["python3", "attack.py", token, f"../{rival}/bot.toml"], "names a path outside the bot's directory"),
        (["python3", "attack.py", token, "/etc/passwd"], "names a path outside the bot's directory"),
        (["sh", "-c", "cat ../rival/bot.toml", "x/../../rival"], "names a path outside the bot's directory"),
        (["../../../usr/bin/python3", "attack.py", token], "climbs out of the bot's directory"),
        (["/usr/bin/python3", "attack.py", token], "is an absolute path"),
        (["psql", "-h", "postgresql"], "is not an interpreter the sandbox provides"),
    ]


def test_the_attack_works_unconfined(tmp_path: Path, token: str) -> None:
    """The control: with PostgreSQL's socket reachable, the marker appears (then is removed)."""
    done = subprocess.run(
        [sys.executable, str(ATTACK), token, pid_file()], capture_output=True, text=True, timeout=60
    )
    assert json.loads(done.stdout)[f"{PG_DIR}/.s.PGSQL.5432"] == "ran", done
    assert marker(token) == (True, True)


def test_each_hostile_command_is_refused_at_submission_in_one_line(tmp_path: Path, token: str) -> None:
    rival = tmp_path / "bots" / "rival"
    rival.mkdir(parents=True)
    (rival / "bot.toml").write_text('command = ["node", "secret.js"]\n')
    for number, (command, said) in enumerate(hostile_commands(token, "rival")):
        directory = attacker(tmp_path / "bots", command, f"attacker{number}")
        with pytest.raises(SubmissionError, match=said):  # bot submit and a league's entrants pack it
            pack(directory)
        with pytest.raises(CommandError, match=said):  # bot check, bot play and the league's spawn parse it
            parse(str(directory))
    linked = attacker(tmp_path / "bots", ["bin/psql"], "linked")
    (linked / "bin").mkdir()
    (linked / "bin" / "psql").symlink_to("/usr/bin/psql")
    with pytest.raises(CommandError, match="resolves outside the bot's directory"):
        parse(str(linked))
    assert marker(token) == (False, False)


def test_the_command_line_refuses_it_with_exit_status_2(tmp_path: Path, token: str) -> None:
    directory = attacker(tmp_path, ["python3", "attack.py", token, pid_file()])
    for args in (
        ("bot", "check", str(directory)),
        ("bot", "submit", str(directory), "--name", "attacker"),
        ("league", "create", "x", "--bots", f"{directory},random", "--table", "2"),
    ):
        done = sixnimmt(tmp_path, *args)
        errors = [line for line in done.stderr.splitlines() if line.startswith("sixnimmt: error")]
        assert done.returncode == 2 and len(errors) == 1, (args, done.stderr)
        assert "names a path outside the bot's directory" in errors[0] and "Traceback" not in done.stderr
    assert marker(token) == (False, False)


def test_the_sandbox_refuses_them_again_and_binds_nothing(tmp_path: Path, token: str) -> None:
    """Past the checks (a stored bot.toml is untrusted), the sandbox itself starts none of them."""
    root = tmp_path / "block"
    directory = attacker(root, ["python3", "attack.py"])
    with Sandbox(Limits(), tmp_path, bots_in=[root]) as sandbox:
        for command, said in hostile_commands(token, "rival"):
            with pytest.raises(CommandError, match=said):
                sandbox(command, {}, cwd=directory)
        assert not sandbox._running
    assert marker(token) == (False, False)


def test_an_allowed_command_that_attacks_anyway_reaches_nothing(tmp_path: Path, token: str) -> None:
    root = tmp_path / "block"
    directory = attacker(root, ["python3", "attack.py", token])
    (root / "rival").mkdir()
    (root / "rival" / "bot.toml").write_text('command = ["node", "secret.js"]\n')
    with local_referee() as client, Sandbox(Limits(), tmp_path, bots_in=[root]) as sandbox:
        sandbox.stdout = subprocess.PIPE
        process = spawn_bot(str(directory), referee=client.address, token="t", variant="classic",
                            name="attacker", launch=sandbox)  # fmt: skip
        assert process.wait(120) == 0, process.stderr_tail()
        said = json.loads(process.process.stdout.read())  # type: ignore[union-attr]
    assert set(said.values()) <= {"FileNotFoundError", "ConnectionRefusedError", "status 2"}, said
    assert (
        said["127.0.0.1:5432"] == "ConnectionRefusedError"
        and said[f"{PG_DIR}/.s.PGSQL.5432"] == "FileNotFoundError"
    )
    assert marker(token) == (False, False)


def forced_artifact(command: list[str]) -> tuple[bytes, str]:
    """An archive as ``pack`` makes one, holding a ``bot.toml`` that ``pack`` would refuse."""
    files = {"bot.toml": f"command = {json.dumps(command)}\n".encode(), "attack.py": ATTACK.read_bytes()}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(files[name]), 0o644, 0
            tar.addfile(info, io.BytesIO(files[name]))
    content = buffer.getvalue()
    return content, hashlib.sha256(content).hexdigest()


@pytest.mark.slow
def test_forced_into_the_store_it_fails_its_block_with_the_reason(
    tmp_path: Path, token: str, pg_url: str, pg_engine: Any
) -> None:
    content, sha256 = forced_artifact(["python3", "attack.py", token, pid_file()])
    repo.add_bot_version(pg_engine, "attacker", content, sha256, "bot.toml", "classic")
    env = {"SIXNIMMT_DATABASE_URL": pg_url}
    options = ("-o", "hands=1", "-o", "target=None")
    created = sixnimmt(tmp_path, "league", "create", "forced", "--bots", "attacker,random", "--table", "2",
                       "--deals", "1", *options, env=env)  # fmt: skip
    assert created.returncode == 0, created.stderr
    ran = sixnimmt(tmp_path, "league", "run", "forced", "--local", "--processes", "1", env=env)
    assert ran.returncode != 0
    with pg_engine.connect() as conn:
        (row,) = conn.execute(select(blocks.c.status, blocks.c.error)).all()
    assert row.status == "failed"
    assert "CommandError" in row.error and "names a path outside the bot's directory" in row.error, row.error
    assert marker(token) == (False, False)


def test_a_python_bot_file_outside_the_bots_roots_is_refused(tmp_path: Path) -> None:
    """A stored entry point is untrusted too: ``../../x.py`` must not bind a host directory."""
    root = tmp_path / "block"
    (root / "bot0").mkdir(parents=True)
    outside = Path(__file__).resolve().parents[2] / "workers" / "league.py"  # a host .py file
    argv = [sys.executable, "-m", "bot_sdk.run", f"{root}/bot0/{os.path.relpath(outside, root / 'bot0')}"]
    with Sandbox(Limits(), tmp_path, bots_in=[root]) as sandbox:
        with pytest.raises(CommandError, match="outside the directories the sandbox runs bots from"):
            sandbox(argv, {})
        assert not sandbox._running
