"""Each game's GameSpec names its parts by lazy reference: loading the games and playing their
rules imports none of their wire, SDK, bots or dashboard parts (issue 16, item 2)."""

from __future__ import annotations

import subprocess
import sys

from referee.rules.spec import installed_games, resolve

CHECK = """
import sys
from referee.rules.registry import VARIANTS, make_variant
names = [cls.name for cls in VARIANTS]
for name in names:
    variant = make_variant(name)
    variant.pending(variant.initial_state())
upper = ("referee.wire", "referee.driver", "referee.server", "bot_sdk", "arena", "workers", "dashboard",
         "google", "grpc", "sixnimmt")
parts = (".wire", ".sdk", ".bots", ".montecarlo", ".replay")
loaded = sorted(m for m in sys.modules if m.startswith(upper)
                or (m.startswith("games.") and m.endswith(parts)))
print(names, loaded)
assert not loaded, loaded
"""


def test_loading_the_games_and_their_rules_imports_no_other_part() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    names = "['classic', 'board', 'junior-basic', 'junior-advanced', 'junior-experts', 'anniversary']"
    assert names in done.stdout


def test_every_part_a_built_in_game_names_resolves() -> None:
    games = {game.name: game for game in installed_games()}
    assert list(games)[:4] == ["classic", "board", "junior", "anniversary"]
    for game in games.values():
        assert game.variant_classes()
        for ref in (*game.sdk, *(bot for bots in game.bots.values() for bot in bots.values())):
            assert resolve(ref) is not None, ref
        for module in (game.codec, game.replay):
            if module:
                resolve(module)
        assert set(game.bots) <= {cls.name for cls in game.variant_classes()}
        # The environments are named, never imported here (envs is above the rules; tests/envs).
        assert set(game.envs) == {cls.name for cls in game.variant_classes()}
        assert all(ref.startswith("envs.") and ":" in ref for ref in game.envs.values())


def test_each_part_of_a_game_imports_first_in_a_fresh_process() -> None:
    """No part depends on another module having been imported before it (no import cycle)."""
    modules = set()
    for game in installed_games():
        refs = (*game.variants, *game.sdk, *(b for bots in game.bots.values() for b in bots.values()))
        modules |= {ref.partition(":")[0] for ref in refs} | {m for m in (game.codec, game.replay) if m}
    for module in sorted(modules):
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                              check=False)  # fmt: skip
        assert done.returncode == 0, f"{module}: {done.stderr}"
