"""The words of every decision a person makes at the table (``dashboard.replay.option_labels``) and
what each row would cost (``board()["costs"]``), over random games of every variant the registry
lists: each pending decision's labels are distinct and non-empty, count rows from 1, and name the
card, tile, row or special card really in the option; each row's cost is what the engine then
takes from the seat that takes it."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from dashboard.replay import board, option_labels
from games.anniversary.replay import special_name
from games.board.replay import ACTION_CARDS, LUCK_CARDS
from referee.rules import CHANCE, event_to_json, make_variant
from referee.rules.cards import bull_heads
from referee.rules.core import Action, Decision
from referee.rules.spec import installed_variants
from referee.rules.transcript import Playthrough

GAMES: list[tuple[str, dict[str, Any]]] = [
    ("classic", {"players": 3, "hands": 1}),
    ("classic", {"players": 4, "hands": 1, "tactics": True, "professional": True}),
    ("anniversary", {"players": 4, "rounds": 1}),
    ("anniversary", {"players": 3, "rounds": 1, "fifth_row_end": "next_take", "block_end": "turn"}),
    ("board", {"players": 3}),
    ("board", {"players": 4, "luck": True}),
    ("board", {"players": 4, "pro": True, "luck": True}),
    ("junior-basic", {"players": 3}),
    ("junior-advanced", {"players": 4}),
    ("junior-experts", {"players": 3}),
]
"""Small games of every variant, with the options that bring out their decisions."""

SEEDS = range(4)
NAMES = ["Ann", "Bob", "Cy", "Di"]

KINDS = {
    "classic": {"card", "row"},
    "anniversary": {"card", "row", "action_card"},
    "board": {"card", "cards", "row", "pile", "luck", "action_card"},
    "junior-basic": {"row"},
    "junior-advanced": {"card_row"},
    "junior-experts": {"card", "row"},
}
"""The decision kinds random games of each variant reach (all of its kinds)."""

ANNIVERSARY_ROW_TARGET = {3: 0, 5: 1, 7: 0}
"""Anniversary special cards (codes) whose target at this index is a row: Insert, Shift, Block."""
BOARD_ROW_TARGET = {1, 4, 5}
"""Board game action cards whose target is a row: Stop!, Move to the Front, Attach Ascending."""


class Asked(NamedTuple):
    decision: Decision
    view: dict[str, Any]
    action: Action


def steps(
    variant_name: str, config: dict[str, Any], seed: int
) -> Iterator[tuple[list[Asked], list[dict[str, Any]]]]:
    """Every seats' step of a game of random legal play: each pending decision with the seat's view
    and the action chosen for it, then the step's events (as JSON)."""
    variant = make_variant(variant_name, config)
    game, rng = Playthrough(variant, seed), random.Random(seed)
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            game.apply({CHANCE: variant.sample_chance(game.state, game.chance)})
            continue
        asked = [Asked(d, variant.view(game.state, d.seat).to_json(), rng.choice(d.options)) for d in pending]
        events = game.apply({a.decision.seat: a.action for a in asked})
        yield asked, [event_to_json(e) for e in events]


def named(variant: str, kind: str, option: Action) -> tuple[list[int], list[int], list[str]]:
    """What the option names: its rows (counted from 0), its card or tile numbers, its card names."""
    if kind == "row":
        assert isinstance(option, int)
        return [option], [], []
    if kind == "card":
        assert isinstance(option, int)
        return [], [option], []
    if kind == "pile":  # a luck card's kind: its name
        assert isinstance(option, int)
        return [], [], [LUCK_CARDS[option]]
    assert isinstance(option, tuple), (kind, option)
    if kind == "card_row":
        return [option[1]], [option[0]], []
    if kind == "cards":
        return [], list(option), []
    if not option:  # passing
        return [], [], []
    code, *targets = option
    if variant == "anniversary":
        if code == 0:  # a swap names the special card swapped
            return [], [], [special_name(targets[0])]
        rows = [targets[ANNIVERSARY_ROW_TARGET[code]]] if code in ANNIVERSARY_ROW_TARGET else []
        cards = [
            t
            for i, t in enumerate(targets)
            if code not in ANNIVERSARY_ROW_TARGET or i != ANNIVERSARY_ROW_TARGET[code]
        ]
        return rows, cards, [special_name(code)]
    if kind == "luck":
        return [], targets, [LUCK_CARDS[code]]
    if code in BOARD_ROW_TARGET:
        return targets, [], [ACTION_CARDS[code]]
    return [], targets, [ACTION_CARDS[code]]


def check_labels(variant: str, view: dict[str, Any], decision: Decision, labels: list[str]) -> None:
    kind = str(decision.kind)
    assert len(labels) == len(decision.options)
    assert all(label.strip() for label in labels), labels
    assert len(set(labels)) == len(labels), f"{variant} {kind}: two options read the same: {labels}"
    family = variant if variant in KINDS else variant.split("-")[0]
    for option, label in zip(decision.options, labels, strict=True):
        assert "[" not in label, f"{variant} {kind}: no words for {option}: {label!r}"
        rows, cards, names = named(family, kind, option)
        for row in rows:
            assert f"row {row + 1}" in label, (variant, kind, option, label)
        for card in cards:
            assert re.search(rf"(?<![\d-]){card}(?!\d)", label), (variant, kind, option, label)
        for name in names:
            assert name in label, (variant, kind, option, label)
        shown = [int(n) for n in re.findall(r"\brow (\d+)", label)]
        assert all(1 <= n <= len(view["rows"]) + 1 for n in shown), (variant, option, label)
        assert shown == [r + 1 for r in rows] or (not rows and family == "anniversary"), (option, label)
        if kind == "row" and family in ("classic", "anniversary"):
            assert re.search(rf"\({sum(map(bull_heads, view['rows'][option]))} bull heads?\)", label)


def test_the_games_cover_every_variant_the_registry_lists() -> None:
    assert {v.name for v in installed_variants()} == {name for name, _ in GAMES} == set(KINDS)


@pytest.mark.parametrize(("variant", "config"), GAMES, ids=[f"{v}-{i}" for i, (v, _) in enumerate(GAMES)])
def test_every_decisions_labels_are_distinct_and_name_the_option(
    variant: str, config: dict[str, Any]
) -> None:
    seen: set[str] = set()
    codes: set[tuple[str, int]] = set()
    for seed in SEEDS:
        for asked, _ in steps(variant, config, seed):
            for decision, view, _ in asked:
                labels = option_labels(variant, view, decision.options, NAMES)
                check_labels(variant, view, decision, labels)
                assert option_labels(variant, view, view["decision"]["options"], NAMES) == labels, (
                    "JSON options"
                )
                seen.add(str(decision.kind))
                codes |= {
                    (view["phase"], o[0])
                    for o in decision.options
                    if isinstance(o, tuple) and o and decision.kind == "action_card"
                }
    wanted = KINDS[variant]
    if variant == "board":  # the basic game opens rows itself; luck cards come with luck
        wanted = wanted - ({"luck", "pile"} if not config.get("luck") else set())
        wanted = wanted - ({"row", "action_card"} if not config.get("pro") else set())
    assert seen == wanted, f"{variant}: the games asked {sorted(seen)}"
    if variant == "anniversary":
        assert {c for _, c in codes} >= {0, 1, 3, 4, 5, 6, 7}, sorted(codes)


def test_a_plugin_games_options_get_generic_distinct_labels() -> None:
    view = {"decision": {"kind": "card_row"}}
    labels = option_labels("no-such-variant", view, [(3, 0), (3, 1), [5, 0]], NAMES)
    assert labels == ["Put 3 in row 1", "Put 3 in row 2", "Put 5 in row 1"]
    view = {"decision": {"kind": "mystery"}}
    labels = option_labels("no-such-variant", view, [1, 2, (1, 2)], NAMES)
    assert len(set(labels)) == 3 and all(labels)
    view = {"decision": {"kind": "action_card"}}
    assert option_labels("no-such-variant", view, [(), (4, 2)], NAMES) == ["Pass", "Card 4 on 2"]
    view = {"decision": {"kind": "cards"}}  # two options that would read the same
    labels = option_labels("no-such-variant", view, [(3,), 3, (4, 5)], NAMES)
    assert labels == ["Play 3 [[3]]", "Play 3 [3]", "Play 4 and 5"]


def test_a_replay_hook_that_fails_falls_back_to_the_generic_words(monkeypatch: pytest.MonkeyPatch) -> None:
    from games.classic import replay as classic_replay

    def broken(*args: Any) -> Any:
        raise KeyError("oops")

    monkeypatch.setattr(classic_replay, "option_text", broken)
    monkeypatch.setattr(classic_replay, "costs", broken)
    view = {"decision": {"kind": "row"}, "rows": [[3], [50, 55]]}
    assert option_labels("classic", view, [0, 1], NAMES) == ["Row 1", "Row 2"]
    assert board(frame_of("classic", 0, view), NAMES)["costs"] is None


def frame_of(variant: str, seat: int, view: dict[str, Any]) -> dict[str, Any]:
    return {"variant": variant, "seat": seat, "view": view, "events": [], "step": 1, "steps": 1}


@pytest.mark.parametrize(("variant", "config"), GAMES, ids=[f"{v}-{i}" for i, (v, _) in enumerate(GAMES)])
def test_each_rows_cost_is_what_the_engine_takes_for_it(variant: str, config: dict[str, Any]) -> None:
    """A row's cost is its cards' bull heads (classic, anniversary) or its cards (Junior where the
    fewest cards win), and when the seat takes the row it chose, the engine charges exactly that."""
    checked = 0
    for seed in SEEDS:
        for asked, events in steps(variant, config, seed):
            for decision, view, action in asked:
                costs = board(frame_of(variant, decision.seat, view), NAMES)["costs"]
                if variant in ("classic", "anniversary"):
                    assert costs == [sum(map(bull_heads, row)) for row in view["rows"]]
                elif view.get("fewest_wins"):
                    assert costs == [len(row) for row in view["rows"]]
                else:
                    assert costs is None, f"{variant}: its rows cost nothing to take"
                    continue
                if decision.kind != "row" or len(asked) != 1:
                    continue
                taken = [
                    e
                    for e in events
                    if e.get("seat") == decision.seat and (e.get("taken") or e["type"] == "RowCollected")
                ]
                if not taken:  # Junior: the card joined the row
                    continue
                first = taken[0]
                assert first["row"] == action, (variant, first)
                charged = len(first["cards"]) if first["type"] == "RowCollected" else first["bulls"]
                if first.get("closed"):  # a 5th row's end: the row leaves with the played card
                    charged -= bull_heads(first["card"])
                assert charged == costs[action], (variant, view["rows"], action, first)
                checked += 1
    if variant in ("classic", "anniversary", "junior-experts"):
        assert checked, f"{variant}: no seat took a row it chose"
