"""A participant reads their versions' league faults, stderr tails, transcripts and ranks, and
nobody else's; league standings are public."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apikit import GOOD_BOT, one_league_match, site, wait_valid

from bot_sdk.client import ApiError, pack_archive
from workers.store import repo


def test_league_faults_transcripts_ranks_and_public_standings(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        alice, bob = api.client("alice"), api.client("bob")
        sent = alice.post("/v1/submissions", query={"name": "cautious"}, body=pack_archive(GOOD_BOT))
        wait_valid(alice, sent["id"])
        detail = json.dumps({"reasons": ["timeout: no answer in 2000 ms"], "stderr": "Traceback: boom"})
        league_id = one_league_match(api.engine, "cautious@1", {"seed": 11, "events": []}, detail=detail)
        rows = [
            {
                "position": p,
                "mu": 25.0,
                "sigma": 8.0,
                "ordinal": 1.0,
                "games": 1,
                "mean_score": s,
                "ci_low": None,
                "ci_high": None,
                "faults": f,
                "method": "ls",
                "score": -s,
                "detail": {"rank": r},
            }
            for p, s, f, r in ((0, 70.0, 1, 2), (1, 20.0, 0, 1))
        ]
        repo.store_ratings(api.engine, league_id, rows)

        faults = alice.get("/v1/versions/cautious@1/faults")
        assert [(f["seat"], f["faults"]) for f in faults] == [(0, {"timeouts": 1})]
        assert "Traceback: boom" in faults[0]["detail"]
        match_id = faults[0]["match"]
        assert json.loads(alice.get(f"/v1/matches/{match_id}/transcript"))["seed"] == 11
        assert alice.get("/v1/versions")[0]["rank"] == {"league": "cup", "rank": 2, "of": 2}
        for call in (
            lambda: bob.get(f"/v1/matches/{match_id}/transcript"),
            lambda: bob.get("/v1/versions/cautious@1/faults"),
        ):
            with pytest.raises(ApiError) as caught:
                call()
            assert caught.value.status == 404
        table = bob.get("/v1/leagues/cup/standings")["standings"]
        assert [(r["bot"], r["rank"]) for r in table] == [("classic/random@1", 1), ("cautious@1", 2)]
        assert "boom" not in json.dumps(table)  # public: no log
