"""The match page shows each seat's fault reasons, its process's exit and stderr, escaped."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from dashkit import LeagueStore
from sqlalchemy import select, update
from starlette.testclient import TestClient

from dashboard.app import create_app
from workers.store.engine import make_engine
from workers.store.schema import seat_results

TRACEBACK = (
    'Traceback (most recent call last):\n  File "/x/mine.py", line 9, in choose_card\n'
    "    raise ValueError('<script>alert(1)</script>')\nValueError: <script>alert(1)</script>\n"
)
DETAIL = {
    "faults": [
        {"kind": "exception", "reason": TRACEBACK, "count": 3},
        {"kind": "timeout", "reason": "no answer within 2000 ms and the 0 ms in the time bank", "count": 1},
    ],
    "exit": {"status": None, "signal": "SIGKILL", "limit": "CPU time limit 600 s (RLIMIT_CPU) reached",
             "stderr": "warming up\n<b>bold</b> last words\n"},
}  # fmt: skip


@pytest.fixture
def faulted_seat(league_store: LeagueStore) -> Iterator[tuple[int, int]]:
    """A seat of the league given a fault_detail for the test (taken away afterwards)."""
    writer = make_engine(league_store.url)
    with writer.begin() as conn:
        match_id, seat = conn.execute(select(seat_results.c.match_id, seat_results.c.seat).limit(1)).one()
        where = (seat_results.c.match_id == match_id) & (seat_results.c.seat == seat)
        conn.execute(update(seat_results).where(where).values(fault_detail=json.dumps(DETAIL)))
    try:
        yield match_id, seat
    finally:
        with writer.begin() as conn:
            conn.execute(update(seat_results).where(where).values(fault_detail=None))
        writer.dispose()


def test_the_match_page_shows_fault_reasons(league_store: LeagueStore, faulted_seat: tuple[int, int]) -> None:
    match_id, seat = faulted_seat
    with TestClient(create_app(league_store.engine)) as client:
        html = client.get(f"/matches/{match_id}").text
        info = client.get(f"/api/matches/{match_id}").json()["match"]
        listed = client.get(f"/api/leagues/{league_store.league.id}/matches?per_page=100").json()["matches"]
    assert 'id="faults"' in html and f'data-seat="{seat}"' in html
    error = "ValueError: &lt;script&gt;alert(1)&lt;/script&gt;"
    assert f"<b>exception</b> ×3: {error} (at mine.py:9, in choose_card)" in html
    assert "<b>timeout</b> ×1: no answer within 2000 ms" in html
    assert "the bot process killed by SIGKILL: CPU time limit 600 s (RLIMIT_CPU) reached" in html
    assert "&lt;b&gt;bold&lt;/b&gt; last words" in html
    assert "<script>alert" not in html
    shown = next(s for s in info["seats"] if s["seat"] == seat)["fault_detail"]
    assert shown["faults"][0]["reason"] == TRACEBACK and shown["exit"]["clean"] is False
    assert all("fault_detail" not in s for m in listed for s in m["seats"])  # lists leave it unread
