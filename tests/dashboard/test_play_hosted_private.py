"""A game against a person keeps its bots' logs to the operator, as a league's match does.

A guest plays (through the Play page's routes) against a stored bot that prints a marker to its
stderr and raises with another, as a sandboxed process. Every page and API answer about that game,
and the bot's page, shows anonymous visitors the seat's fault kinds and counts but neither marker;
the operator reads both.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from test_play_hosted import play_settings, play_through, sit
from test_private_logs import LEAKY, REASON_MARKER, STDERR_MARKER, TOKEN

from dashboard.app import create_app
from workers.bots.artifacts import pack
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, int, int]]:
    """A game against a person where the leaky bot faulted: the client (operator token set), the
    game's id and the leaky bot's id."""
    directory = tmp_path_factory.mktemp("play-private")
    engine = make_engine(f"sqlite:///{directory / 'store.db'}")
    upgrade(engine)
    source = directory / "leaky.py"
    source.write_text(LEAKY)
    artifact = pack(source, max_bytes=1 << 20)
    leaky, _ = repo.add_bot_version(
        engine, "leaky", artifact.content, artifact.sha256, artifact.entry_point, "classic"
    )
    with TestClient(create_app(engine, TOKEN, play_settings())) as client:
        sat = sit(client, [leaky])
        assert sat.status_code == 303
        state = play_through(client, sat.headers["location"])
        info = client.get(f"/api/human-matches/{state['match_id']}").json()["match"]
        (seat,) = [s for s in info["seats"] if s["bot_id"] is not None]
        yield client, state["match_id"], seat["bot_id"]
    engine.dispose()


def test_anonymous_visitors_see_the_fault_kinds_only(played: tuple[TestClient, int, int]) -> None:
    client, game, bot_id = played
    paths = [
        f"/human-matches/{game}",
        f"/human-matches/{game}?seat=0",
        f"/human-matches/{game}?seat=1",
        f"/api/human-matches/{game}",
        f"/api/human-matches/{game}/replay",
        f"/api/human-matches/{game}/replay?seat=1&step=1",
        f"/bots/{bot_id}",
        f"/api/bots/{bot_id}",
    ]
    for path in paths:
        answer = client.get(path)
        assert answer.status_code == 200, path
        assert STDERR_MARKER not in answer.text and REASON_MARKER not in answer.text, path
    seat = leaky_seat(client.get(f"/api/human-matches/{game}").json())
    assert seat["fault_kinds"].get("exception", 0) >= 1
    assert "fault_detail" not in seat
    assert "exception" in client.get(f"/human-matches/{game}").text


def test_the_operator_reads_the_reasons_and_the_stderr(played: tuple[TestClient, int, int]) -> None:
    client, game, _ = played
    bearer = {"authorization": f"Bearer {TOKEN}"}
    seat = leaky_seat(client.get(f"/api/human-matches/{game}", headers=bearer).json())
    text = str(seat["fault_detail"])
    assert REASON_MARKER in text and STDERR_MARKER in text
    page = client.get(f"/human-matches/{game}", headers=bearer).text
    assert REASON_MARKER in page and STDERR_MARKER in page
    assert (
        client.get(f"/api/human-matches/{game}", headers={"authorization": "Bearer wrong"}).status_code == 401
    )


def leaky_seat(shown: dict[str, Any]) -> dict[str, Any]:
    (seat,) = [s for s in shown["match"]["seats"] if s["bot_id"] is not None]
    return seat
