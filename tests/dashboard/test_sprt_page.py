"""An SPRT test (``sixnimmt bot test``) on the dashboard: verdict, settings and the LLR curve between
the bounds, the same numbers as the command line, in the test client and in a real browser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from starlette.testclient import TestClient

from dashboard import plots
from dashboard.app import create_app
from workers import league as leagues
from workers.cli import bottest
from workers.planning import sprt
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import leagues as leagues_table

NAME = "sprt <script>alert(2)</script> & co"


class PlayedTest:
    """A store holding one SPRT test played to a verdict, and what the command line reports."""

    def __init__(self, url: str, league: repo.League, report: dict[str, Any]) -> None:
        self.url = url
        self.league = league
        self.report = report


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlayedTest]:
    """heuristic against random with lowest as the field, one-hand games: H1 from the first look."""
    url = f"sqlite:///{tmp_path_factory.mktemp('sprt') / 'store.db'}"
    writer = make_engine(url)
    upgrade(writer)
    league = bottest.create(
        writer, "heuristic", "random", ["lowest"], name="page", config={"target": None, "hands": 1},
        margin=4.0, seed=3,
    )  # fmt: skip
    leagues.run_local(writer, league, processes=2)
    with writer.begin() as conn:  # a hostile name, as if slipped into the store: pages must escape it
        conn.execute(update(leagues_table).where(leagues_table.c.id == league.id).values(name=NAME))
    league = repo.find_league(writer, NAME)
    report = bottest.report(writer, league)
    writer.dispose()
    yield PlayedTest(url, league, report)


@pytest.fixture
def client(played: PlayedTest) -> Iterator[TestClient]:
    engine = make_engine(played.url, read_only=True)
    with TestClient(create_app(engine)) as test_client:
        yield test_client
    engine.dispose()


def test_the_api_shows_what_the_command_line_reports(client: TestClient, played: PlayedTest) -> None:
    report = played.report
    assert report["verdict"] == sprt.H1 and report["finished"]
    shown = client.get(f"/api/leagues/{played.league.id}").json()
    test = shown["test"]
    for key in ("verdict", "llr", "clamped", "bounds", "deals", "games", "mean_difference", "sd", "path"):
        assert test[key] == pytest.approx(report[key]), key
    assert test["settings"] == report["settings"] == played.league.stopping
    assert (test["new"]["label"], test["base"]["label"]) == ("classic/heuristic@1", "classic/random@1")
    assert [e["label"] for e in test["field"]] == ["classic/lowest@1"]
    assert shown["league"]["format"] == "sprt"
    assert "_plot" not in shown


def test_the_page_draws_the_llr_after_every_deal_between_the_bounds(
    client: TestClient, played: PlayedTest
) -> None:
    response = client.get(f"/leagues/{played.league.id}")
    assert response.status_code == 200
    html = response.text
    assert "<script>alert(2)</script>" not in html and unescape("&lt;script&gt;alert(2)") in unescape(html)
    verdict = re.search(r'id="verdict"><strong>(.*?)</strong>', html)
    assert verdict is not None
    words = (
        "H1 accepted: classic/heuristic@1 is better than classic/random@1 by at least 4 bull heads per game"
    )
    assert verdict.group(1) == words
    report = played.report
    expected = plots.line_plot(
        [
            ("LLR", [(0.0, 0.0), *((float(n), v) for n, v in enumerate(report["path"], 1))]),
            ("accept H1", [(0.0, report["bounds"][1]), (float(report["deals"]), report["bounds"][1])]),
            ("accept H0", [(0.0, report["bounds"][0]), (float(report["deals"]), report["bounds"][0])]),
        ]
    )
    assert expected is not None
    llr_line, upper, lower = expected["lines"]
    assert f'class="series c0 llr" points="{llr_line["points"]}"' in html
    assert len(llr_line["points"].split()) == report["deals"] + 1
    assert f'points="{upper["points"]}"' in html and f'points="{lower["points"]}"' in html
    assert html.count('class="series') == 3
    state = re.search(r'<dd class="llr">(.*?)</dd>', html)
    assert state is not None
    low, high = report["bounds"]
    assert state.group(1) == f"{report['llr']:.2f} (clamped) in [{low:.2f}, {high:.2f}]"
    assert f'<dd class="games">{report["games"]}</dd>' in html


def test_other_leagues_keep_their_table(tmp_path: Path) -> None:
    """A league without a stopping rule still gets the league table, not the test's page."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    writer = make_engine(url)
    upgrade(writer)
    league = leagues.create(writer, "plain", ["random", "lowest"], table_size=2, deals=1)
    writer.dispose()
    engine = make_engine(url, read_only=True)
    with TestClient(create_app(engine)) as test_client:
        shown = test_client.get(f"/api/leagues/{league.id}").json()
        assert "standings" in shown and "test" not in shown
        assert 'id="standings"' in test_client.get(f"/leagues/{league.id}").text
        assert test_client.get("/leagues/2147483648").status_code == 404
    engine.dispose()


def test_the_page_in_a_real_browser(played: PlayedTest) -> None:
    from test_browser import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, dashboard_server

    if CHROMIUM is None:
        pytest.skip("no chromium at /usr/bin/chromium or on PATH (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    errors: list[str] = []
    dialogs: list[str] = []
    with dashboard_server(played.url) as base, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{base}/")
        page.get_by_role("link", name=NAME).click()
        assert page.locator("#verdict").inner_text().startswith("H1 accepted: classic/heuristic@1 is better")
        plot = page.locator("#llr-plot")
        assert plot.is_visible()
        box = plot.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 100
        points = page.locator("#llr-plot polyline.llr").get_attribute("points") or ""
        assert len(points.split()) == played.report["deals"] + 1
        assert page.locator("#llr-plot polyline.bound").count() == 2
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "sprt-test.png"), full_page=True)
        browser.close()
    assert dialogs == [] and errors == [], (dialogs, errors)
    assert json.dumps(played.report)  # the report is plain JSON (no infinities)
