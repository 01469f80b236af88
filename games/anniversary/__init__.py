"""The 6 nimmt! 25th-anniversary variant (``anniversary``): its parts."""

from referee.rules.spec import GameSpec

SPEC = GameSpec(
    name="anniversary",
    order=3,
    variants=("games.anniversary.rules.anniversary:Anniversary",),
    names=("anniversary", "25th-anniversary", "jubilaeum"),
    codec="games.anniversary.wire",
    sdk=("games.anniversary.sdk:AnniversaryBot",),
    bots={
        "anniversary": {
            "random": "games.anniversary.bots:RandomBot",
            "heuristic": "games.anniversary.bots:HeuristicBot",
        }
    },
    replay="games.anniversary.replay",
    envs={"anniversary": "envs.anniversary:env"},
    docs="docs/rules.md#6-nimmt-25th-anniversary-variant-anniversary-aliases-25th-anniversary-jubilaeum",
)
