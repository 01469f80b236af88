"""The dashboard in a real browser: Debian's chromium, driven by Playwright, against
``sixnimmt dashboard`` serving a store filled by a real league.

The league table shows the league's own standings, the replay steps forward and back (buttons and
arrow keys) and hides the other seats' hands in a seat's view, and the live view follows a league
while it runs, without reloading. No page may raise an alert (the hostile bot names) or log an
error (the content security policy forbids inline code: our own scripts must not need any).
Screenshots go to tests/dashboard/screenshots/.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashkit import (
    QUOTE_NAME,
    SCREENSHOTS,
    SCRIPT_NAME,
    LeagueStore,
    apart_text,
    expected_cells,
    free_port,
    wait_for,
)
from sqlalchemy import update

from workers import league as leagues
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import leagues as leagues_table

REQUIRED = os.environ.get("SIXNIMMT_TEST_BROWSER") == "required"
"""``make test`` sets it, after installing chromium or stopping with the command to run: there a
missing browser fails these tests instead of skipping them."""

if REQUIRED:
    import playwright.sync_api as sync_api
else:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
    )

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def find_chromium() -> str | None:
    """Debian's chromium (Playwright's own browser downloads are not used); ``SIXNIMMT_CHROMIUM``,
    when set, is the only candidate."""
    named = os.environ.get("SIXNIMMT_CHROMIUM")
    candidates = [named] if named else ["/usr/bin/chromium", shutil.which("chromium")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    return None


CHROMIUM = find_chromium()
NO_CHROMIUM = "no chromium at $SIXNIMMT_CHROMIUM, /usr/bin/chromium or on PATH (apt-get install chromium)"
if CHROMIUM is None and REQUIRED:
    pytest.fail(f"{NO_CHROMIUM}; make test installs it when it can", pytrace=False)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)


@contextlib.contextmanager
def dashboard_server(url: str, settings: dict[str, str] | None = None) -> Iterator[str]:
    """``sixnimmt dashboard`` on a free port of 127.0.0.1 over the store at ``url`` (and these
    ``SIXNIMMT_*`` settings)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env["SIXNIMMT_DATABASE_URL"] = url
    env.update(settings or {})
    process = subprocess.Popen(
        [sys.executable, "-m", "bot_sdk.cli", "dashboard", "--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _healthy(base) or process.poll() is not None, 30, "the dashboard to start")
        if process.poll() is not None:
            raise AssertionError(f"the dashboard exited: {process.stdout.read() if process.stdout else ''}")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def server(sqlite_league: LeagueStore) -> Iterator[str]:
    with dashboard_server(sqlite_league.url) as base:
        yield base


class Watched:
    """A page that records alerts and console errors."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def shot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def check(self) -> None:
        assert self.dialogs == [], f"a page raised an alert: {self.dialogs}"
        assert self.errors == [], f"the browser logged errors: {self.errors}"
        self.context.close()


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    page = Watched(browser)
    yield page
    page.check()


def test_the_league_table_shows_the_standings(
    watched: Watched, server: str, sqlite_league: LeagueStore
) -> None:
    page = watched.page
    page.goto(f"{server}/")
    page.get_by_role("link", name=sqlite_league.league.name).click()
    page.wait_for_url(f"**/leagues/{sqlite_league.league.id}")
    rows = page.locator("#standings tbody tr")
    assert rows.count() == len(sqlite_league.standings)
    for i, expected in enumerate(sqlite_league.standings):
        cells = [c.strip() for c in rows.nth(i).locator("td").all_inner_texts()]
        numbers = [text for _, text in expected_cells(expected)]
        assert (
            cells
            == [
                str(i + 1),
                expected["bot"],  # a hostile name reads as its text: escaped, not run
                *numbers[:4],
                apart_text(expected),
                *numbers[4:],
            ]
        )
    assert page.locator("#standings").get_by_text(f"{SCRIPT_NAME}@1").count() == 1
    assert page.locator("#standings").get_by_text(f"{QUOTE_NAME}@1").count() == 1
    watched.shot("league")
    # On to the bot page: its rating plot is drawn.
    page.locator("#standings").get_by_role("link", name="heuristic@1").click()
    page.wait_for_selector("#rating-plot polyline")
    assert page.locator("#opponents tbody tr").count() == 3
    watched.shot("bot")


def step_of(page: Any) -> int:
    return int(page.locator("#step").inner_text())


def test_the_replay_steps_forward_and_back(watched: Watched, server: str, sqlite_league: LeagueStore) -> None:
    page = watched.page
    page.goto(f"{server}/leagues/{sqlite_league.league.id}/matches")
    page.locator("table.matches tbody tr").first.get_by_role("link").first.click()
    page.wait_for_selector("#step")
    match_url = page.url.split("?")[0]
    match_id = int(match_url.rsplit("/", 1)[1])
    assert step_of(page) == 1
    assert page.locator("#rows .row").count() == 4  # the first deal started the rows
    before = page.locator("#rows").inner_text()
    page.locator("#next").click()
    page.wait_for_url("**step=2")
    assert step_of(page) == 2
    assert "cards revealed" in page.locator("#events").inner_text()
    assert page.locator("#rows").inner_text() != before  # the turn's cards went to the rows
    page.keyboard.press("ArrowRight")
    page.wait_for_url("**step=3")
    assert step_of(page) == 3
    page.locator("#prev").click()
    page.wait_for_url("**step=2")
    page.keyboard.press("ArrowLeft")
    page.wait_for_url("**step=1")
    assert page.locator("#rows").inner_text() == before
    page.locator("#last").click()
    page.wait_for_selector("#outcome")
    assert "Result:" in page.locator("#outcome").inner_text()
    watched.shot("replay-end")
    page.locator("#first").click()
    page.wait_for_url("**step=0")
    assert "Nothing dealt yet" in page.locator("#rows").inner_text()

    # A seat's own view: its hand, the other hands face down, none of their cards anywhere.
    page.goto(f"{match_url}?step=4")
    watched.shot("replay-everything")
    page.get_by_role("link", name="seat 1:").click()
    page.wait_for_url("**seat=1")
    assert page.locator(".panel .hidden-hand").count() == 2
    shown = {
        int(c) for c in page.locator("[data-card]").evaluate_all("cards => cards.map(c => c.dataset.card)")
    }
    frame = json.loads(page.request.get(f"{server}/api/matches/{match_id}/replay?step=4").text())["frame"]
    hidden = set(frame["seats"][0]["hand"]) | set(frame["seats"][2]["hand"])
    assert set(frame["seats"][1]["hand"]) <= shown
    assert not shown & hidden
    page.keyboard.press("ArrowRight")  # stepping keeps the seat's view
    page.wait_for_url("**step=5&seat=1")
    assert page.locator(".panel .hidden-hand").count() == 2
    watched.shot("replay-seat1")


def test_the_live_view_follows_a_running_league(watched: Watched, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'live.db'}"
    writer = make_engine(url)
    upgrade(writer)
    league = leagues.create(
        writer,
        "live-cup",
        ["random", "lowest", "heuristic", "highest"],
        table_size=2,
        deals=1,
        seed=3,
        # Long enough that the page, polling every 1.5 s, sees the count between 0 and the end:
        # warm bots play a one-hand block in a few milliseconds.
        config={"hands": 40, "target": None},
    )
    # A hostile name, as an older store may hold (new names are refused): the page escapes it.
    with writer.begin() as conn:
        conn.execute(
            update(leagues_table).where(leagues_table.c.id == league.id).values(name="live <b>cup</b>")
        )
    league = repo.find_league(writer, "live <b>cup</b>")
    writer.dispose()
    blocks = 6
    page = watched.page
    with dashboard_server(url) as base:
        page.goto(f"{base}/live?league={league.id}")
        cell = f'#live-leagues tr[data-league="{league.id}"] .matches-stored'
        assert page.locator(cell).inner_text() == "0"
        assert page.locator("#running-count").inner_text() == "0"
        # Marks this document: a reload would lose it. Sample what the page shows as it changes.
        page.evaluate(
            """() => { window.__same_document = true; window.__seen = [];
            setInterval(() => window.__seen.push([
              document.querySelector('#running-count')?.textContent,
              document.querySelector('.matches-stored')?.textContent]), 100); }"""
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
        env["SIXNIMMT_DATABASE_URL"] = url
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bot_sdk.cli",
                "league",
                "run",
                league.name,
                "--local",
                "--processes",
                "1",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            page.wait_for_function(
                "() => document.querySelector('#running-count').textContent !== '0'", timeout=120_000
            )
            watched.shot("live-running")
            page.wait_for_function(
                f"() => document.querySelector('{cell}').textContent === '{blocks * 2}'", timeout=300_000
            )
            output, _ = run.communicate(timeout=300)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        assert run.returncode == 0, output
        page.wait_for_function("() => document.querySelector('#running-count').textContent === '0'")
        assert page.evaluate("() => window.__same_document") is True
        page.wait_for_function(f"() => window.__seen.length && window.__seen.at(-1)[1] === '{blocks * 2}'")
        seen = page.evaluate("() => window.__seen")
        stored = [int(m) for _, m in seen if m is not None]
        assert stored == sorted(stored) and stored[0] == 0 and stored[-1] == blocks * 2
        assert len(set(stored)) >= 3, f"the page showed too few steps of the run: {sorted(set(stored))}"
        assert page.locator("#live-finished tbody tr").count() == blocks
        assert "6/6 blocks done" in page.locator("#live-leagues").inner_text()
        watched.shot("live-done")


def test_the_anniversary_replay_shows_its_special_cards(watched: Watched, tmp_path: Path) -> None:
    """A real anniversary league's replay: rows with their Block and 7 nimmt! cards, the special
    cards played, swapped and set aside, each seat's special cards (the others' face down)."""
    url = f"sqlite:///{tmp_path / 'jubilee.db'}"
    writer = make_engine(url)
    upgrade(writer)
    league = leagues.create(
        writer, "jubilee", ["random*2", "heuristic"], variant="anniversary", table_size=3, deals=1, seed=4
    )
    # A fixed seat key (a league draws its own): the bots' seeds, so the games, are the same each run.
    with writer.begin() as conn:
        conn.execute(update(leagues_table).where(leagues_table.c.id == league.id).values(seat_key=b"j" * 32))
    league = repo.find_league(writer, "jubilee")
    assert leagues.run_local(writer, league, processes=1) == {"stored": 1}  # one block, three matches
    writer.dispose()
    page = watched.page
    with dashboard_server(url) as base:
        found: dict[str, tuple[int, int]] = {}
        for match_id in (1, 2, 3):
            frames = json.loads(page.request.get(f"{base}/api/matches/{match_id}/replay").text())["frames"]
            for frame in frames:
                table, types = frame["seats"][0], {e["type"] for e in frame["events"]}
                for key, there in (
                    ("blocked", any(table["blocked"])),
                    ("seven", any(table["sevens"])),
                    ("swap", "SpecialSwapped" in types),
                    ("set_aside", "CardsSetAside" in types),
                ):
                    if there:
                        found.setdefault(key, (match_id, frame["step"]))
        assert set(found) == {"blocked", "seven", "swap", "set_aside"}, found
        match_id, step = found["seven"]
        page.goto(f"{base}/matches/{match_id}?step={step}")
        assert page.locator("#rows .row.seven [data-special='2']").count() >= 1
        assert page.locator("#specials").is_visible()
        assert "Special deck:" in page.locator("#specials").inner_text()
        assert page.locator("#rows .card i").count() > 0, "the cards show their bull heads"
        watched.shot("replay-anniversary-seven")
        match_id, step = found["blocked"]
        page.goto(f"{base}/matches/{match_id}?step={step}")
        assert page.locator("#rows .row.blocked [data-special='7']").count() >= 1
        watched.shot("replay-anniversary")
        match_id, step = found["set_aside"]
        page.goto(f"{base}/matches/{match_id}?step={step}")
        assert "Negative = Positive" in page.locator("#specials").inner_text()
        assert "bull heads fewer" in page.locator("#events").inner_text()
        watched.shot("replay-anniversary-set-aside")
        page.get_by_role("link", name="seat 1:").click()
        page.wait_for_url("**seat=1")
        assert page.locator(".panel .special-hand .hidden-hand").count() == 2
        assert page.locator(".panel.me .special-hand .hidden-hand").count() == 0
        match_id, step = found["swap"]
        page.goto(f"{base}/matches/{match_id}?step={step}")
        assert "swaps" in page.locator("#specials").inner_text()
