"""The 6 nimmt! board game, the Brettspiel (``board``): its rules, codec, SDK base, bots and replay."""

from referee.rules.spec import GameSpec

SPEC = GameSpec(
    name="board",
    order=1,
    variants=("games.board.rules.brettspiel:Brettspiel",),
    names=("board", "brettspiel"),
    codec="games.board.wire",
    sdk=("games.board.sdk:BrettspielBot",),
    bots={"board": {"random": "games.board.bots:RandomBot", "heuristic": "games.board.bots:HeuristicBot"}},
    replay="games.board.replay",
    envs={"board": "envs.board:env"},
    docs="docs/rules.md#6-nimmt-brettspiel-board-alias-brettspiel",
)
