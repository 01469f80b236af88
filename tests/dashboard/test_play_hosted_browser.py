"""The dashboard's Play page in a real browser (Debian's chromium, driven by Playwright, through
tests/dashboard/test_browser.py's fixtures) against ``sixnimmt dashboard`` with ``SIXNIMMT_PLAY=on``.

A guest picks a variant and two stored bots on the Play page, plays a whole small game by clicking
the offered options (reloading the page once in the middle), then finds it on its replay page and
on a bot's page under "against people", and not in the league's standings nor its match list.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from test_browser import CHROMIUM, NO_CHROMIUM, Watched, browser, dashboard_server, watched  # noqa: F401 (fixtures)
from test_play_hosted import Stored, fill

from workers.store.engine import make_engine
from workers.store.migrate import upgrade

pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM), pytest.mark.slow]

OPEN = "#options button.option:not([disabled])"
"""The options of a decision not yet made (docs/play.md, the page's DOM hooks)."""
TIMEOUT_MS = 60_000
"""Upper bound of any wait for the page (the machine may be busy)."""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Stored]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('play-browser') / 'store.db'}"
    engine = make_engine(url)
    upgrade(engine)
    try:
        yield url, fill(engine)
    finally:
        engine.dispose()


def test_a_guest_plays_a_whole_game_and_finds_it_apart_from_the_league(
    watched: Watched,  # noqa: F811
    store: tuple[str, Stored],
) -> None:
    url, stored = store
    heuristic, lowest = stored.versions["heuristic"], stored.versions["lowest"]
    page = watched.page
    with dashboard_server(url, {"SIXNIMMT_PLAY": "on"}) as base:
        page.goto(f"{base}/leagues/{stored.league.id}")
        standings_before = page.locator("#standings tbody").inner_text()
        page.goto(f"{base}/")
        page.locator("#nav-play").click()
        page.select_option("#variant", "classic")
        page.locator("#choose-variant").click()
        page.wait_for_selector("#sit-down")
        page.fill("#name", "Grace")
        page.select_option("#opponent1", str(heuristic.id))
        page.select_option("#opponent2", str(lowest.id))
        page.fill("#o-hands", "1")
        page.fill("#o-hand_size", "3")
        page.fill("#o-target", "none")
        watched.shot("play-lobby")
        page.locator("#sit-down").click()
        page.wait_for_url("**/play/tables/**", timeout=TIMEOUT_MS)
        assert "human:Grace" in page.locator("h1").inner_text()

        rng = random.Random(5)
        clicks = 0
        while True:
            page.wait_for_selector(f"{OPEN}, #replay-link", timeout=TIMEOUT_MS)
            if page.locator("#replay-link").count():
                break
            request = page.locator("#table").get_attribute("data-request")
            buttons = page.locator(OPEN)
            buttons.nth(rng.randrange(buttons.count())).click()
            clicks += 1
            if clicks == 1:  # a reload in the middle of the hand: the table goes on
                page.reload()
                continue
            page.wait_for_function(
                "r => (document.getElementById('table') || {}).dataset.request !== r"
                " || !!document.querySelector('#options button.chosen')",
                arg=request,
                timeout=TIMEOUT_MS,
            )
        assert clicks >= 3  # three cards, and maybe a row
        watched.shot("play-hosted-result")
        result = page.locator("#result").inner_text()
        assert "human:Grace" in result

        page.locator("#replay-link").click()
        page.wait_for_selector("#replay", timeout=TIMEOUT_MS)
        assert "/human-matches/" in page.url
        game = page.url.split("/human-matches/")[1].split("?")[0]
        assert "counts in no league" in page.locator("#people-meta").inner_text()
        page.locator("#last").click()
        page.wait_for_selector("#replay")
        watched.shot("play-hosted-replay")

        # The bot's page lists it under "against people", linking to its replay.
        page.locator("#people-seats").get_by_role("link", name="classic/heuristic@1").click()
        page.wait_for_selector("#against-people")
        row = page.locator("#against-people tbody tr").first.locator("td").all_inner_texts()
        assert row[:3] == ["v1", "classic", "1"]
        link = page.locator(f'#people-games a[href="/human-matches/{game}"]')
        assert link.count() == 1
        watched.shot("play-hosted-bot")

        # Not in the league's standings, nor in its matches.
        page.goto(f"{base}/leagues/{stored.league.id}")
        assert page.locator("#standings tbody").inner_text() == standings_before
        assert "Grace" not in page.content()
        page.goto(f"{base}/leagues/{stored.league.id}/matches")
        assert "Grace" not in page.content() and f"/human-matches/{game}" not in page.content()
        link_back = page.goto(f"{base}/human-matches/{game}")
        assert link_back is not None and link_back.status == 200
