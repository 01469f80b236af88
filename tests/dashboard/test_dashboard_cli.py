"""``sixnimmt dashboard`` on a store it cannot use or a port it cannot listen on: one line on stderr
and exit status 2, as every command says (no driver message over several lines, no SQLAlchemy
link, no traceback, no page of server log)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dashkit import PG
from testkit import free_port, sixnimmt


def _one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, f"one line expected, got {len(lines)}:\n{stderr}"
    assert lines[0].startswith("sixnimmt: error: cannot use the store "), stderr
    assert "sqlalche.me" not in stderr and "Background on this error" not in stderr
    return lines[0]


def test_an_unreachable_postgresql_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"postgresql://nobody:secret@127.0.0.1:{free_port()}/sixnimmt"  # nobody listens there
    done = sixnimmt(tmp_path, "dashboard", "--port", str(free_port()), env={"SIXNIMMT_DATABASE_URL": url})
    assert done.returncode == 2, done.stderr
    line = _one_error_line(done.stderr)
    assert "refused" in line  # the driver's reason, joined into the line
    assert "secret" not in line  # the URL is shown without its password
    assert done.stdout == ""


def test_a_server_that_refuses_the_role_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import socket

    try:
        socket.create_connection((PG["host"], PG["port"]), timeout=2).close()
    except OSError as exc:
        pytest.skip(f"PostgreSQL at {PG['host']}:{PG['port']} cannot be reached: {exc}")
    url = f"postgresql://no_such_role_19@{PG['host']}:{PG['port']}/test"
    done = sixnimmt(tmp_path, "dashboard", "--port", str(free_port()), env={"SIXNIMMT_DATABASE_URL": url})
    assert done.returncode == 2, done.stderr
    assert "no_such_role_19" in _one_error_line(done.stderr)


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import socket

    from workers.store.engine import make_engine
    from workers.store.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = sixnimmt(tmp_path, "dashboard", "--port", str(port), env={"SIXNIMMT_DATABASE_URL": url})
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"sixnimmt: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
