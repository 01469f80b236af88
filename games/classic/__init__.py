"""Classic 6 nimmt! (``classic``): its rules, codec, SDK base, reference bots and replay board."""

from referee.rules.spec import GameSpec

SPEC = GameSpec(
    name="classic",
    order=0,
    variants=("games.classic.rules.classic:Classic",),
    names=("classic", "6nimmt", "take6"),
    codec="games.classic.wire",
    sdk=("games.classic.sdk:ClassicBot",),
    bots={
        "classic": {
            "random": "games.classic.bots:RandomBot",
            "lowest": "games.classic.bots:LowestBot",
            "highest": "games.classic.bots:HighestBot",
            "heuristic": "games.classic.bots:HeuristicBot",
            "mc": "games.classic.montecarlo:MonteCarloBot",
        }
    },
    replay="games.classic.replay",
    score_unit="bull heads",
    check_config={"hands": 1, "target": None},
    default_field="random,heuristic,mc",
    envs={"classic": "envs.classic:env"},
    docs="docs/rules.md#classic-6-nimmt-classic-aliases-6nimmt-take6",
)
