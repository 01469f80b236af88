"""6 nimmt! Junior (``junior-basic``, ``junior-advanced``, ``junior-experts``): its parts."""

from referee.rules.spec import GameSpec

SPEC = GameSpec(
    name="junior",
    order=2,
    variants=(
        "games.junior.rules.junior:JuniorBasic",
        "games.junior.rules.junior:JuniorAdvanced",
        "games.junior.rules.junior:JuniorExperts",
    ),
    names=("junior-basic", "junior", "junior-advanced", "junior-experts"),
    codec="games.junior.wire",
    sdk=(
        "games.junior.sdk:JuniorBasicBot",
        "games.junior.sdk:JuniorAdvancedBot",
        "games.junior.sdk:JuniorExpertsBot",
    ),
    bots={
        "junior-basic": {
            "random": "games.junior.bots:RandomBasicBot",
            "heuristic": "games.junior.bots:HeuristicBasicBot",
        },
        "junior-advanced": {
            "random": "games.junior.bots:RandomAdvancedBot",
            "heuristic": "games.junior.bots:HeuristicAdvancedBot",
        },
        "junior-experts": {
            "random": "games.junior.bots:RandomExpertsBot",
            "heuristic": "games.junior.bots:HeuristicExpertsBot",
        },
    },
    replay="games.junior.replay",
    envs={
        "junior-basic": "envs.junior:basic_env",
        "junior-advanced": "envs.junior:advanced_env",
        "junior-experts": "envs.junior:experts_env",
    },
    docs="docs/rules.md#6-nimmt-junior-junior-basic-alias-junior-junior-advanced-junior-experts",
)
