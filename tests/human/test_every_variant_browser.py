"""A whole game of every variant the registry lists, played in a real browser: Debian's chromium,
driven by Playwright (tests/dashboard/test_browser.py's fixtures), on the page of ``sixnimmt play
--human``'s own table (a real referee, real bot processes), by clicking a seeded random one of the
offered option buttons at every decision.

Each game's transcript is verified against its seed; the person's actions in it are exactly the
options clicked, and at each of them the page offered exactly the legal options of the engine's
state, each in the words of ``dashboard.replay.option_labels``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from humankit import checked, local_table
from test_browser import CHROMIUM, NO_CHROMIUM, Watched, browser, watched  # noqa: F401 (fixtures)

from dashboard.replay import option_labels
from referee.rules.cards import bull_heads
from referee.rules.core import CHANCE
from referee.rules.spec import installed_variants
from referee.rules.transcript import Transcript, replay_states

pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM), pytest.mark.slow]

GAMES: dict[str, tuple[dict[str, Any], int]] = {
    "classic": ({"players": 3, "hand_size": 6, "hands": 1, "tactics": True}, 5),
    "anniversary": ({"players": 3, "hand_size": 4, "rounds": 1}, 11),
    "board": ({"players": 3, "tiles_each": 5, "pro": True, "luck": True}, 2),
    "junior-basic": ({"players": 3}, 1),
    "junior-advanced": ({"players": 3}, 1),
    "junior-experts": ({"players": 3}, 1),
}
"""A small game of every variant, against random bots, and the seed of the clicks. The board game
is its pro version with luck cards: tiles, action cards, luck cards, luck piles and rows opened
can all come up. Which decisions a game meets varies with the bots' play (their seeds are the
referee's), so the test checks every decision met and counts on none in particular; the unit
tests (tests/dashboard/test_option_labels.py) word every kind of every variant."""

PERSON = "human:ann"
GAME_S = 240
"""An upper bound for one whole game on a loaded machine (a game takes seconds)."""

LABELS = """buttons => buttons.map(b => {
  const key = b.querySelector("kbd");
  return b.textContent.slice(key ? key.textContent.length : 0).trim();
})"""
"""Each option button's words, without its key."""

ROWS = """rows => rows.map(r => {
  const cost = r.querySelector(".cost");
  return {cards: Array.from(r.querySelectorAll("[data-card]"), c => Number(c.dataset.card)),
          cost: cost ? Number(cost.dataset.cost) : null};
})"""
"""Each row on the page: its cards and what taking it would cost (null where the page says nothing)."""

NEXT = """([request]) => {
  const table = document.getElementById("table");
  if (!table) return false;
  if (document.getElementById("replay-link")) return true;
  const asked = table.getAttribute("data-request");
  const open = table.querySelector("#options button.option:not([disabled])");
  return asked !== null && asked !== request && open !== null;
}"""
"""The page shows a decision other than ``request`` (still to make), or the game's replay link."""


def test_the_games_are_every_variant_the_registry_lists() -> None:
    assert set(GAMES) == {v.name for v in installed_variants()}


def play_by_clicking(watched: Watched, url: str, seed: int) -> list[dict[str, Any]]:  # noqa: F811
    """Play the seat's game on its page to the end, clicking a random option button at each
    decision; returns each decision's request, labels shown and the index clicked."""
    page = watched.page
    page.goto(url)
    rng = random.Random(seed)
    clicks: list[dict[str, Any]] = []
    request = ""
    while True:
        page.wait_for_function(NEXT, arg=[request], timeout=GAME_S * 1000)
        if page.locator("#replay-link").count():
            return clicks
        request = page.locator("#table").get_attribute("data-request") or ""
        buttons = page.locator("#options button.option")
        labels = buttons.evaluate_all(LABELS)
        index = rng.randrange(len(labels))
        assert [int(i) for i in buttons.evaluate_all("bs => bs.map(b => b.dataset.index)")] == list(
            range(len(labels))
        )
        rows = page.locator("#rows .row").evaluate_all(ROWS)
        buttons.nth(index).click()
        clicks.append({"request": request, "labels": labels, "index": index, "rows": rows})
        assert len(clicks) < 500, "the game does not end"


def check_costs(variant: str, rows: list[dict[str, Any]]) -> None:
    """Each row shown says what taking it would cost: its cards' bull heads in classic and the
    anniversary game, its cards in Junior's experts game (the fewest win), nothing elsewhere."""
    assert rows, "the page shows no rows"
    for row in rows:
        if variant in ("classic", "anniversary"):
            assert row["cost"] == sum(map(bull_heads, row["cards"])), row
        elif variant == "junior-experts":
            assert row["cost"] == len(row["cards"]), row
        else:
            assert row["cost"] is None, row


def offered(transcript: Transcript, seat: int) -> list[tuple[list[str], tuple[Any, ...], Any]]:
    """Each decision of ``seat`` in the transcript: the labels of its legal options in the engine's
    state, the options, and the action the seat took."""
    variant, states, _ = replay_states(transcript)
    names = list(transcript.meta["seats"])
    asked = []
    for step, state in zip(transcript.steps, states, strict=False):
        actions = dict(step)
        if CHANCE in actions or seat not in actions:
            continue
        (decision,) = [d for d in variant.pending(state) if d.seat == seat]
        view = variant.view(state, seat).to_json()
        labels = option_labels(variant.name, view, decision.options, names)
        asked.append((labels, decision.options, actions[seat]))
    return asked


@pytest.mark.parametrize("variant", sorted(GAMES))
def test_a_whole_game_clicked_through_the_page(watched: Watched, tmp_path: Path, variant: str) -> None:  # noqa: F811
    config, seed = GAMES[variant]
    bots = ["random"] * (config["players"] - 1)
    with local_table(bots, people=(PERSON,), variant=variant, config=config, transcripts=tmp_path) as table:
        clicks = play_by_clicking(watched, table.page(0), seed)
        (played,) = table.played(GAME_S)
    transcript = checked(played)  # verified against its seed
    seat = list(transcript.meta["seats"]).index(PERSON)
    assert not any(transcript.meta["faults"]), transcript.meta["faults"]
    asked = offered(transcript, seat)
    assert len(asked) == len(clicks) > 0, (len(asked), len(clicks))
    assert len({click["request"] for click in clicks}) == len(clicks), "one request was shown twice"
    for number, ((labels, options, action), click) in enumerate(zip(asked, clicks, strict=True)):
        assert click["labels"] == labels, f"decision {number}: the page offered other options"
        assert options[click["index"]] == action, f"decision {number}: the transcript has another action"
        check_costs(variant, click["rows"])
    shown = watched.page.locator("#result").inner_text()
    assert f"{PERSON} {transcript.outcome.scores[seat]} (#" in shown, shown
