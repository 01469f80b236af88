"""Helpers of the tests of a person at the table: a local table (``sixnimmt play --human``'s own
:class:`~dashboard.table.local.LocalTable`) served and played in this process, with a real
referee and real bot processes, and a person who plays through the seat's handler functions."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from arena.referee_thread import referee_in_thread
from dashboard.table import handlers
from dashboard.table.local import LocalTable, Played
from dashboard.table.seat import Seat
from referee.rules.transcript import Transcript, verify
from referee.settings import load as load_settings

SMALL = {"players": 3, "hand_size": 4, "hands": 1}
"""A small classic game: four cards each, one hand."""


class Running:
    """A table whose games are being played on a thread of their own."""

    def __init__(self, table: LocalTable) -> None:
        self.table = table
        self.url = table.url
        self.error: BaseException | None = None
        self.done = threading.Event()

    @property
    def seats(self) -> list[Seat]:
        return self.table.seats

    def page(self, index: int = 0) -> str:
        return self.table.seat_url(index)

    def played(self, timeout: float = 240) -> list[Played]:
        """The games, once they are all over (the test fails after ``timeout`` seconds)."""
        assert self.done.wait(timeout), f"the games did not end within {timeout:.0f} s"
        if self.error is not None:
            raise self.error
        return self.table.played


@contextlib.contextmanager
def local_table(
    bots: Sequence[str] = ("random", "heuristic"),
    *,
    people: Sequence[str] = ("human:ann",),
    variant: str = "classic",
    config: dict[str, Any] | None = None,
    games: int = 1,
    transcripts: Path | None = None,
    **settings: int,
) -> Iterator[Running]:
    """A table served on a free port of 127.0.0.1, its games played on a thread; ``settings``
    override the ``SIXNIMMT_*`` ones (``human_decision_ms=…``)."""
    names = [f"{spec}{i}" for i, spec in enumerate(bots)]
    table = LocalTable(
        variant=variant,
        config=dict(SMALL if config is None else config),
        people=list(people),
        bots=dict(zip(names, bots, strict=True)),
        games=games,
        transcripts=transcripts,
        settings=dataclasses.replace(load_settings(), **settings),
    )
    table.serve(0)
    running = Running(table)
    with tempfile.TemporaryDirectory(prefix="sixnimmt-table-") as tmp:

        def play() -> None:
            try:
                with referee_in_thread(Path(tmp)) as client:
                    table.play(client)
            except BaseException as exc:
                running.error = exc
            finally:
                running.done.set()

        thread = threading.Thread(target=play, name="test-table", daemon=True)
        thread.start()
        try:
            yield running
        finally:
            table.close()  # ends the seats' streams: a game still running ends by defaults
            thread.join(120)
        # A table closed before its seat connected once played on, a person's whole clock per
        # decision, into the tests that came after this one in its process.
        assert not thread.is_alive(), "the table's game went on after the table closed"


def play_through_handlers(seat: Seat, rng: random.Random, timeout: float = 120) -> list[Any]:
    """Play ``seat``'s game to its end as a page would, through the handler functions: wait for a
    change, choose a random option; returns the options chosen, in order."""
    chosen: list[Any] = []
    version: int | None = None
    for _ in range(10_000):
        query = {"wait": ["5"]} if version is None else {"wait": ["5"], "after": [str(version)]}
        status, kind, body, _ = handlers.state(seat, query)
        assert status == 200 and kind == "application/json", body
        state = json.loads(body)["state"]
        version = state["version"]
        decision = state["decision"]
        if decision is not None and decision["chosen"] is None:
            index = rng.randrange(len(decision["options"]))
            choice = json.dumps({"request_id": decision["request_id"], "index": index}).encode()
            status, _, body, _ = handlers.choose(seat, choice, "application/json")
            assert status == 200, body
            chosen.append(decision["options"][index])
        if state["status"] == "over" and state.get("replay"):
            return chosen
    raise AssertionError("the game did not end")


def checked(played: Played) -> Transcript:
    """The game's transcript file, verified against its seed."""
    transcript = Transcript.from_json(json.loads(played.path.read_text()))
    verify(transcript)
    return transcript


def seat_actions(transcript: Transcript, seat: int) -> list[Any]:
    """The actions of ``seat`` in the transcript, in order (tuples as lists, as the page has them)."""

    def plain(action: Any) -> Any:
        return [plain(a) for a in action] if isinstance(action, tuple | list) else action

    return [plain(action) for step in transcript.steps for s, action in step if s == seat]
