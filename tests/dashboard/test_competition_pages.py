"""The dashboard's public competition pages: the list, a competition's season and final standings
with links to each bot's history page, its latest matches with their replays, and their JSON
twins; never a log. The competition's season is a real league in which a bot printed a marker to
its stderr and raised with another (tests/dashboard/test_private_logs.py): no public page, the
competition's or the bot's, shows either."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from test_private_logs import Played, no_logs, played

from dashboard.app import create_app
from workers.store import repo
from workers.store.engine import make_engine

__all__ = ["played"]  # the league with the leaky bot, a fixture of test_private_logs


@pytest.fixture(scope="module")
def client(played: Played) -> Iterator[TestClient]:
    writer = make_engine(played.url)
    found = repo.create_competition(
        writer,
        "spring-cup",
        variant="classic",
        config={},
        table_size=3,
        submissions_per_day=5,
        active_per_account=3,
        ends_at=dt.datetime(2030, 1, 1, tzinfo=dt.UTC),
        final_top=2,
        final_until_confident=0.95,
        final_max_deals=100,
    )
    repo.update_competition(writer, found.id, season_league_id=played.league_id)
    repo.create_competition(
        writer,
        "autumn-cup",
        variant="classic",
        config={},
        table_size=4,
        submissions_per_day=5,
        active_per_account=3,
        ends_at=None,
        final_top=4,
        final_until_confident=0.9,
        final_max_deals=100,
    )
    writer.dispose()
    with TestClient(create_app(played.engine, operator_token="")) as client:
        yield client


def test_the_list_names_every_competition(client: TestClient) -> None:
    page = client.get("/competitions")
    assert page.status_code == 200
    assert 'href="/competitions/spring-cup"' in page.text and "autumn-cup" in page.text
    assert 'href="/competitions"' in client.get("/").text  # in the navigation
    listed = client.get("/api/competitions").json()["competitions"]
    assert [c["name"] for c in listed] == ["autumn-cup", "spring-cup"]


def test_a_competition_shows_its_standings_matches_and_bots_history(
    client: TestClient, played: Played
) -> None:
    page = client.get("/competitions/spring-cup")
    assert page.status_code == 200
    text = page.text
    assert 'id="season"' in text and 'id="final"' not in text
    for bot in ("leaky@1", "random@", "lowest@"):
        assert bot in text
    assert f'href="/bots/{played.bot_id}"' in text  # each bot's history page
    assert f'href="/matches/{played.match_id}"' in text  # the replays of the latest matches
    assert f'href="/leagues/{played.league_id}"' in text
    no_logs(text)
    shown = client.get("/api/competitions/spring-cup").json()
    rows = shown["competition"]["season"]["standings"]
    assert {r["bot"].partition("@")[0] for r in rows} == {"leaky", "classic/random", "classic/lowest"}
    assert all(r["games"] > 0 for r in rows)
    no_logs(client.get("/api/competitions/spring-cup").text)
    no_logs(client.get(f"/bots/{played.bot_id}").text)
    no_logs(client.get(f"/api/bots/{played.bot_id}").text)

    empty = client.get("/competitions/autumn-cup")
    assert empty.status_code == 200 and 'id="season-not-begun"' in empty.text
    assert client.get("/competitions/no-such-cup").status_code == 404
    assert client.get("/api/competitions/no-such-cup").json()["error"]


def test_the_final_table_stands_above_the_season(played: Played, client: TestClient) -> None:
    writer = make_engine(played.url)
    found = repo.find_competition(writer, "spring-cup")
    repo.update_competition(writer, found.id, final_league_id=played.league_id, state="final")
    writer.dispose()
    text = client.get("/competitions/spring-cup").text
    assert 'id="final"' in text and text.index('id="final"') < text.index('id="season"')
    no_logs(text)
