"""A bot process loads only the game it plays: a classic bot imports no Junior, board or
anniversary engine, codec or SDK module (their specs, a few lines each, are all it reads)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from refkit import ONE_HAND, Processes

from arena.matches import MatchPlan, RefereeClient

OTHERS = ("games.junior.", "games.board.", "games.anniversary.")


def _foreign(modules: list[str]) -> list[str]:
    return [name for name in modules if name.startswith(OTHERS)]


def test_a_classic_bot_process_imports_only_classic(
    referee: RefereeClient, bots: Processes, tmp_path: Path
) -> None:
    report = tmp_path / "modules.txt"
    ids, tokens = referee.create_matches("classic", ONE_HAND, [MatchPlan(("m", "x", "y", "z"), 1)])
    bots.sdk("m", ":Modules", tokens["m"], BOT_MODULES=str(report))
    for name in "xyz":
        bots.sdk(name, "random", tokens[name])
    assert referee.result(ids[0], timeout=60).status == "finished"
    assert bots.wait("m") == 0
    modules = report.read_text().split()
    assert "games.classic.wire" in modules and "games.classic.rules.classic" in modules
    assert _foreign(modules) == []


def test_loading_a_classic_reference_bot_imports_no_other_game() -> None:
    code = (
        "import sys, bot_sdk.run\n"
        "from bot_sdk.loader import load_bot\n"
        "from referee import wire\n"
        "load_bot('heuristic', 'classic'); load_bot('mc', 'take6'); wire.codec('classic')\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('games'))))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    out = run.stdout.split()
    assert "games.classic.montecarlo" in out
    assert _foreign(out) == []
    # Another game's bot loads its own game, and every game still loads when all are asked for.
    code = (
        "import sys\n"
        "from bot_sdk.loader import load_bot\n"
        "from referee.rules.registry import VARIANTS\n"
        "load_bot('random', 'brettspiel')\n"
        "assert 'games.junior.rules.junior' not in sys.modules\n"
        "print(len(VARIANTS), 'games.junior.rules.junior' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[1] == "True" and int(out.split()[0]) >= 6


def test_every_spec_declares_the_names_of_its_variants() -> None:
    """``GameSpec.names`` is what finds a game without importing it: it must be its engines' names."""
    from referee.rules.spec import installed_games

    built_in = {"classic", "junior", "board", "anniversary"}
    assert built_in <= {game.name for game in installed_games() if game.names}
    for game in installed_games():
        if not game.names:
            continue  # a game without names is found by importing the engines (a plugin may do so)
        declared = {name for cls in game.variant_classes() for name in (cls.name, *cls.aliases)}
        assert set(game.names) == declared, game.name
