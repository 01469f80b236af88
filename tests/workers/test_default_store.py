"""Where the league store is: the per-user data directory by default, named by every command that
lists or reports a league, and created only by the commands that store something. Reading
commands on a store that is not there, a SQLite file in a missing directory and an unsupported
backend each get one line and exit status 2, and nothing is created. SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect
from testkit import default_store, free_port, sixnimmt

from referee.settings import default_database_url

READING: list[list[str]] = [
    ["league", "list"],
    ["league", "list", "--json"],
    ["league", "status", "cup"],
    ["league", "status", "cup", "--json"],
    ["league", "standings", "cup"],
    ["league", "run", "cup", "--local"],
    ["league", "start", "cup"],
    ["bot", "list"],
    ["bot", "list", "--json"],
    ["dashboard", "--port", "0"],
]
WRITING: list[list[str]] = [
    ["league", "create", "cup", "--bots", "random,lowest", "--table", "2"],
    ["bot", "submit", "low.py", "--name", "low"],
    ["league", "migrate"],
]
LOW = "from bot_sdk import ClassicBot\n\nclass Low(ClassicBot):\n    def choose_card(self, view):\n" \
      "        return view.hand[0]\n"  # fmt: skip


def one_line_error(done: subprocess.CompletedProcess[str], *texts: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("sixnimmt: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    for text in texts:
        assert text in done.stderr, done.stderr


def argv_here(argv: list[str]) -> list[str]:
    return [str(free_port()) if a == "0" and argv[0] == "dashboard" else a for a in argv]


@pytest.mark.parametrize("argv", READING, ids=" ".join)
def test_reading_commands_on_a_missing_default_store_create_nothing(tmp_path: Path, argv: list[str]) -> None:
    done = sixnimmt(tmp_path, *argv_here(argv))
    one_line_error(
        done, f"no store at {default_store(tmp_path)}", "SIXNIMMT_DATABASE_URL is unset", "league create"
    )
    assert list(tmp_path.iterdir()) == []  # neither the store nor its directory


@pytest.mark.parametrize("argv", READING + WRITING, ids=" ".join)
def test_a_sqlite_file_in_a_missing_directory_is_refused_and_the_directory_not_made(
    tmp_path: Path, argv: list[str]
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "low.py").write_text(LOW)
    url = f"sqlite:///{tmp_path / 'nonexistent' / 'dir' / 'x.db'}"
    done = sixnimmt(tmp_path / "work", *argv_here(argv), env={"SIXNIMMT_DATABASE_URL": url})
    one_line_error(done, f"there is no directory {tmp_path / 'nonexistent' / 'dir'}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["low.py"]


def test_the_default_store_is_the_user_s_whatever_the_working_directory(tmp_path: Path) -> None:
    """Created by league create in the per-user data directory; found from another directory; named
    by league list and league status, text and --json; sixnimmt settings shows it as the default."""
    data = tmp_path / "data"
    env = {"XDG_DATA_HOME": str(data)}
    one, other = tmp_path / "one", tmp_path / "other"
    one.mkdir(), other.mkdir()
    store = data / "sixnimmt" / "sixnimmt.db"
    url = f"sqlite:///{store}"
    made = sixnimmt(
        one,
        "league",
        "create",
        "cup",
        "--bots",
        "random,lowest",
        "--table",
        "2",
        "--deals",
        "1",
        "--json",
        env=env,
    )
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["store"] == url
    assert store.is_file() and list(one.iterdir()) == []
    assert (data / "sixnimmt").stat().st_mode & 0o077 == 0 and store.stat().st_mode & 0o077 == 0

    listed = sixnimmt(other, "league", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    info = json.loads(listed.stdout)
    assert info["store"] == url and [row["name"] for row in info["leagues"]] == ["cup"]
    text = sixnimmt(other, "league", "list", env=env).stdout
    assert text.splitlines()[0] == f"store {url}: 1 league", text
    status = sixnimmt(other, "league", "status", "cup", "--json", env=env)
    assert json.loads(status.stdout)["store"] == url
    assert f"store {url}" in sixnimmt(other, "league", "status", "cup", env=env).stdout.splitlines()

    settings = json.loads(sixnimmt(other, "settings", "--json", env=env).stdout)
    [row] = [row for row in settings if row["variable"] == "SIXNIMMT_DATABASE_URL"]
    assert row["default"] == url and row["value"] == ""
    assert list(other.iterdir()) == []


def test_bot_submit_creates_the_default_store_only_for_a_bot_that_passes(tmp_path: Path) -> None:
    (tmp_path / "low.py").write_text(LOW)
    (tmp_path / "bad.py").write_text(LOW.replace("return view.hand[0]", "return 1000"))
    one_line_error(sixnimmt(tmp_path, "bot", "submit", "bad.py", "--name", "bad"), "failed its check")
    assert not (tmp_path / "xdg-data").exists()
    done = sixnimmt(tmp_path, "bot", "submit", "low.py", "--name", "low")
    assert done.returncode == 0, done.stderr
    assert default_store(tmp_path).is_file()


def test_the_default_honours_xdg_data_home_and_else_asks_platformdirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_database_url({"XDG_DATA_HOME": "/srv/data"}) == "sqlite:////srv/data/sixnimmt/sixnimmt.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    import platformdirs

    expected = Path(platformdirs.user_data_dir("sixnimmt", appauthor=False)) / "sixnimmt.db"
    assert str(expected).startswith(str(tmp_path))
    for environ in ({}, {"XDG_DATA_HOME": "relative/dir"}):  # a relative one is ignored, as the spec says
        assert default_database_url(environ) == f"sqlite:///{expected}"
    assert not (tmp_path / ".local").exists()  # naming the default creates nothing


def test_the_test_suite_keeps_off_the_user_s_own_store() -> None:
    """tests/conftest.py: this session's default store is in a temporary directory of its own."""
    home = Path(os.environ["XDG_DATA_HOME"])
    assert home.is_relative_to(tempfile.gettempdir()) and home.name.startswith("sixnimmt-test-data-")
    assert default_database_url() == f"sqlite:///{home / 'sixnimmt' / 'sixnimmt.db'}"


@pytest.mark.parametrize(
    "url",
    [
        "mysql://user@127.0.0.1/sixnimmt",
        "mysql+pymysql://user@127.0.0.1/x",
        "oracle://u@h/x",
        "sqlite+aiosqlite:///x.db",
    ],
)
@pytest.mark.parametrize(
    "argv",
    [["league", "list"], WRITING[0], ["bot", "list", "--json"], ["dashboard", "--port", "0"]],
    ids=" ".join,
)
def test_an_unsupported_database_is_one_line_naming_the_supported_ones(
    tmp_path: Path, url: str, argv: list[str]
) -> None:
    done = sixnimmt(tmp_path, *argv_here(argv), env={"SIXNIMMT_DATABASE_URL": url})
    one_line_error(
        done, "SIXNIMMT_DATABASE_URL names a", "the store is sqlite:///PATH or postgresql://USER@HOST/DB"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_empty_postgresql_database_is_no_store_until_a_command_stores(
    tmp_path: Path, postgres_databases: object
) -> None:
    """A PostgreSQL database without the schema: reading commands say so and leave it empty;
    league create makes the schema and stores the league."""
    url = postgres_databases.new()  # type: ignore[attr-defined]
    env = {"SIXNIMMT_DATABASE_URL": url}
    name = url.rsplit("/", 1)[1]
    for argv in (["league", "list"], ["league", "status", "cup"], ["bot", "list"]):
        one_line_error(
            sixnimmt(tmp_path, *argv, env=env),
            f"no store in postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
        )
    engine = create_engine(url)
    try:
        assert inspect(engine).get_table_names() == []
        made = sixnimmt(tmp_path, *WRITING[0], "--json", env=env)
        assert made.returncode == 0, made.stderr
        assert json.loads(made.stdout)["store"] == f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
        assert "alembic_version" in inspect(engine).get_table_names()
    finally:
        engine.dispose()
    listed = json.loads(sixnimmt(tmp_path, "league", "list", "--json", env=env).stdout)
    assert [row["name"] for row in listed["leagues"]] == ["cup"]
