"""The replay viewer for every variant: each frame renders, and a seat's frame holds its own hidden
cards or tiles and never another seat's."""

from __future__ import annotations

import json
import re
from pathlib import Path

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
