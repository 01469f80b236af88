"""Helpers for the referee tests: bot processes, and reading a match back from its transcript."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.matches import BotProcess, FinishedMatch, RefereeClient, spawn_bot
from arena.tournament import LOCAL_SEAT_KEY
from bot_sdk.play import play_match
from games.classic.bots import RandomBot
from referee.rules.core import Action
from referee.rules.registry import make_variant
from referee.rules.transcript import Transcript
from sixnimmt.v1 import referee_pb2

BOTS = Path(__file__).resolve().parent / "bots"
RAWBOT = BOTS / "rawbot.py"
SDKBOTS = BOTS / "sdkbots.py"

ONE_HAND = {"hands": 1, "target": None}
TWO_HANDS = {"hands": 2, "target": None}


class Processes:
    """Bot processes started by one test; :meth:`close` kills whatever still runs."""

    def __init__(self, client: RefereeClient) -> None:
        self.client = client
        self.started: dict[str, subprocess.Popen[bytes] | BotProcess] = {}

    def sdk(self, name: str, spec: str, token: str, **env: str) -> BotProcess:
        """A bot run by the SDK (``python -m bot_sdk.run spec``); ``:Name`` names a class of sdkbots.py."""
        spec = spec if not spec.startswith(":") else f"{SDKBOTS}{spec}"
        address = self.client.address
        process = spawn_bot(spec, referee=address, token=token, variant="classic", name=name, env=env)
        self.started[name] = process
        return process

    def raw(self, name: str, mode: str, token: str, *options: str) -> subprocess.Popen[bytes]:
        """A :mod:`rawbot` process; its stderr is kept for :meth:`stderr`."""
        process = subprocess.Popen(
            # "--": a token may start with a dash
            [sys.executable, str(RAWBOT), *options, "--", mode, self.client.address, token],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.started[name] = process
        return process

    def wait(self, name: str, timeout: float = 30) -> int:
        """The exit status of a bot process (which must end within ``timeout``)."""
        return self.started[name].wait(timeout)

    def stderr(self, name: str) -> str:
        """What a rawbot process wrote to stderr, once it has ended."""
        process = self.started[name]
        process.wait(30)
        if isinstance(process, BotProcess):
            return process.stderr_tail()
        assert process.stderr is not None
        return process.stderr.read().decode(errors="replace")

    def close(self) -> None:
        for process in self.started.values():
            if process.poll() is None:
                process.kill()
            process.wait()
            if isinstance(process, subprocess.Popen) and process.stderr is not None:
                process.stderr.close()


@dataclass(frozen=True, slots=True)
class SeatDecision:
    """One decision of one seat, replayed from a transcript."""

    kind: str
    options: tuple[Action, ...]
    action: Action
    default: Action


def transcript_of(match: FinishedMatch) -> Transcript:
    return Transcript.from_json(match.transcript)


def seat_decisions(match: FinishedMatch, seat: int) -> list[SeatDecision]:
    """Every decision ``seat`` faced in the match, with the action taken and the default one."""
    transcript = transcript_of(match)
    variant = make_variant(transcript.variant, transcript.config)
    state = variant.initial_state()
    out = []
    for step in transcript.steps:
        actions = dict(step)
        if seat in actions:
            (decision,) = [d for d in variant.pending(state) if d.seat == seat]
            default = variant.default_action(state, decision)
            out.append(SeatDecision(decision.kind.value, decision.options, actions[seat], default))
        state, _ = variant.apply(state, actions)
    return out


def marks(decisions: Sequence[SeatDecision]) -> str:
    """One letter per decision: ``o`` the bot's own answer (its last option), ``d`` the default,
    ``=`` the two are the same action, ``x`` neither (a bug)."""
    letters = []
    for d in decisions:
        own = d.options[-1]
        if own == d.default:
            letters.append("=")
        elif d.action == own:
            letters.append("o")
        elif d.action == d.default:
            letters.append("d")
        else:
            letters.append("x")
    return "".join(letters)


def random_digest(config: Mapping[str, Any], seed: int, players: int = 4) -> str:
    """The digest of a match of random bots played in this process: what the referee must match."""
    variant = make_variant("classic", {**config, "players": players})
    return play_match(variant, [RandomBot] * players, seed, seat_key=LOCAL_SEAT_KEY).transcript.digest()


def read_log(path: Path) -> Iterator[referee_pb2.RefereeMessage]:
    """The messages a rawbot wrote with ``--log``, in order."""
    data = path.read_bytes()
    at = 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        yield referee_pb2.RefereeMessage.FromString(data[at + 4 : at + 4 + size])
        at += 4 + size
