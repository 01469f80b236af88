"""A game from another pip package plugs in as the built-in games do (issue 16, item 3).

A toy game (a few lines of rules, its own .proto compiled here with grpc_tools, a codec declared
in the ``plugin`` field, a random bot) is written into a temporary directory with a
``toygame-0.1.dist-info/`` holding its ``sixnimmt.games`` entry point, exactly what pip installs.
On ``sys.path`` (or ``PYTHONPATH``), ``importlib.metadata`` finds it: it plays in-process and over
a real referee with bots as processes, and ``sixnimmt variants`` lists it. A broken game says so
in one line and the others still load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from grpc_tools import protoc

from referee.rules import spec

PROTO = """
syntax = "proto3";
package toygame.v1;
message ToyView {
  uint32 seat = 1;
  uint32 players = 2;
  uint32 round = 3;
  repeated int32 scores = 4;
}
message Picked { uint32 round = 1; repeated int32 picks = 2; }
message Ended { repeated int32 scores = 1; }
message ToyEvent { oneof event { Picked picked = 1; Ended ended = 2; } }
"""

RULES = '''
"""Each round every seat picks 1, 2 or 3 at once; a pick no other seat made scores itself."""
from __future__ import annotations
from dataclasses import dataclass
from typing import Any, NamedTuple
from referee.rules.config import bounded
from referee.rules.core import Decision, DecisionKind, Outcome, Termination, Variant, shared_ranks

@dataclass(frozen=True)
class ToyConfig:
    players: int = bounded(2, 2, 4, "seats")
    rounds: int = bounded(3, 1, 9, "rounds")

class ToyState(NamedTuple):
    round: int
    scores: tuple[int, ...]

@dataclass(frozen=True)
class ToyView:
    seat: int
    players: int
    round: int
    scores: tuple[int, ...]
    decision: Decision | None = None
    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "players": self.players, "round": self.round, "scores": list(self.scores)}

class Picked(NamedTuple):
    round: int
    picks: tuple[int, ...]

class Ended(NamedTuple):
    scores: tuple[int, ...]

class Toy(Variant[ToyState, ToyConfig]):
    name = "toy"
    config_type = ToyConfig
    higher_is_better = True
    def initial_state(self) -> ToyState:
        return ToyState(0, (0,) * self.players)
    def pending(self, state: ToyState) -> tuple[Decision, ...]:
        if state.round >= self.config.rounds:
            return ()
        return tuple(Decision(s, DecisionKind.CARD, (1, 2, 3)) for s in range(self.players))
    def apply(self, state: ToyState, actions: Any) -> tuple[ToyState, tuple[Any, ...]]:
        picks = tuple(int(actions[s]) for s in range(self.players))
        scores = tuple(t + (p if picks.count(p) == 1 else 0) for t, p in zip(state.scores, picks))
        after = ToyState(state.round + 1, scores)
        events: tuple[Any, ...] = (Picked(state.round, picks),)
        return after, events + ((Ended(scores),) if after.round == self.config.rounds else ())
    def sample_chance(self, state: ToyState, chance: Any) -> Any:
        raise NotImplementedError("the toy game has no chance")
    def view(self, state: ToyState, seat: int) -> ToyView:
        decision = next((d for d in self.pending(state) if d.seat == seat), None)
        return ToyView(seat, self.players, state.round, state.scores, decision)
    def outcome(self, state: ToyState) -> Outcome | None:
        if state.round < self.config.rounds:
            return None
        ranks = shared_ranks(state.scores, higher_is_better=True)
        return Outcome(state.scores, ranks, Termination.HANDS_PLAYED)
'''

WIRE = """
from referee.wire import PLUGIN, Codec, register
from toygame import toy_pb2
from toygame.rules import Ended, Picked, ToyView

register(Codec(("toy",), PLUGIN, ToyView, (Picked, Ended),
               view_message=toy_pb2.ToyView, event_message=toy_pb2.ToyEvent))
"""

BOTS = """
from typing import ClassVar
from bot_sdk.bot import Bot

class RandomBot(Bot):
    variants: ClassVar[tuple[str, ...]] = ("toy",)
    def decide(self, view):
        return self.rng.choice(view.decision.options)
"""

SPEC = """
from referee.rules.spec import GameSpec
SPEC = GameSpec(name="toy", variants=("toygame.rules:Toy",), codec="toygame.wire",
                sdk=("bot_sdk.bot:Bot",), bots={"toy": {"random": "toygame.bots:RandomBot"}})
"""


def _dist(site: Path, name: str, entry: str) -> None:
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[sixnimmt.games]\n{entry}\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory as pip leaves site-packages: the toy game's package and its dist-info."""
    site = tmp_path_factory.mktemp("site")
    package = site / "toygame"
    package.mkdir()
    (package / "toy.proto").write_text(PROTO)
    assert protoc.main(["protoc", f"-I{site}", f"--python_out={site}", "toygame/toy.proto"]) == 0
    for module, text in {"__init__": SPEC, "rules": RULES, "wire": WIRE, "bots": BOTS}.items():
        (package / f"{module}.py").write_text(textwrap.dedent(text))
    _dist(site, "toygame", "toy = toygame:SPEC")
    return site


@pytest.fixture
def installed(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The toy game installed in this process (and, through PYTHONPATH, in its children)."""
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    spec.reload_games()
    yield site
    spec.reload_games()


def test_the_plugin_game_is_found_through_its_entry_point(installed: Path) -> None:
    from bot_sdk.bots import REFERENCE_BOTS
    from referee.rules.registry import VARIANTS, make_variant

    assert "toy" in {game.name for game in spec.installed_games()}
    assert [cls.name for cls in VARIANTS][-1] == "toy"  # after the built-in games
    assert {"classic", "board", "junior-basic", "anniversary"} <= {cls.name for cls in VARIANTS}
    assert REFERENCE_BOTS["toy"] == {"random": "toygame.bots:RandomBot"}
    assert make_variant("toy", {"rounds": 4}).config.rounds == 4


def test_the_plugin_game_plays_in_process_and_its_messages_cross_the_wire(installed: Path) -> None:
    from bot_sdk.bots import reference_bot
    from bot_sdk.play import play_match
    from referee import wire
    from referee.rules.registry import make_variant
    from referee.rules.transcript import verify
    from sixnimmt.v1 import game_pb2

    variant = make_variant("toy", {"players": 3})
    result = play_match(variant, [reference_bot("toy", "random")] * 3, seed=7)
    assert verify(result.transcript) == result.outcome
    # The codec packs the toy's own messages into the open field; the SDK reads them back.
    state = variant.initial_state()
    (decision, *_) = variant.pending(state)
    request = game_pb2.DecisionRequest()
    wire.request_to_wire(1, "m", "toy", decision, variant.view(state, 0), 1000, 5000, request)
    assert request.WhichOneof("view") is None and request.plugin.type_url.endswith("toygame.v1.ToyView")
    request = game_pb2.DecisionRequest.FromString(request.SerializeToString())
    assert wire.view_from_wire(request) == variant.view(state, 0)
    _, events = variant.apply(state, {0: 1, 1: 1, 2: 3})
    messages: list[game_pb2.MatchEvent] = []
    wire.events_to_wire("toy", "m", 1, events, messages)
    assert [wire.event_from_wire(game_pb2.MatchEvent.FromString(m.SerializeToString())) for m in messages] \
        == list(events)  # fmt: skip


def test_the_plugin_game_plays_over_the_referee_with_bots_as_processes(installed: Path) -> None:
    from arena.matches import MatchPlan, play_matches
    from referee.rules.transcript import Transcript, verify

    plans = [MatchPlan(("a", "b"), 3), MatchPlan(("b", "a"), 4)]
    run = play_matches({"a": "random", "b": "random"}, plans, variant="toy", config={"rounds": 5})
    assert run.exit_codes == {"a": 0, "b": 0}, run.exits
    for match in run.matches:
        assert match.status == "finished", match.error
        assert all(s.faults == {} and s.defaulted == 0 for s in match.seats)
        transcript = Transcript.from_json(json.loads(json.dumps(match.transcript)))
        verify(transcript)
        assert transcript.variant == "toy" and transcript.digest() == match.digest


def _sixnimmt(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "bot_sdk.cli", *args], env=env, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip


def test_sixnimmt_variants_lists_the_plugin_game(site: Path) -> None:
    done = _sixnimmt(site, "variants", "--json")
    assert done.returncode == 0, done.stderr
    names = [v["name"] for v in json.loads(done.stdout)]
    assert names[-1] == "toy" and "classic" in names
    assert "toy" in _sixnimmt(site, "variants").stdout


def test_a_game_that_fails_to_load_says_so_in_one_line_and_the_others_load(
    site: Path, tmp_path: Path
) -> None:
    _dist(tmp_path, "brokengame", "broken = brokengame_missing:SPEC")
    env_site = Path(os.pathsep.join([str(tmp_path), str(site)]))
    done = _sixnimmt(env_site, "variants", "--json")
    assert done.returncode == 0, done.stderr
    names = [v["name"] for v in json.loads(done.stdout)]
    assert "toy" in names and "classic" in names
    lines = [line for line in done.stderr.splitlines() if "broken" in line]
    assert len(lines) == 1 and "game 'broken' failed to load" in lines[0], done.stderr
