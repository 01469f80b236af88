"""Bad input: unknown ids are 404s, malformed parameters 400s, hostile names are escaped on every
page, and a seat's view never holds another seat's hidden cards, through the pages or the API."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashkit import LEAGUE_NAME, QUOTE_NAME, SCRIPT_NAME, LeagueStore, load_bench
from markupsafe import escape
from sqlalchemy import update
from starlette.testclient import TestClient

from dashboard.app import create_app
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import blocks

HOSTILE = [SCRIPT_NAME, QUOTE_NAME, LEAGUE_NAME]
RAW = ["<script>", "<b>bold</b>", "<i>cup</i>"]


@pytest.fixture
def client(sqlite_league: LeagueStore) -> Iterator[TestClient]:
    with TestClient(create_app(sqlite_league.engine)) as test_client:
        yield test_client


@pytest.mark.parametrize(
    "path",
    [
        "/leagues/999",
        "/leagues/999/matches",
        "/bots/999",
        "/bots/999/matches",
        "/matches/999",
        "/live?league=999",
        "/leagues/99999999999999999999999999",
        "/matches/0",
        "/no/such/page",
        "/leagues/<script>alert(1)</script>",
    ],
)
def test_unknown_ids_are_404_pages_and_404_json(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "404 · Not found" in response.text
    assert "<script>alert" not in response.text
    api_path = "/api" + path if not path.startswith("/no/") else "/api/no/such"
    answer = client.get(api_path)
    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("application/json")
    assert "error" in answer.json()


def test_out_of_range_parts_of_a_match_are_404s(client: TestClient, sqlite_league: LeagueStore) -> None:
    match_id = client.get(f"/api/leagues/{sqlite_league.league.id}/matches").json()["matches"][0]["id"]
    steps = client.get(f"/api/matches/{match_id}").json()["match"]["steps"]
    bot_id = client.get("/api/bots").json()["bots"][0]["id"]
    for path in (
        f"/matches/{match_id}?seat=3",
        f"/matches/{match_id}?step={steps + 1}",
        f"/api/matches/{match_id}/replay?seat=3",
        f"/api/matches/{match_id}/replay?step={steps + 1}",
        f"/bots/{bot_id}/matches?version=2",
        f"/leagues/{sqlite_league.league.id}/matches?page=2",
    ):
        assert client.get(path).status_code == 404, path


@pytest.mark.parametrize(
    "query",
    ["page=0", "page=-1", "page=abc", "page=1e3", "per_page=0", "per_page=1000", "page=99999999999999999999"],
)
def test_malformed_paging_is_a_400(client: TestClient, sqlite_league: LeagueStore, query: str) -> None:
    for path in (
        f"/leagues/{sqlite_league.league.id}/matches",
        f"/api/leagues/{sqlite_league.league.id}/matches",
    ):
        response = client.get(f"{path}?{query}")
        assert response.status_code == 400, (path, query)
        assert "abc" not in response.text


@pytest.mark.parametrize("query", ["step=x", "step=-1", "seat=x", "seat=-1", "step=<script>"])
def test_malformed_replay_parameters_are_400s(
    client: TestClient, sqlite_league: LeagueStore, query: str
) -> None:
    match_id = client.get(f"/api/leagues/{sqlite_league.league.id}/matches").json()["matches"][0]["id"]
    for path in (f"/matches/{match_id}", f"/api/matches/{match_id}/replay"):
        response = client.get(f"{path}?{query}")
        assert response.status_code == 400, (path, query)
        assert "<script>" not in response.text


def every_page(client: TestClient, league_id: int) -> list[str]:
    """The path of every page the dashboard has for this store (each match in every view)."""
    paths = ["/", "/bots", "/live", "/live/fragment", f"/live?league={league_id}"]
    paths += [f"/leagues/{league_id}", f"/leagues/{league_id}/matches"]
    for bot in client.get("/api/bots").json()["bots"]:
        paths += [f"/bots/{bot['id']}", f"/bots/{bot['id']}/matches"]
    for match in client.get(f"/api/leagues/{league_id}/matches").json()["matches"]:
        paths.append(f"/matches/{match['id']}?step=0")
        paths += [f"/matches/{match['id']}?step={step}" for step in (1, 2, match_steps(client, match["id"]))]
        paths += [f"/matches/{match['id']}?step=3&seat={seat}" for seat in range(3)]
    return paths


def match_steps(client: TestClient, match_id: int) -> int:
    return int(client.get(f"/api/matches/{match_id}").json()["match"]["steps"])


def test_hostile_names_are_escaped_everywhere(client: TestClient, sqlite_league: LeagueStore) -> None:
    pages = every_page(client, sqlite_league.league.id)
    shown = dict.fromkeys(HOSTILE, 0)
    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        for raw in RAW:
            assert raw not in response.text, f"{raw!r} unescaped on {path}"
        for name in HOSTILE:
            if str(escape(name)) in response.text:
                shown[name] += 1
    # The names are shown (escaped), not dropped: on the tables, the bot pages, the replays.
    assert all(count >= 3 for count in shown.values()), shown
    # The API returns them as they are, as JSON, which a browser does not render.
    names = {b["name"] for b in client.get("/api/bots").json()["bots"]}
    assert {SCRIPT_NAME, QUOTE_NAME} <= names
    assert client.get("/api/bots").headers["x-content-type-options"] == "nosniff"


def test_hostile_error_messages_of_failed_blocks_are_escaped(tmp_path: Path) -> None:
    bench = load_bench()
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    league_id = bench.fill(engine, 40)
    with engine.begin() as conn:
        conn.execute(
            update(blocks)
            .where(blocks.c.number == 3)
            .values(status="failed", error=f"bot said {SCRIPT_NAME} and {QUOTE_NAME}")
        )
    token = "an-operator-token-of-this-test"
    with TestClient(create_app(engine, operator_token=token)) as client:
        # Blocks' errors are the operator's (they can name hosts and paths): anonymous visitors
        # see that a block failed, not why.
        public = client.get("/live").text
        assert "Failed blocks" in public and "shown to the operator" in public and "bot said" not in public
        (failed,) = client.get("/api/live").json()["failed"]
        assert failed["error"] is None and failed["error_hidden"] is True
        text = client.get("/live", headers={"Authorization": f"Bearer {token}"}).text
        assert "Failed blocks" in text and str(escape(SCRIPT_NAME)) in text
        assert "<script>" not in text and "<b>bold</b>" not in text
        assert client.get(f"/leagues/{league_id}").status_code == 200
    engine.dispose()


# -- hidden information ----------------------------------------------------------------------


def cards_in(
    value: Any, keys: tuple[str, ...] = ("rows", "piles", "revealed", "hand", "plays", "taken")
) -> set[int]:
    """Every card number under the card-holding keys of a frame (views and events)."""
    found: set[int] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("plays", "revealed"):  # (card, seat) pairs
                found |= {pair[0] for pair in item}
            elif key in keys:
                found |= numbers(item)
            else:
                found |= cards_in(item, keys)
    elif isinstance(value, list):
        for item in value:
            found |= cards_in(item, keys)
    return found


def numbers(value: Any) -> set[int]:
    if isinstance(value, bool):
        return set()
    if isinstance(value, int):
        return {value}
    if isinstance(value, list):
        return set().union(*(numbers(v) for v in value)) if value else set()
    return set()


def test_a_seat_view_never_holds_another_seats_hand_api(
    client: TestClient, sqlite_league: LeagueStore
) -> None:
    matches = client.get(f"/api/leagues/{sqlite_league.league.id}/matches").json()["matches"]
    checked = 0
    for match in matches:
        everything = client.get(f"/api/matches/{match['id']}/replay").json()["frames"]
        for seat in range(3):
            mine = client.get(f"/api/matches/{match['id']}/replay?seat={seat}").json()
            assert "transcript" not in mine["match"]
            for frame, full in zip(mine["frames"], everything, strict=True):
                keys = {"variant", "step", "steps", "seat", "events", "lines", "view", "outcome"}
                assert set(frame) == keys
                assert frame["view"]["hand"] == full["seats"][seat]["hand"]
                hidden = set().union(*(set(full["seats"][s]["hand"]) for s in range(3) if s != seat))
                assert not cards_in(frame) & hidden, (match["id"], frame["step"], seat)
                checked += 1
    assert checked > 12 * 3 * 20


def test_a_seat_view_never_holds_another_seats_hand_page(
    client: TestClient, sqlite_league: LeagueStore
) -> None:
    matches = client.get(f"/api/leagues/{sqlite_league.league.id}/matches?per_page=3").json()["matches"]
    for match in matches:
        everything = client.get(f"/api/matches/{match['id']}/replay").json()["frames"]
        for seat in range(3):
            for full in everything:
                page = client.get(f"/matches/{match['id']}?step={full['step']}&seat={seat}").text
                shown = {int(n) for n in re.findall(r'data-card="(\d+)"', page)}
                hidden = set().union(*(set(full["seats"][s]["hand"]) for s in range(3) if s != seat))
                assert not shown & hidden, (match["id"], full["step"], seat)
                assert set(full["seats"][seat]["hand"]) <= shown
                assert page.count("hand hidden") == 2
                assert "/transcript" not in page
