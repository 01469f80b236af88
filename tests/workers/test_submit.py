"""Bot submission and a whole league through the CLI, on the embedded defaults, bots sandboxed."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from testkit import default_store, sixnimmt

from workers.bots.artifacts import SubmissionError, pack, unpack
from workers.bots.submit import submit
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import artifacts, bot_versions, bots

GOOD = """
from bot_sdk import ClassicBot

class Low(ClassicBot):
    def choose_card(self, view):
        return view.hand[0]
"""
CRASHES = GOOD.replace("return view.hand[0]", "raise SystemExit(3)")
ILLEGAL = GOOD.replace("return view.hand[0]", "return 1000")


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    store = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(store)
    return store


def nothing_stored(engine: Engine) -> bool:
    with engine.connect() as conn:
        return all(
            conn.execute(select(func.count()).select_from(t)).scalar_one() == 0
            for t in (bots, bot_versions, artifacts)
        )


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


def test_a_good_bot_is_stored_once_per_content(engine: Engine, tmp_path: Path) -> None:
    path = write(tmp_path / "src", "low.py", GOOD)
    first, created, report = submit(engine, path, "low", games=4)
    assert created and report.ok and first.version == 1
    again, created_again, _ = submit(engine, path, "low", games=4)
    assert again == first and not created_again
    path.write_text(GOOD + "\n# a change\n")
    second, created_second, _ = submit(engine, path, "low", games=4)
    assert created_second and second.version == 2
    assert repo.find_version(engine, "low@1").sha256 != second.sha256


def test_a_directory_bot_with_a_declared_entry_point(engine: Engine, tmp_path: Path) -> None:
    root = tmp_path / "dirbot"
    write(root, "strategy.py", "def pick(hand):\n    return hand[-1]\n")
    write(
        root,
        "main.py",
        "from bot_sdk import ClassicBot\nimport os, sys\n"
        "sys.path.insert(0, os.path.dirname(__file__))\nfrom strategy import pick\n\n"
        "class High(ClassicBot):\n    def choose_card(self, view):\n        return pick(view.hand)\n",
    )
    write(root, "sixnimmt.json", json.dumps({"entry": "main.py:High"}))
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "junk.pyc").write_bytes(b"x")
    version, created, report = submit(engine, root, "high", games=4)
    assert created and report.ok and version.entry_point == "main.py:High"
    unpacked = tmp_path / "unpacked"
    unpack(repo.artifact(engine, version.sha256), unpacked)
    assert sorted(p.name for p in unpacked.iterdir()) == ["main.py", "sixnimmt.json", "strategy.py"]


def test_packing_is_deterministic(tmp_path: Path) -> None:
    path = write(tmp_path, "low.py", GOOD)
    first = pack(path, max_bytes=1 << 20)
    os.utime(path, (1, 1))
    assert pack(path, max_bytes=1 << 20).sha256 == first.sha256


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: write(d, "big.py", GOOD + "#" * 3_000_000), "the limit is"),
        (lambda d: write(d, "notes.txt", "hello"), "is not a .py file"),
        (lambda d: (write(d / "pkg", "main.py", GOOD), d / "pkg")[1], "declares no entry point"),
        (
            lambda d: (
                write(d / "pkg", "main.py", GOOD),
                write(d / "pkg", "sixnimmt.json", '{"entry": "gone.py"}'),
                d / "pkg",
            )[2],
            "gone.py is not among the submitted files",
        ),
        (
            lambda d: (
                write(d / "pkg", "main.py", GOOD),
                (d / "pkg" / "link.py").symlink_to("/etc/passwd"),
                write(d / "pkg", "sixnimmt.json", '{"entry": "main.py"}'),
                d / "pkg",
            )[3],
            "symbolic link",
        ),
        (lambda d: d / "missing.py", "nothing at"),
        (lambda d: write(d, "crash.py", CRASHES), "failed its check"),
        (lambda d: write(d, "illegal.py", ILLEGAL), "failed its check"),
        (lambda d: write(d, "syntax.py", "def broken(:\n"), "failed its check"),
    ],
    ids=[
        "too big",
        "not python",
        "no entry point",
        "entry missing",
        "symlink",
        "missing",
        "crashes",
        "illegal",
        "syntax error",
    ],
)
def test_bad_submissions_are_refused_and_leave_nothing(
    engine: Engine, tmp_path: Path, setup: object, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIXNIMMT_BOT_MAX_BYTES", str(2_000_000))
    path = setup(tmp_path)  # type: ignore[operator]
    with pytest.raises(SubmissionError, match=message):
        submit(engine, path, "bad", games=4)
    assert nothing_stored(engine)


def test_bad_bot_names_are_refused(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(SubmissionError, match="bad bot name"):
        submit(engine, write(tmp_path, "low.py", GOOD), "no spaces please", games=4)
    assert nothing_stored(engine)


def test_a_league_on_the_embedded_defaults(tmp_path: Path) -> None:
    """create → run (local pool, the default SQLite store) → status → standings, all --json."""
    write(tmp_path, "low.py", GOOD)
    created = sixnimmt(
        tmp_path,
        "league",
        "create",
        "cup",
        "--bots",
        "low.py,random,heuristic",
        "--table",
        "2",
        "--deals",
        "2",
        "-o",
        "hands=1",
        "-o",
        "target=None",
        "--json",
    )
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["blocks"] == 3 * 2
    assert default_store(tmp_path).exists() and not (tmp_path / "sixnimmt.db").exists()
    ran = sixnimmt(tmp_path, "league", "run", "cup", "--processes", "2", "--json")
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["status"]["blocks"] == {"done": 6}
    assert result["status"]["matches"] == 12
    names = {row["bot"] for row in result["standings"]}
    assert names == {"low@1", "classic/random@1", "classic/heuristic@1"}
    assert all(row["games"] == 8 and row["faults"] == 0 for row in result["standings"])
    again = sixnimmt(tmp_path, "league", "run", "cup", "--json")  # nothing left: nothing replayed
    assert json.loads(again.stdout)["status"]["matches"] == 12
    standings = sixnimmt(tmp_path, "league", "standings", "cup", "--h2h", "--json")
    table = json.loads(standings.stdout)
    assert table["standings"] == result["standings"]  # recomputed identically
    assert len(table["head_to_head"]["table"]) == 3
    status = sixnimmt(tmp_path, "league", "status", "cup")
    assert "done 6" in status.stdout
    missing = sixnimmt(tmp_path, "league", "status", "nope")
    assert missing.returncode == 2 and "no league 'nope'" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_a_refused_submission_names_its_bug_once_with_an_example(engine: Engine, tmp_path: Path) -> None:
    # A card it does not hold, a different one each time: one cause, told with a concrete card.
    path = write(tmp_path, "illegal.py", GOOD.replace("return view.hand[0]", "return view.hand[0] + 200"))
    with pytest.raises(SubmissionError) as refused:
        submit(engine, path, "illegal", games=2)
    message = str(refused.value)
    assert "plays only legal actions; time control: 2000 ms a decision + 10000 ms bank" in message
    assert re.search(r"illegal ×20, for example: 2\d\d is not a legal card decision \(options: ", message)
    assert "(other reasons)" not in message and "more cause" not in message
    assert nothing_stored(engine)
