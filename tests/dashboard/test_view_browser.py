"""``sixnimmt bot play … --view`` in a real browser: Debian's chromium, driven by Playwright as in
test_browser.py (its fixtures), on the games a real ``bot play`` run just played.

The run's own browser is a script that records the URL it was asked to open (``BROWSER``); the
test's chromium then opens that URL, steps through a game with the links and the arrow keys, and
checks every step's rows, scores and hands, for everyone and for one seat, against the rules
engine's replay of the transcript file the run wrote.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_browser import CHROMIUM, NO_CHROMIUM, Watched, browser, watched  # noqa: F401 (fixtures)

from referee.rules.transcript import Transcript, replay_states

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)

REPO = Path(__file__).resolve().parents[2]


def cards(locator: Any) -> list[int]:
    return [int(c) for c in locator.evaluate_all("cards => cards.map(c => c.dataset.card)")]


def check_step(page: Any, variant: Any, state: Any, step: int, seat: int | None, names: list[str]) -> None:
    """What the page shows at ``step`` is what the engine's views of ``state`` hold."""
    assert int(page.locator("#step").inner_text()) == step
    table = variant.view(state, 0)
    rows = page.locator("#rows .row")
    assert rows.count() == len(table.rows), step
    for number, row in enumerate(table.rows):
        assert cards(rows.nth(number).locator("[data-card]")) == list(row), (step, number)
    for s in range(variant.players):
        panel = page.locator(f'.panel[data-seat="{s}"]')
        assert panel.locator("h3").inner_text().startswith(f"seat {s}: {names[s]}")
        assert panel.locator(".score").inner_text() == str(table.scores[s]), (step, s)
        if seat is None or s == seat:
            assert cards(panel.locator(".hand [data-card]")) == list(variant.view(state, s).hand), (step, s)
        else:
            assert panel.locator(".hand .hidden-hand").count() == 1, (step, s)
    if seat is not None:  # no card of another hand anywhere on the page
        others = {c for s in range(variant.players) if s != seat for c in variant.view(state, s).hand}
        assert not others & set(cards(page.locator("[data-card]"))), step


def test_bot_play_view_steps_through_the_games_it_played(watched: Watched, tmp_path: Path) -> None:  # noqa: F811
    opened = tmp_path / "opened.txt"
    browser_script = tmp_path / "browser.sh"
    browser_script.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser_script.chmod(0o755)
    games = tmp_path / "games"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")} | {
        "BROWSER": str(browser_script)
    }
    run = subprocess.Popen(
        [
            sys.executable, "-m", "bot_sdk.cli", "bot", "play", "examples/cautious_bot.py",
            "--against", "random,heuristic", "--games", "2", "-o", "hands=1", "-o", "target=None",
            "--transcripts", str(games), "--view", "--json",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    try:
        assert run.stdout is not None
        played = json.loads(run.stdout.readline())
        assert played["games"] == 2
        shown = json.loads(run.stdout.readline())
        url = shown["url"]
        assert [Path(g["file"]).name for g in shown["games"]] == ["game-0000.json", "game-0001.json"]
        deadline = time.monotonic() + 60  # generous: the machine may be busy
        while not opened.exists():
            assert time.monotonic() < deadline, "bot play --view opened no browser"
            time.sleep(0.05)
        assert opened.read_text().split() == [url]

        transcript = Transcript.from_json(json.loads((games / "game-0001.json").read_text()))
        variant, states, _ = replay_states(transcript)
        names = list(transcript.meta["seats"])
        assert sorted(names) == ["cautious_bot", "heuristic", "random"]
        page = watched.page
        page.set_default_timeout(60_000)
        page.goto(url)
        page.locator('#games tr[data-game="1"]').get_by_role("link").click()
        page.wait_for_url("**/games/1")
        steps = len(transcript.steps)
        assert steps > 10
        # Everything: every step, forward with the link and the arrow key in turn.
        for step in range(1, steps + 1):
            check_step(page, variant, states[step], step, None, names)
            if step == steps:
                break
            if step % 2:
                page.locator("#next").click()
            else:
                page.keyboard.press("ArrowRight")
            page.wait_for_url(f"**step={step + 1}")
        result = page.locator("#outcome").inner_text()
        for name, score in zip(names, transcript.outcome.scores, strict=True):  # type: ignore[union-attr]
            assert f"{name} {score}" in result
        watched.shot("view-end")
        # One seat's view, from the start: its own hand, the others face down, back to the start.
        mine = names.index("cautious_bot")
        page.locator("#first").click()
        page.wait_for_url("**step=0")
        assert "Nothing dealt yet" in page.locator("#rows").inner_text()
        page.get_by_role("link", name=f"seat {mine}: cautious_bot").click()
        page.wait_for_url(f"**step=0&seat={mine}")
        for step in range(1, steps + 1):
            page.keyboard.press("ArrowRight")
            page.wait_for_url(f"**step={step}&seat={mine}")
            check_step(page, variant, states[step], step, mine, names)
            if step == 3:
                watched.shot("view-seat")
        page.locator("#prev").click()
        page.wait_for_url(f"**step={steps - 1}&seat={mine}")
        check_step(page, variant, states[steps - 1], steps - 1, mine, names)

        run.send_signal(signal.SIGINT)  # Ctrl-C stops the viewer, and bot play ends cleanly
        _, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err
    assert "Traceback" not in err
