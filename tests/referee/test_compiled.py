"""The referee's compiled hot path (referee.accel): the same matches as the pure-Python reference,
and never a build that does not match the sources.

`make test` also runs every test of tests/referee, tests/golden and the wire's tests on the build
(``SIXNIMMT_COMPILED=require``); here the two paths play side by side, each in a referee process
of its own. Without a build (``make compiled``) the side-by-side test skips, unless
``SIXNIMMT_TEST_COMPILED=required`` (as `make test` sets it): then it fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import compiled_build

from arena.matches import MatchPlan, local_referee, play_matches
from referee import accel

HANDS = {"players": 4, "hands": 2, "target": None}


def _enable(mode: str, directory: Path) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter that enables the build in ``directory`` with ``mode``, then imports
    the driver and prints where it came from."""
    code = (
        "import sys; from pathlib import Path; from referee import accel\n"
        f"used = accel.enable({mode!r}, Path({str(directory)!r}))\n"
        "import referee.driver.match as m\n"
        "print(used, accel.active(), m.__file__)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_COMPILED")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)


def _canonical(transcript: dict[str, object]) -> str:
    """The transcript without its match id, which each referee makes up."""
    meta = dict(transcript.get("meta") or {})  # type: ignore[call-overload]
    meta.pop("match_id", None)
    return json.dumps({**transcript, "meta": meta}, sort_keys=True)


@pytest.mark.parametrize(
    ("variant", "config"),
    [("classic", HANDS), ("anniversary", {"players": 3, "rounds": 2})],
)
def test_a_compiled_referee_plays_every_match_as_the_pure_one(variant: str, config: dict[str, int]) -> None:
    compiled_build()
    bots = {"low": "lowest", "high": "highest", "smart": "heuristic", "quick": "lowest"}
    entrants = tuple(bots)[: config["players"]]
    plans = [MatchPlan(tuple(entrants[(seed + i) % len(entrants)] for i in range(len(entrants))), seed)
             for seed in range(12)]  # fmt: skip
    results = {}
    for mode in ("off", "require"):
        with local_referee(env={"SIXNIMMT_COMPILED": mode}) as client:
            run = play_matches(bots, plans, variant=variant, config=config, client=client)
        results[mode] = run.matches
    pure, compiled = results["off"], results["require"]
    assert [m.status for m in compiled] == ["finished"] * len(plans)
    for a, b in zip(pure, compiled, strict=True):
        assert b.digest == a.digest
        assert _canonical(b.transcript) == _canonical(a.transcript)
        assert [(s.score, s.rank, s.faults, s.decisions) for s in b.seats] == [
            (s.score, s.rank, s.faults, s.decisions) for s in a.seats
        ]


def test_the_referee_says_which_path_it_runs() -> None:
    directory = compiled_build()
    done = _enable("require", directory)
    assert done.returncode == 0, done.stderr
    used, active, file = done.stdout.split()
    assert (used, active) == ("True", "True") and file.startswith(str(directory))
    done = _enable("off", directory)
    assert done.stdout.split()[:2] == ["False", "False"] and done.stdout.split()[2].endswith("match.py")


def test_a_build_older_than_the_sources_is_never_run(tmp_path: Path) -> None:
    """A build whose sources' digest differs (an edited module) leaves the process on the
    sources under ``auto``, and stops it with what to do under ``require``; so does no build."""
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / accel.MANIFEST).write_text(json.dumps({"digest": "0" * 64, "modules": {}}))
    for directory, why in ((stale, "older than the sources"), (tmp_path / "none", "no build")):
        auto = _enable("auto", directory)
        assert auto.returncode == 0, auto.stderr
        used, active, file = auto.stdout.split()
        assert (used, active) == ("False", "False") and file.endswith("referee/driver/match.py")
        required = _enable("require", directory)
        assert required.returncode != 0
        assert "CompiledError: SIXNIMMT_COMPILED=require, but" in required.stderr
        assert why in required.stderr and "make compiled" in required.stderr


def test_the_digest_follows_every_source(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    for package in accel.SOURCE_PACKAGES:
        (root / package).mkdir(parents=True)
        (root / package / "a.py").write_text("x = 1\n")
    first = accel.source_digest(root)
    assert accel.source_digest(root) == first
    (root / "games" / "a.py").write_text("x = 2\n")
    second = accel.source_digest(root)
    assert second != first
    (root / "sixnimmt" / "b.pyi").write_text("")
    assert accel.source_digest(root) not in (first, second)


def test_a_bad_mode_is_a_clear_error() -> None:
    env = {**os.environ, "SIXNIMMT_COMPILED": "yes"}
    done = subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", "referee", "serve", "--listen", "unix:/nonexistent/x"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    assert "SIXNIMMT_COMPILED must be auto, off or require, got 'yes'" in done.stderr
