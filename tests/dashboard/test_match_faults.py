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
from dashboard.replay import load
from workers.store.engine import make_engine
from workers.store.schema import seat_results, transcripts

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


@pytest.fixture
def fault_steps(league_store: LeagueStore, faulted_seat: tuple[int, int]) -> Iterator[tuple[int, int, int]]:
    """The faulted seat's transcript told where its faults happened, as the referee's says it:
    the timeout at step 3, the exceptions at steps 5, 7 and 9 (its own put back afterwards)."""
    match_id, seat = faulted_seat
    writer = make_engine(league_store.url)
    where = transcripts.c.match_id == match_id
    with writer.begin() as conn:
        body = conn.execute(select(transcripts.c.body).where(where)).scalar_one()
        transcript = json.loads(body)
        players = len(transcript["meta"]["seats"])
        told = [[] for _ in range(players)]
        told[seat] = [{"step": 3, "kind": "timeout"}] + [{"step": n, "kind": "exception"} for n in (9, 5, 7)]
        transcript["meta"]["fault_steps"] = told
        conn.execute(update(transcripts).where(where).values(body=json.dumps(transcript)))
    try:
        yield match_id, seat, 3
    finally:
        with writer.begin() as conn:
            conn.execute(update(transcripts).where(where).values(body=body))
        writer.dispose()


def test_each_fault_links_to_its_step_in_the_replay(
    league_store: LeagueStore, fault_steps: tuple[int, int, int]
) -> None:
    match_id, seat, _ = fault_steps
    here = f"/matches/{match_id}"
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(create_app(league_store.engine, operator_token=TOKEN)) as client:
        public = client.get(here).text
        html = client.get(here, headers=bearer).text
        linked = client.get(f"{here}?step=5#replay").text
        frame = client.get(f"/api/matches/{match_id}/replay?step=1").json()["frame"]
    timeout = f'<a class="fault-step" href="{here}?step=3#replay">at step 3</a>'
    exception = f'<a class="fault-step" href="{here}?step=5#replay">at step 5</a>'
    exception += ' <span class="muted">(first of 3)</span>'
    # Everyone sees the kinds (and where they happened); the operator, each reason too.
    assert f"<b>timeout</b> ×1 {timeout} · <b>exception</b> ×3 {exception}" in public
    assert f"(at mine.py:9, in choose_card) {exception}" in html
    assert f"no answer within 2000 ms and the 0 ms in the time bank {timeout}" in html
    # The link opens the replay at that step.
    assert 'id="replay" data-step="5"' in linked and '<b id="step">5</b>' in linked
    assert frame["fault_steps"][seat] == {"timeout": [3], "exception": [5, 7, 9]}


def test_an_older_transcript_gives_the_steps_only_when_they_are_certain(league_store: LeagueStore) -> None:
    # Without meta.fault_steps: a seat with one fault kind gets the steps of its default actions,
    # when exactly as many as it had defaulted (else a bot's own choice could be taken for one).
    with league_store.engine.connect() as conn:
        body = conn.execute(select(transcripts.c.body).limit(1)).scalar_one()
    transcript = json.loads(body)
    players = len(transcript["meta"]["seats"])
    replay = load(body)
    assert replay.fault_steps == tuple({} for _ in range(players))  # a match without faults
    defaults = [
        step
        for step in range(1, replay.steps + 1)
        for s, action in replay.transcript.steps[step - 1]
        if s == 0
        and action
        == replay.variant.default_action(
            replay.states[step - 1],
            next(d for d in replay.variant.pending(replay.states[step - 1]) if d.seat == 0),
        )
    ]
    assert defaults  # the lowest card, say: a random bot plays it now and then
    meta = transcript["meta"]
    meta.pop("fault_steps", None)  # as a transcript from before the referee recorded them
    meta["faults"] = [{"timeout": len(defaults)}] + [{} for _ in range(players - 1)]
    meta["defaulted"] = [len(defaults)] + [0] * (players - 1)
    assert load(json.dumps(transcript)).fault_steps[0] == {"timeout": defaults}
    meta["defaulted"][0] += 1  # one default more than the steps found: not certain, no steps
    assert load(json.dumps(transcript)).fault_steps[0] == {}
    meta["defaulted"][0] -= 1
    meta["faults"][0] = {"timeout": 1, "illegal": len(defaults) - 1}  # two kinds: which step is which?
    assert load(json.dumps(transcript)).fault_steps[0] == {}
