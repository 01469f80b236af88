"""The dashboard's pages and JSON API on a store filled by a real league (SQLite and PostgreSQL)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import pytest
from dashkit import LeagueStore, apart_text, expected_cells
from starlette.testclient import TestClient

from dashboard.app import create_app
from workers.store.engine import make_engine


@pytest.fixture
def client(league_store: LeagueStore) -> Iterator[TestClient]:
    with TestClient(create_app(league_store.engine)) as test_client:
        yield test_client


def api(client: TestClient, path: str) -> dict:
    response = client.get(path)
    assert response.status_code == 200, (path, response.text)
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def page(client: TestClient, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, (path, response.text[:500])
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def test_the_leagues_list(client: TestClient, league_store: LeagueStore) -> None:
    [listed] = api(client, "/api/leagues")["leagues"]
    assert listed["id"] == league_store.league.id
    assert listed["name"] == league_store.league.name
    assert listed["blocks"] == {"pending": 0, "running": 0, "done": 4, "failed": 0, "total": 4}
    assert listed["matches"] == 12
    assert f'href="/leagues/{listed["id"]}"' in page(client, "/")


def test_the_league_table_is_the_league_standings(client: TestClient, league_store: LeagueStore) -> None:
    shown = api(client, f"/api/leagues/{league_store.league.id}")
    rows = shown["standings"]["rows"]
    assert [r["label"] for r in rows] == [r["bot"] for r in league_store.standings]
    for row, expected in zip(rows, league_store.standings, strict=True):
        assert row["position"] == expected["position"]
        assert row["rating"] == pytest.approx(expected["ordinal"])
        for key in ("score", "mu", "sigma", "mean_score", "ci_low", "ci_high"):
            assert row[key] == pytest.approx(expected[key]), key
        for key in ("rank", "rank_low", "rank_high", "score_low", "score_high", "next"):
            assert row[key] == pytest.approx(expected["detail"][key]), key
        assert (row["games"], row["faults"]) == (expected["games"], expected["faults"])
    assert shown["standings"]["rated_games"] == shown["standings"]["stored_games"] == 36
    assert shown["higher_is_better"] is False
    html = page(client, f"/leagues/{league_store.league.id}")
    table = html[html.index('id="standings"') : html.index("</table>", html.index('id="standings"'))]
    cells = re.findall(r'<td class="num (\w+)[^"]*">([^<]*)</td>', table)
    assert cells == [cell for r in league_store.standings for cell in expected_cells(r)]
    told = [
        unescape(re.sub("<[^>]+>", "", cell)) for cell in re.findall(r'<td class="apart">(.*?)</td>', table)
    ]
    assert told == [apart_text(r) for r in league_store.standings]


def test_match_lists_are_paginated(client: TestClient, league_store: LeagueStore) -> None:
    league_id = league_store.league.id
    first = api(client, f"/api/leagues/{league_id}/matches?per_page=5")
    assert first["page"] == {"page": 1, "per_page": 5, "total": 12, "pages": 3}
    seen = [
        m["id"]
        for p in (1, 2, 3)
        for m in api(client, f"/api/leagues/{league_id}/matches?per_page=5&page={p}")["matches"]
    ]
    assert len(seen) == len(set(seen)) == 12
    # Latest block first, its rotations in order; every match with all its seats and names.
    blocks = [m["block"] for m in first["matches"]]
    assert blocks == sorted(blocks, reverse=True)
    assert all(len(m["seats"]) == 3 and all(s["label"] for s in m["seats"]) for m in first["matches"])
    html = page(client, f"/leagues/{league_id}/matches?per_page=5&page=2")
    assert "page 2 of 3" in html and 'rel="next"' in html and 'rel="prev"' in html
    assert client.get(f"/leagues/{league_id}/matches?per_page=5&page=4").status_code == 404


def test_the_bot_page(client: TestClient, league_store: LeagueStore) -> None:
    league = league_store.league
    heuristic = next(v for v in league.entrants if v.bot == "heuristic")
    bots = api(client, "/api/bots")["bots"]
    bot_id = next(b["id"] for b in bots if b["name"] == "heuristic")
    shown = api(client, f"/api/bots/{bot_id}")
    assert shown["complete"] is True
    assert [v["version"] for v in shown["bot"]["versions"]] == [1]
    [entry] = shown["leagues"]
    expected = next(r for r in league_store.standings if r["bot"] == "heuristic@1")
    assert entry["rating"] == pytest.approx(expected["ordinal"])
    assert entry["score"] == pytest.approx(expected["score"])
    assert (entry["rank"], entry["rank_low"], entry["rank_high"]) == tuple(
        expected["detail"][k] for k in ("rank", "rank_low", "rank_high")
    )
    # The rating path is the league's own computation, step by step: it ends at the stored rating.
    [path] = shown["rating_history"]
    assert len(path["points"]) == expected["games"] + 1
    assert path["points"][0] == [0, pytest.approx(0.0)]
    assert path["points"][-1] == [expected["games"], pytest.approx(expected["ordinal"])]
    # Results by opponent agree with the league's head-to-head table.
    position = heuristic_position = next(i for i, v in enumerate(league.entrants) if v.id == heuristic.id)
    by_label = {o["label"]: o for o in shown["opponents"]}
    for other, version in enumerate(league.entrants):
        if other == position:
            continue
        cell = league_store.head_to_head[heuristic_position][other]
        label = f"{league_store.names.get(version.bot, version.bot)}@{version.version}"
        row = by_label[label]
        assert (row["games"], row["ahead"], row["level"], row["behind"]) == (
            cell["games"],
            cell["ahead"],
            cell["level"],
            cell["behind"],
        )
    html = page(client, f"/bots/{bot_id}")
    assert '<svg id="rating-plot"' in html and "<polyline" in html
    matches = api(client, f"/api/bots/{bot_id}/matches")
    assert matches["page"]["total"] == expected["games"]
    assert all(any(s["bot"] == "heuristic" for s in m["seats"]) for m in matches["matches"])
    assert "heuristic" in page(client, f"/bots/{bot_id}/matches?version=1")


def test_the_replay_steps_through_the_whole_match(client: TestClient, league_store: LeagueStore) -> None:
    match_id = api(client, f"/api/leagues/{league_store.league.id}/matches?per_page=1")["matches"][0]["id"]
    shown = api(client, f"/api/matches/{match_id}/replay")
    frames = shown["frames"]
    assert [f["step"] for f in frames] == list(range(shown["match"]["steps"] + 1))
    final = frames[-1]
    assert final["outcome"]["scores"] == [s["score"] for s in shown["match"]["seats"]]
    assert final["outcome"]["ranks"] == [s["rank"] for s in shown["match"]["seats"]]
    # The omniscient frame after the first deal holds every hand; the deal is the step's action.
    dealt = frames[1]
    assert dealt["actions"][0]["seat"] == -1 and len(dealt["seats"]) == 3
    assert all(len(view["hand"]) == 10 for view in dealt["seats"])
    assert any("cards revealed" in line for f in frames for line in f["lines"])
    assert any("bull heads" in line for f in frames for line in f["lines"])  # a penalty
    one = api(client, f"/api/matches/{match_id}/replay?step=5")["frame"]
    assert one == frames[5]
    html = page(client, f"/matches/{match_id}?step=5")
    assert 'id="step">5<' in html
    assert f'href="/matches/{match_id}?step=4"' in html and f'href="/matches/{match_id}?step=6"' in html
    transcript = client.get(f"/api/matches/{match_id}/transcript").json()
    assert len(transcript["steps"]) == shown["match"]["steps"]


def test_the_live_view(client: TestClient, league_store: LeagueStore) -> None:
    shown = api(client, "/api/live")
    assert shown["running"] == [] and shown["leagues"] == []  # nothing is being played
    assert len(shown["finished"]) == 4
    assert all(len(b["matches"]) == 3 for b in shown["finished"])
    for path in ("/live", f"/live?league={league_store.league.id}", "/live/fragment"):
        html = page(client, path)
        assert "Just finished" in html
    assert 'data-src="/live/fragment"' in page(client, "/live")


def test_health_metrics_and_headers(client: TestClient, league_store: LeagueStore) -> None:
    assert api(client, "/healthz") == {"status": "ok"}
    client.get(f"/leagues/{league_store.league.id}")
    client.get("/leagues/999999")
    client.get("/no/such/page")
    response = client.get("/metrics")
    assert response.status_code == 200
    text = response.text
    assert (
        'sixnimmt_dashboard_requests_total{method="GET",route="/leagues/{league_id:int}",status="200"}'
        in text
    )
    assert 'route="/leagues/{league_id:int}",status="404"' in text
    assert 'route="unmatched",status="404"' in text
    assert "sixnimmt_dashboard_request_duration_seconds_bucket" in text
    assert not re.search(r'route="[^"]*/\d', text), "an id leaked into a route label"
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"


def test_health_reports_an_unreachable_store() -> None:
    engine = make_engine(
        "postgresql://nobody@127.0.0.1:9/none", read_only=True, connect_args={"connect_timeout": 2}
    )
    with TestClient(create_app(engine)) as client:
        response = client.get("/healthz")
    assert response.status_code == 503 and response.json()["status"] == "unavailable"
    engine.dispose()
