"""The match page shows the operator each seat's fault reasons, its process's exit and stderr, escaped;
anonymous visitors, the fault kinds and counts (test_private_logs.py plays a real leaky bot)."""

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


TOKEN = "the-operator-token-of-this-test"
COUNTS = {"exceptions": 3, "timeouts": 1}
"""The seat's fault counts, as the referee would have stored them with DETAIL."""


@pytest.fixture
def faulted_seat(league_store: LeagueStore) -> Iterator[tuple[int, int]]:
    """A seat of the league given DETAIL and its counts for the test (its own put back afterwards)."""
    writer = make_engine(league_store.url)
    columns = [seat_results.c[name] for name in COUNTS]
    with writer.begin() as conn:
        match_id, seat, *before = conn.execute(
            select(seat_results.c.match_id, seat_results.c.seat, *columns).limit(1)
        ).one()
        where = (seat_results.c.match_id == match_id) & (seat_results.c.seat == seat)
        conn.execute(update(seat_results).where(where).values(fault_detail=json.dumps(DETAIL), **COUNTS))
    try:
        yield match_id, seat
    finally:
        with writer.begin() as conn:
            own = dict(zip(COUNTS, before, strict=True))
            conn.execute(update(seat_results).where(where).values(fault_detail=None, **own))
        writer.dispose()


def test_the_match_page_shows_fault_reasons(league_store: LeagueStore, faulted_seat: tuple[int, int]) -> None:
    match_id, seat = faulted_seat
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(create_app(league_store.engine, operator_token=TOKEN)) as client:
        html = client.get(f"/matches/{match_id}", headers=bearer).text
        info = client.get(f"/api/matches/{match_id}", headers=bearer).json()["match"]
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


def test_anonymous_visitors_see_the_kinds_and_counts(
    league_store: LeagueStore, faulted_seat: tuple[int, int]
) -> None:
    match_id, seat = faulted_seat
    with TestClient(create_app(league_store.engine, operator_token=TOKEN)) as client:
        html = client.get(f"/matches/{match_id}").text
        info = client.get(f"/api/matches/{match_id}").json()["match"]
    assert 'id="faults"' in html and f'data-seat="{seat}"' in html
    assert "<b>timeout</b> ×1 · <b>exception</b> ×3" in html
    for private in ("ValueError", "mine.py", "no answer within", "SIGKILL", "last words", "stderr</summary>"):
        assert private not in html
    shown = next(s for s in info["seats"] if s["seat"] == seat)
    assert "fault_detail" not in shown
    assert shown["fault_kinds"] == {"exception": 3, "timeout": 1} and shown["faults"] == 4
