"""``sixnimmt bot connect`` says each game as it ends: one line (or one JSON object) a game.

A remote bot plays for hours; its author sees its progress as the games end, not only a total when
it stops. Real processes: ``referee serve``, ``bot connect`` as a subprocess, matches made with the
admin call as a league's block makes them.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO

from remotekit import Site
from testkit import wait_for

from arena.matches import BotProcess, MatchPlan, spawn_bot

SHORT = {"players": 2, "hands": 1, "target": None}
FUMBLING = str(Path(__file__).parent / "bots" / "fumbling.py")


def _house(site: Site, account: str, seeds: list[int]) -> tuple[list[str], BotProcess]:
    """The matches, with the house's seats played by a reference bot on the Unix socket."""
    client = site.admin()
    try:
        ids, tokens = client.create_matches(
            "classic", SHORT, [MatchPlan(("x", "house"), seed) for seed in seeds], remote={"x": account}
        )
    finally:
        client.close()
    house = spawn_bot(
        "lowest", referee=site.referee.socket, token=tokens["house"], variant="classic", name="house"
    )
    return ids, house


def _lines(stream: IO[str] | None, count: int) -> list[str]:
    """The next ``count`` lines of ``stream`` as they are printed (a thread reads them)."""
    assert stream is not None
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(stream.readline() for _ in range(count)), daemon=True
    )
    reader.start()
    wait_for(lambda: not reader.is_alive(), 120, f"{count} lines of bot connect")
    return lines


def test_bot_connect_prints_a_line_per_game_with_its_result_and_faults(site: Site) -> None:
    key = site.account("progress")
    bot = site.connect(key, "--server", site.referee.public, bot=FUMBLING)
    bot.wait_line("connected to")
    ids, house = _house(site, "progress", [1, 2])
    lines = _lines(bot.process.stdout, len(ids))  # each printed as its game ends, while it plays on
    assert bot.process.poll() is None
    for line in lines:
        assert line.startswith("game ") and "(classic) seat " in line, lines
        assert "score " in line and "rank " in line and " of 2" in line, line
        assert "x, house" in line or "house, x" in line, line
        assert line.rstrip().endswith("faults: exception 1"), line
    assert sorted(line.split()[1] for line in lines) == sorted(ids)
    assert house.wait(60) == 0
    bot.process.terminate()
    assert bot.ended() == 0
    assert "2 games over 1 connections; 2 errors" in bot.process.stdout.read()  # type: ignore[union-attr]


def test_bot_connect_json_prints_one_object_per_game(site: Site) -> None:
    key = site.account("progressjson")
    bot = site.connect(key, "--server", site.referee.public, "--json", bot="lowest")
    bot.wait_line("connected to")
    ids, house = _house(site, "progressjson", [3])
    game = json.loads(_lines(bot.process.stdout, 1)[0])
    assert game["match_id"] == ids[0] and game["variant"] == "classic"
    assert game["seats"] == ["x", "house"] and game["seat"] == 0
    assert len(game["scores"]) == 2 and sorted(game["ranks"]) in ([1, 1], [1, 2])
    assert game["faults"] == {} and game["termination"]
    assert house.wait(60) == 0
    bot.process.terminate()
    assert bot.ended() == 0
    summary = json.loads(bot.process.stdout.read())  # type: ignore[union-attr]
    assert summary["connections"] == summary["games"] == 1 and summary["errors"] == 0
