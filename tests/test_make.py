"""The README's two commands as the Makefile runs them: ``make run`` plays one named league (again,
not a new one each time) with progress off a terminal, and ``make test`` has its browser or says
the command that installs it (never a silent skip)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="no make on PATH")


def make(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``make -s ARGS`` in the project, never reinstalling the venv (``-o``: its stamp is current)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    return subprocess.run(
        [str(MAKE), "-s", "-C", str(PROJECT), "-o", ".venv/.installed", *args],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def _not_root(tmp_path: Path) -> Path:
    """A directory whose ``id`` says uid 1000, to put first on PATH."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "id").write_text("#!/bin/sh\necho 1000\n")
    (fake / "id").chmod(0o755)
    return fake


# -- make run ----------------------------------------------------------------------------------


def test_make_run_plays_one_named_league_and_plays_it_again(tmp_path: Path) -> None:
    env = {"SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}", "XDG_DATA_HOME": str(tmp_path)}
    small = ["LEAGUE=smoke", "LEAGUE_BOTS=random,lowest,highest,heuristic", "LEAGUE_DEALS=1"]
    first = make("run", *small, env=env)
    assert first.returncode == 0, first.stderr
    assert "league smoke: classic, round-robin, 4 entrants, 1 blocks, 4 matches" in first.stdout
    assert "classic/heuristic@1" in first.stdout
    # Not a terminal: the league's progress as lines on stderr (one block: one line, at 100%).
    assert re.search(r"^sixnimmt: 1/1 blocks \(100%\)", first.stderr, re.M), first.stderr

    again = make("run", *small, env=env)
    assert again.returncode == 0, again.stderr
    assert "league smoke is in the store: playing what is left of it" in again.stderr
    assert "make run LEAGUE=another-name" in again.stderr
    assert "league smoke: 4 matches stored" in again.stdout  # the same league, nothing replayed

    listed = subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", "league", "list", "--json"],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count('"smoke"') == 1 and "demo-" not in listed.stdout


# -- make test's browser -----------------------------------------------------------------------


def test_a_browser_at_hand_is_used_as_it_is() -> None:
    done = make("chromium", "CHROMIUM=/bin/sh")
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


def test_without_a_browser_and_root_make_test_says_the_command(tmp_path: Path) -> None:
    path = f"{_not_root(tmp_path)}:{os.environ['PATH']}"
    done = make("chromium", "CHROMIUM=", env={"PATH": path})
    assert done.returncode != 0
    if shutil.which("apt-get"):
        command = "'sudo apt-get update && sudo apt-get install -y chromium'"
        assert f"run {command}, then make test again" in done.stderr
    else:
        assert "SIXNIMMT_CHROMIUM=/path/to/chromium make test" in done.stderr


def test_without_a_browser_or_apt_get_make_test_says_how_to_name_one(tmp_path: Path) -> None:
    done = make("chromium", "CHROMIUM=", env={"PATH": str(_not_root(tmp_path))})
    assert done.returncode != 0
    assert "install it, then run 'SIXNIMMT_CHROMIUM=/path/to/chromium make test'" in done.stderr


def test_make_test_gets_its_browser_first_and_requires_it() -> None:
    planned = make("-n", "test")
    assert planned.returncode == 0, planned.stderr
    lines = planned.stdout.splitlines()
    pytest_line = next(n for n, line in enumerate(lines) if "-m pytest" in line)
    assert lines[pytest_line].startswith("SIXNIMMT_TEST_BROWSER=required ")
    assert any("apt-get install -y -qq chromium" in line for line in lines[:pytest_line])


@pytest.mark.parametrize("required", [True, False])
def test_browser_tests_fail_when_required_and_skip_with_the_reason_otherwise(required: bool) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env["SIXNIMMT_CHROMIUM"] = "/no/such/chromium"  # when named, the only candidate
    if required:
        env["SIXNIMMT_TEST_BROWSER"] = "required"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-rs",
         "tests/dashboard/test_browser.py"],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "no chromium at $SIXNIMMT_CHROMIUM" in done.stdout, done.stdout
    if required:
        assert done.returncode != 0 and "make test installs it when it can" in done.stdout
    else:
        # Every browser test skipped (however many there are), none run, none failed.
        summary = done.stdout.strip().splitlines()[-1]
        assert done.returncode == 0 and re.fullmatch(r"\d+ skipped in .*", summary), done.stdout


# -- the sandbox both commands need --------------------------------------------------------------


def test_bubblewrap_at_hand_is_used_as_it_is() -> None:
    done = make("bubblewrap", "BWRAP=/bin/sh")
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


def test_without_bubblewrap_and_root_make_says_the_command(tmp_path: Path) -> None:
    done = make("bubblewrap", "BWRAP=", env={"PATH": f"{_not_root(tmp_path)}:{os.environ['PATH']}"})
    assert done.returncode != 0
    assert "'sudo apt-get update && sudo apt-get install -y bubblewrap libseccomp2'" in done.stderr


def test_without_libseccomp_and_root_make_says_the_command(tmp_path: Path) -> None:
    """bwrap at hand but no libseccomp.so.2 (the seccomp filter): the same line."""
    env = {"PATH": f"{_not_root(tmp_path)}:{os.environ['PATH']}"}
    done = make("bubblewrap", "BWRAP=/bin/sh", "SECCOMP_LIB=0", env=env)
    assert done.returncode != 0
    assert "'sudo apt-get update && sudo apt-get install -y bubblewrap libseccomp2'" in done.stderr


def test_make_run_and_make_test_get_bubblewrap_first() -> None:
    for target in ("run", "test"):
        planned = make("-n", target)
        assert planned.returncode == 0, planned.stderr
        lines = planned.stdout.splitlines()
        first_sixnimmt = next(n for n, line in enumerate(lines) if "sixnimmt" in line or "-m pytest" in line)
        assert any("apt-get install -y -qq bubblewrap" in line for line in lines[:first_sixnimmt]), target


def test_bytecode_is_written_only_when_a_source_changed() -> None:
    """``make bytecode`` runs compileall when a source is newer than its stamp, and only then
    (with nothing to compile it cost 0.5 s of every ``make run``)."""
    assert make("bytecode").returncode == 0
    assert "compileall" not in make("-n", "bytecode").stdout
    assert "compileall" in make("-n", "bytecode", "-W", "arena/matches.py").stdout
    assert "compileall" in make("-n", "bytecode", "-W", "tests/test_make.py").stdout
