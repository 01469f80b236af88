"""``python -m bot_sdk.run SPEC``: the bot process. Connects from SIXNIMMT_REFEREE / SIXNIMMT_TOKEN."""

from __future__ import annotations

import argparse
import json
import sys

from bot_sdk.loader import BotLoadError, load_bot, spec_label
from bot_sdk.runner import RunnerError, run
from referee.settings import load as load_settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot_sdk.run", description=__doc__)
    parser.add_argument("spec", help="a reference bot name or mybot.py[:Class]")
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--referee", help="referee address (default: $SIXNIMMT_REFEREE)")
    parser.add_argument("--token", help="entrant token(s), comma-separated (default: $SIXNIMMT_TOKEN)")
    parser.add_argument("--name", help="name sent in Hello")
    parser.add_argument("--json", action="store_true", help="print a JSON summary when done")
    args = parser.parse_args(argv)
    tokens = (args.token or load_settings().token).split(",")
    games = decisions = errors = 0
    try:
        cls = load_bot(args.spec, args.variant)
        # Several comma-separated tokens are played one after another, one stream each.
        for token in tokens:
            summary = run(
                cls, referee=args.referee, token=token.strip(), name=args.name or spec_label(args.spec)
            )
            games, decisions, errors = (
                games + summary.games,
                decisions + summary.decisions,
                errors + summary.errors,
            )
    except (BotLoadError, RunnerError) as exc:
        print(f"bot: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"games": games, "decisions": decisions, "errors": errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
