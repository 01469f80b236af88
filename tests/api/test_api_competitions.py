"""Competitions through the API: the public list and page, entering, ``bot submit --competition``
under the competition's own daily quota, its active versions per account, and the freeze at its
close (a refused upload stores nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from apikit import GOOD_BOT, OUTSIDE_TREE, counts, site, wait_valid
from sqlalchemy import select

from bot_sdk.client import ApiError, pack_archive
from workers import competition
from workers.store import repo
from workers.store.schema import submissions

SIXNIMMT = [sys.executable, "-m", "bot_sdk.cli"]


def _cli(*args: str, key: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env["SIXNIMMT_API_KEY"] = key
    return subprocess.run(
        [*SIXNIMMT, *args], capture_output=True, text=True, env=env, cwd=OUTSIDE_TREE, timeout=300
    )


def _public(url: str) -> tuple[int, Any]:
    """A GET without a key."""
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _refused(call: Any) -> tuple[int, str]:
    with pytest.raises(ApiError) as caught:
        call()
    assert caught.value.status is not None
    return caught.value.status, str(caught.value)


def test_entering_submitting_for_and_the_freeze_of_a_competition(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        competition.create(
            api.engine, "cup", config={"hands": 1, "target": None}, table_size=2, submissions_per_day=2,
            active_per_account=1, final_top=2, final_until_confident=0.9, final_max_deals=10,
        )  # fmt: skip
        status, listed = _public(f"{api.url}/v1/competitions")
        assert status == 200 and [c["name"] for c in listed] == ["cup"] and listed[0]["entries"] == 0
        alice, bob = api.client("alice"), api.client("bob")
        # bob enters through the API; alice by submitting for it.
        assert bob.post("/v1/competitions/cup/entries")["entered"]
        done = _cli(
            "bot", "submit", str(GOOD_BOT), "--server", api.url, "--name", "one", "--competition", "cup",
            "--json", key=api.keys["alice"],
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["status"] == "valid"
        second = alice.post(
            "/v1/submissions", query={"name": "two", "competition": "cup"}, body=pack_archive(GOOD_BOT)
        )
        assert second["competition"] == "cup"
        wait_valid(alice, second["id"])
        with api.engine.connect() as conn:
            assert conn.execute(select(submissions.c.competition_id)).scalars().all() == [1, 1]
        assert sorted(e["account"] for e in repo.competition_entries(api.engine, "cup")) == ["alice", "bob"]
        # The competition's quota (2 a day) before the platform's (5).
        before = counts(api.engine)
        third = _cli(
            "bot", "submit", str(GOOD_BOT), "--server", api.url, "--name", "three", "--competition", "cup",
            key=api.keys["alice"],
        )  # fmt: skip
        assert third.returncode == 2
        assert third.stderr == (
            "sixnimmt: error: 429 Too Many Requests: competition 'cup': daily submission quota of 2 used;"
            " next at 00:00 UTC\n"
        )
        assert counts(api.engine) == before
        code, message = _refused(
            lambda: bob.post(
                "/v1/submissions",
                query={"name": "b", "variant": "board", "competition": "cup"},
                body=pack_archive(GOOD_BOT),
            )
        )
        assert code == 409 and "plays classic, not board" in message
        assert _refused(lambda: bob.post("/v1/competitions/nope/entries"))[0] == 404
        # One active version per account in this competition.
        assert alice.post("/v1/versions/one@1/activate")["active"]
        code, message = _refused(lambda: alice.post("/v1/versions/two@1/activate"))
        assert code == 409 and "competition 'cup' allows 1 active version" in message
        assert alice.post("/v1/versions/one@1/activate")["active"], "active already: no change"
        # The close: submissions and entries are refused, nothing is stored for them.
        competition.close(api.engine, "cup")
        before = counts(api.engine)
        code, message = _refused(
            lambda: bob.post("/v1/submissions", query={"name": "late", "competition": "cup"}, body=b"x" * 100)
        )
        assert code == 409 and "submissions froze" in message
        assert _refused(lambda: bob.post("/v1/competitions/cup/entries"))[0] == 409
        assert counts(api.engine) == before
        status, page = _public(f"{api.url}/v1/competitions/cup")
        assert status == 200 and page["state"] == "finished" and page["frozen"]
        assert page["season"] is None and page["final"] is None  # one entrant: no season was played
        assert _public(f"{api.url}/v1/competitions/nope")[0] == 404
