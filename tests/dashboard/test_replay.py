"""The replay viewer for every variant: each frame renders, and a seat's frame holds its own hidden
cards or tiles and never another seat's."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from dashkit import load_bench
from sqlalchemy import insert
from starlette.testclient import TestClient

from dashboard.app import create_app
from dashboard.replay import HIDDEN, board, load
from referee.rules.core import CHANCE
from referee.rules.registry import VARIANTS, make_variant
from referee.rules.transcript import Playthrough, Transcript
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import transcripts

NAMES = ["<script>alert(1)</script>", "b", "c", "d"]


def played(variant_name: str, seed: int = 5) -> Transcript:
    """A whole game of default actions."""
    variant = make_variant(variant_name, {"players": 3})
    game = Playthrough(variant, seed)
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            game.resolve_chance()
        else:
            game.apply({d.seat: variant.default_action(game.state, d) for d in pending})
    return game.transcript()


def hidden_of(view: dict) -> set[int]:
    key = next(k for k in HIDDEN if k in view)
    return set(view[key])


@pytest.mark.parametrize("variant", [cls.name for cls in VARIANTS])
def test_every_frame_of_every_variant(variant: str) -> None:
    replay = load(json.dumps(played(variant).to_json()))
    assert replay.steps > 3
    for step in range(replay.steps + 1):
        everything = replay.frame(step, None, NAMES[:3])
        laid = board(everything, NAMES[:3])
        assert len(laid["panels"]) == 3
        for seat in range(3):
            mine = replay.frame(step, seat, NAMES[:3])
            assert "seats" not in mine and "actions" not in mine
            own = hidden_of(mine["view"])
            assert own == hidden_of(everything["seats"][seat])
            others = set().union(*(hidden_of(everything["seats"][s]) for s in range(3) if s != seat))
            seat_board = board(mine, NAMES[:3])
            for panel in seat_board["panels"]:
                assert panel["hand"] is None if panel["seat"] != seat else set(panel["hand"]) == own
            assert not own & others
    final = replay.frame(replay.steps, 0, NAMES[:3])
    assert final["outcome"] is not None


@pytest.mark.parametrize("variant", [cls.name for cls in VARIANTS])
def test_the_match_page_renders_every_variant(variant: str, tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    load_bench().fill(engine, 4)
    with engine.begin() as conn:
        conn.execute(insert(transcripts).values(match_id=1, body=json.dumps(played(variant).to_json())))
    with TestClient(create_app(engine)) as client:
        steps = client.get("/api/matches/1").json()["match"]["steps"]
        for step in sorted({0, 1, 2, steps // 2, steps}):
            for seat in ("", "&seat=0", "&seat=2"):
                response = client.get(f"/matches/1?step={step}{seat}")
                assert response.status_code == 200, (step, seat, response.text[-400:])
                assert re.search(r'id="step">\d+<', response.text)
        frames = client.get("/api/matches/1/replay?seat=1").json()["frames"]
        assert len(frames) == steps + 1
    engine.dispose()


# -- the anniversary variant's special cards ---------------------------------------------------


def anniversary_played(seed: int = 5) -> Transcript:
    """A three-seat anniversary game that plays a special card whenever one is legal: every kind,
    7 nimmt! and Block rows, swaps and Negative = Positive set-asides occur (seed 5)."""
    variant = make_variant("anniversary", {"players": 3})
    game = Playthrough(variant, seed)
    rng = random.Random(seed)
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            game.resolve_chance()
            continue
        actions = {}
        for d in pending:
            options = d.options[1:] if len(d.options) > 1 and d.options[0] == () else d.options
            actions[d.seat] = rng.choice(options)
        game.apply(actions)
    return game.transcript()


def test_the_anniversary_board_shows_flags_special_cards_swaps_and_set_asides() -> None:
    replay = load(json.dumps(anniversary_played().to_json()))
    names = NAMES[:3]
    seen: dict[str, int] = {"blocked": 0, "seven": 0, "played": 0, "swapped": 0, "set_aside": 0, "placing": 0}
    kinds: set[int] = set()
    for step in range(replay.steps + 1):
        everything = replay.frame(step, None, names)
        assert everything["variant"] == "anniversary"
        laid = board(everything, names)
        public = everything["seats"][0]
        assert laid["marks"] == [
            {"blocked": b, "seven": s} for b, s in zip(public["blocked"], public["sevens"], strict=True)
        ]
        seen["blocked"] += any(m["blocked"] for m in laid["marks"])
        seen["seven"] += any(m["seven"] for m in laid["marks"])
        specials = laid["specials"]
        assert specials["deck_size"] == public["deck_size"]
        assert [d["kind"] for d in specials["discard"]] == public["discard"]
        assert specials["set_aside"] == public["set_aside"]
        seen["placing"] += specials["placing"] is not None
        for panel in laid["panels"]:
            assert [k["kind"] for k in panel["specials"]] == everything["seats"][panel["seat"]]["specials"]
        by_type: dict[str, list[dict[str, Any]]] = {}
        for event in everything["events"]:
            by_type.setdefault(event["type"], []).append(event)
        played = by_type.get("SpecialPlayed", []) + by_type.get("SpecialSwapped", [])
        assert [p["kind"] for p in specials["played"]] == [e["kind"] for e in played]
        kinds |= {e["kind"] for e in by_type.get("SpecialPlayed", [])}
        seen["played"] += len(by_type.get("SpecialPlayed", []))
        seen["swapped"] += len(by_type.get("SpecialSwapped", []))
        assert [(a["card"], a["cards"], a["bulls"]) for a in specials["set_asides"]] == [
            (e["card"], e["cards"], e["bulls"]) for e in by_type.get("CardsSetAside", [])
        ]
        seen["set_aside"] += len(specials["set_asides"])
        # Every event of the variant has its own line, none the generic "Type field=value".
        for line, event in zip(everything["lines"], everything["events"], strict=True):
            assert event["type"] not in line and "=[" not in line, line
        # A seat's frame: its own special cards, the others' as counts only.
        for seat in range(3):
            mine = board(replay.frame(step, seat, names), names)
            for panel in mine["panels"]:
                own = everything["seats"][panel["seat"]]
                assert panel["special_count"] == len(own["specials"])
                if panel["seat"] == seat:
                    assert [k["kind"] for k in panel["specials"]] == own["specials"]
                else:
                    assert panel["specials"] is None
    assert all(seen.values()), seen
    assert kinds == set(range(1, 8))


def test_the_anniversary_match_page_renders_its_special_cards(tmp_path: Path) -> None:
    transcript = anniversary_played()
    replay = load(json.dumps(transcript.to_json()))
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    load_bench().fill(engine, 4)
    with engine.begin() as conn:
        conn.execute(insert(transcripts).values(match_id=1, body=json.dumps(transcript.to_json())))

    def first(test: Any) -> int:
        return next(s for s in range(replay.steps + 1) if test(replay.frame(s, None, NAMES[:3])))

    blocked = first(lambda f: any(f["seats"][0]["blocked"]))
    seven = first(lambda f: any(f["seats"][0]["sevens"]))
    swapped = first(lambda f: any(e["type"] == "SpecialSwapped" for e in f["events"]))
    set_aside = first(lambda f: any(e["type"] == "CardsSetAside" for e in f["events"]))
    with TestClient(create_app(engine)) as client:
        page = client.get(f"/matches/1?step={blocked}").text
        assert 'class="row blocked"' in page and 'data-special="7" title="a Block card' in page
        page = client.get(f"/matches/1?step={seven}").text
        assert 'class="row seven"' in page and 'data-special="2" title="a 7 nimmt! card' in page
        page = client.get(f"/matches/1?step={swapped}").text
        assert "swaps it for the deck&#39;s top card" in page and "Special deck:" in page
        page = client.get(f"/matches/1?step={set_aside}").text
        assert "<h3>Negative = Positive</h3>" in page and "Set aside this round:" in page
        assert "bull heads fewer" in page
        mine = client.get(f"/matches/1?step={set_aside}&seat=1").text
        assert mine.count("special cards hidden") + mine.count("special card hidden") == 2
        assert 'class="card b' in page, "the anniversary's cards show their bull heads"
        assert "Round 1" in client.get("/matches/1?step=1").text
    engine.dispose()
