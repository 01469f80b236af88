"""A person at the table in a real browser: Debian's chromium, driven by Playwright through the
dashboard tests' fixtures (tests/dashboard/test_browser.py), against ``sixnimmt play --human``'s
table (a real referee, real bot processes) served in this process.

Whole games by clicking (at phone width) and by keyboard alone, a time-out, a reload in the middle
of a hand, two people at one table, and a closed tab; every transcript is verified, and the
person's actions in it are the options clicked. No page may raise an alert or log an error.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from humankit import checked, local_table, seat_actions
from test_browser import CHROMIUM, NO_CHROMIUM, Watched, browser, watched  # noqa: F401 (fixtures)
from testkit import wait_for

from dashboard.table.seat import Seat

pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM), pytest.mark.slow]

OPEN = "#options button.option:not([disabled])"
"""The options of a decision not yet made."""
TIMEOUT_MS = 60_000
"""Upper bound of any wait for the page (generous: the machine may be busy)."""


def pending(page: Any, seat: Seat) -> tuple[int, list[Any]] | None:
    """The request the page offers options for, and those options as the seat holds them; None
    when the page offers none."""
    if page.locator(OPEN).count() == 0:
        return None
    request = int(page.locator("#table").get_attribute("data-request"))
    decision = seat.state()["decision"]
    assert decision is not None and decision["request_id"] == request
    labels = [b.split(" ", 1)[1] for b in page.locator("#options button.option").all_inner_texts()]
    assert labels == decision["labels"]  # the page offers exactly the legal options, in words
    return request, decision["options"]


def choose(page: Any, seat: Seat, rng: random.Random, keyboard: bool = False) -> Any:
    """Choose a random option of the page's pending decision (by click, or by keys alone);
    returns the option; waits until the page has moved past that request."""
    request, options = pending(page, seat) or (None, [])
    assert request is not None
    index = rng.randrange(len(options))
    if keyboard:
        if index % 2 == 0 or index >= 9:
            for digit in str(index + 1):
                page.keyboard.press(digit)
        else:
            page.keyboard.press("1")
            for _ in range(index):
                page.keyboard.press("ArrowRight")
        assert page.evaluate("document.activeElement.dataset.index") == str(index)
        page.keyboard.press("Enter")
    else:
        page.locator(f'#options button.option[data-index="{index}"]').click()
    page.wait_for_function(
        "r => (document.getElementById('table') || {}).dataset.request !== String(r)"
        " || !!document.querySelector('#options button.chosen')",
        arg=request,
        timeout=TIMEOUT_MS,
    )
    return options[index]


def play_out(page: Any, seat: Seat, rng: random.Random, keyboard: bool = False) -> list[Any]:
    """Play the page's game to its result; returns the options chosen."""
    chosen = []
    while True:
        page.wait_for_selector(f"{OPEN}, #replay-link", timeout=TIMEOUT_MS)
        if page.locator("#replay-link").count():
            return chosen
        chosen.append(choose(page, seat, rng, keyboard))


def test_a_whole_game_by_clicking_at_phone_width(watched: Watched, tmp_path: Path) -> None:  # noqa: F811
    page = watched.page
    page.set_viewport_size({"width": 375, "height": 800})
    with local_table(("random", "heuristic"), transcripts=tmp_path) as table:
        seat = table.seats[0]
        page.goto(table.page())
        page.wait_for_selector(OPEN, timeout=TIMEOUT_MS)
        # The page shows the seat's view: its hand, the rows with what each would cost, the clock.
        view = seat.state()["view"]
        hand = page.locator("#hand [data-card]").evaluate_all("cs => cs.map(c => +c.dataset.card)")
        assert hand == list(view["hand"])
        rows = page.locator("#rows .row")
        assert rows.count() == len(view["rows"])
        costs = rows.locator(".cost").evaluate_all("cs => cs.map(c => +c.dataset.cost)")
        assert costs == seat.state()["board"]["costs"]
        assert page.locator("#clock").inner_text().endswith(" s")
        assert page.title() == "● Your turn · human:ann at the table · sixnimmt arena"  # from another tab
        assert page.evaluate("document.documentElement.scrollWidth") <= 375  # no sideways scroll
        watched.shot("play-phone")
        chosen = play_out(page, seat, random.Random(3))
        (played,) = table.played()
        result = page.locator("#result").inner_text()
        assert page.title() == "human:ann at the table · sixnimmt arena"
        assert page.locator("#hand, #rows").count() == 0  # no stale board: the final one is in the replay
        watched.shot("play-result")
        page.locator("#replay-link").click()
        page.wait_for_selector("#replay", timeout=TIMEOUT_MS)
    transcript = checked(played)
    assert seat_actions(transcript, 0) == chosen and len(chosen) >= 4
    for name, score in zip(transcript.meta["seats"], transcript.outcome.scores, strict=True):
        assert f"{name} {score}" in result


def test_a_whole_game_by_keyboard_alone(watched: Watched, tmp_path: Path) -> None:  # noqa: F811
    page = watched.page
    with local_table(("heuristic", "random"), transcripts=tmp_path) as table:
        page.goto(table.page())
        chosen = play_out(page, table.seats[0], random.Random(4), keyboard=True)
        (played,) = table.played()
    transcript = checked(played)
    assert seat_actions(transcript, 0) == chosen


def test_a_time_out_plays_the_default_and_the_page_says_so(watched: Watched, tmp_path: Path) -> None:  # noqa: F811
    page = watched.page
    with local_table(
        ("random", "random"),
        transcripts=tmp_path,
        config={"players": 3, "hand_size": 2, "hands": 1},
        human_decision_ms=1500,
        human_bank_ms=0,
    ) as table:
        page.goto(table.page())
        page.wait_for_selector(OPEN, timeout=TIMEOUT_MS)
        assert page.locator("#clock").get_attribute("data-decision-left") is not None
        # Nobody clicks: the referee times the decision out and plays the default for the seat.
        page.wait_for_selector("#notices li:has-text('your time ran out')", timeout=TIMEOUT_MS)
        page.wait_for_selector("#replay-link", timeout=TIMEOUT_MS)
        (played,) = table.played()
    transcript = checked(played)
    (kind,) = transcript.meta["faults"][0]
    assert kind == "timeout" and transcript.meta["faults"][0]["timeout"] >= 2
    assert transcript.meta["defaulted"][0] == transcript.meta["faults"][0]["timeout"]


def test_a_reload_in_the_middle_of_a_hand_resumes_the_game(watched: Watched, tmp_path: Path) -> None:  # noqa: F811
    page = watched.page
    rng = random.Random(5)
    with local_table(("random", "random"), transcripts=tmp_path) as table:
        seat = table.seats[0]
        page.goto(table.page())
        page.wait_for_selector(OPEN, timeout=TIMEOUT_MS)
        chosen = [choose(page, seat, rng)]
        page.wait_for_selector(f"{OPEN}, #replay-link", timeout=TIMEOUT_MS)
        before = pending(page, seat)
        assert before is not None, "the hand has a second decision"
        hand = page.locator("#hand").inner_text()
        page.reload()
        page.wait_for_selector(OPEN, timeout=TIMEOUT_MS)
        assert pending(page, seat) == before and page.locator("#hand").inner_text() == hand
        chosen += play_out(page, seat, rng)
        (played,) = table.played()
    transcript = checked(played)
    assert seat_actions(transcript, 0) == chosen
    assert transcript.meta["faults"][0] == {}


def test_two_people_at_one_table_in_two_pages(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    people = [Watched(browser), Watched(browser)]
    rngs = [random.Random(6), random.Random(7)]
    chosen: list[list[Any]] = [[], []]
    with local_table(("random",), people=("human:ann", "human:bob"), transcripts=tmp_path) as table:
        for i, person in enumerate(people):
            person.page.goto(table.url)  # the table's first page: a link to each person's seat
            person.page.locator("#seats a").nth(i).click()
            person.page.wait_for_url(table.page(i))
            assert person.page.locator("h1").inner_text() == f"{table.seats[i].entrant} at the table"

        def ready() -> list[int] | None:
            done = [p.page.locator("#replay-link").count() > 0 for p in people]
            if all(done):
                return [-1]
            mine = [i for i, p in enumerate(people) if p.page.locator(OPEN).count()]
            return mine or None

        while (turn := wait_for(ready, TIMEOUT_MS / 1000, "a decision on either page")) != [-1]:
            for i in turn:
                chosen[i].append(choose(people[i].page, table.seats[i], rngs[i]))
        (played,) = table.played()
    for person in people:
        person.check()
    transcript = checked(played)
    assert transcript.meta["seats"] == ["human:ann", "human:bob", "random0"]
    assert [seat_actions(transcript, 0), seat_actions(transcript, 1)] == chosen


def test_closing_the_tab_is_a_disconnect_fault(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    person = Watched(browser)
    with local_table(("random", "random"), transcripts=tmp_path, human_grace_s=2) as table:
        page = person.page
        page.goto(table.page())
        page.wait_for_selector(OPEN, timeout=TIMEOUT_MS)
        choose(page, table.seats[0], random.Random(8))
        person.check()  # closes the tab
        (played,) = table.played()
    transcript = checked(played)
    assert transcript.meta["faults"][0] == {"disconnect": 1}
    assert "your seat left the game" in " ".join(table.seats[0].state()["notices"])
