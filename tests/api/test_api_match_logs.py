"""``sixnimmt bot logs match:ID --server …``: the participant reads a league match of their own
version (seats, scores, faults; ``--json``: the whole transcript); another account's key cannot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from apikit import GOOD_BOT, OUTSIDE_TREE, one_league_match, site, wait_valid
from sqlalchemy import select

from bot_sdk.client import pack_archive
from workers.store.schema import matches


def _logs(url: str, key: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", "bot", "logs", *args, "--server", url, "--key", key],
        capture_output=True,
        text=True,
        env=env,
        cwd=OUTSIDE_TREE,
        timeout=300,
    )


def test_bot_logs_of_a_match_of_ones_own_version(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        alice = api.client("alice")
        sent = alice.post("/v1/submissions", query={"name": "cautious"}, body=pack_archive(GOOD_BOT))
        wait_valid(alice, sent["id"])
        transcript = {
            "seed": 11,
            "variant": "classic",
            "meta": {"seats": ["cautious@1", "classic/random@1"], "faults": [{"timeout": 1}, {}]},
            "outcome": {"scores": [70, 20], "ranks": [2, 1]},
            "steps": [],
        }
        one_league_match(api.engine, "cautious@1", transcript)
        with api.engine.connect() as conn:
            match_id = conn.execute(select(matches.c.id)).scalar_one()

        shown = _logs(api.url, api.keys["alice"], f"match:{match_id}")
        assert shown.returncode == 0, shown.stderr
        assert f"match {match_id}: classic, 2 seats" in shown.stdout
        assert "seat 0 cautious@1: score 70, rank 2, timeout ×1" in shown.stdout
        assert "seat 1 classic/random@1: score 20, rank 1, no faults" in shown.stdout
        whole = _logs(api.url, api.keys["alice"], f"match:{match_id}", "--json")
        assert whole.returncode == 0 and json.loads(whole.stdout)["seed"] == 11

        refused = _logs(api.url, api.keys["bob"], f"match:{match_id}")
        assert refused.returncode == 2 and refused.stdout == ""
        assert len(refused.stderr.strip().splitlines()) == 1 and "404" in refused.stderr
        wrong = _logs(api.url, api.keys["alice"], "match:abc")
        assert wrong.returncode == 2 and "a match's number" in wrong.stderr
