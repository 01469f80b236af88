"""In a real chromium: a fault on a match page links to its step, and the link opens the replay
there (``?step=N#replay``), the replay in view."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from dashkit import LeagueStore
from sqlalchemy import select, update
from test_browser import CHROMIUM, CHROMIUM_ARGS, NO_CHROMIUM, Watched, dashboard_server, step_of, sync_api

from workers.store.engine import make_engine
from workers.store.schema import seat_results, transcripts

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)

FAULT_STEP = 4


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@contextlib.contextmanager
def timed_out_once(url: str) -> Iterator[tuple[int, int]]:
    """The store's last match given one timeout of its seat 0 at step FAULT_STEP, as the referee
    records it (the seat's count, the transcript's meta.fault_steps); put back afterwards."""
    writer = make_engine(url)
    with writer.begin() as conn:
        match_id = conn.execute(
            select(transcripts.c.match_id).order_by(transcripts.c.match_id.desc())
        ).scalar()
        body = conn.execute(select(transcripts.c.body).where(transcripts.c.match_id == match_id)).scalar_one()
        transcript = json.loads(body)
        told: list[list[dict[str, Any]]] = [[] for _ in transcript["meta"]["seats"]]
        told[0] = [{"step": FAULT_STEP, "kind": "timeout"}]
        transcript["meta"]["fault_steps"] = told
        conn.execute(
            update(transcripts).where(transcripts.c.match_id == match_id).values(body=json.dumps(transcript))
        )
        seat = (seat_results.c.match_id == match_id) & (seat_results.c.seat == 0)
        before = conn.execute(select(seat_results.c.timeouts).where(seat)).scalar_one()
        conn.execute(update(seat_results).where(seat).values(timeouts=1))
    try:
        yield match_id, 0
    finally:
        with writer.begin() as conn:
            conn.execute(update(transcripts).where(transcripts.c.match_id == match_id).values(body=body))
            conn.execute(update(seat_results).where(seat).values(timeouts=before))
        writer.dispose()


def test_a_fault_link_opens_the_replay_at_its_step(browser: Any, sqlite_league: LeagueStore) -> None:
    with timed_out_once(sqlite_league.url) as (match_id, seat), dashboard_server(sqlite_league.url) as base:
        watched = Watched(browser)
        page = watched.page
        page.goto(f"{base}/matches/{match_id}")
        assert step_of(page) == 1
        link = page.locator(f'.seat-faults[data-seat="{seat}"] .fault-kinds a.fault-step')
        assert link.inner_text() == f"at step {FAULT_STEP}"
        link.click()
        page.wait_for_url(f"**step={FAULT_STEP}#replay")
        assert step_of(page) == FAULT_STEP
        replay = page.locator("#replay")
        assert replay.get_attribute("data-step") == str(FAULT_STEP)
        assert replay.evaluate("section => section.getBoundingClientRect().top < window.innerHeight")
        watched.shot("fault-link-step")
        watched.check()
