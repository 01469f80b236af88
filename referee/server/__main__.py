"""``python -m referee.server serve …``: ``sixnimmt referee serve`` without the rest of the CLI.

The same command and options (:mod:`referee.server.cli`). The full ``sixnimmt`` parser imports
every command group, the league's store (SQLAlchemy) among them: 0.2 s of every referee process
that :func:`arena.remote.local_referee` starts (``bot play``, ``bot check``, a submission's
check, the tests), for nothing the referee uses.
"""

from __future__ import annotations

import argparse
import sys

from referee.server import cli
from referee.settings import SettingsError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m referee.server", description="The gRPC referee service.")
    cli.register_commands(parser.add_subparsers(title="commands", metavar="COMMAND"))
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (SettingsError, OSError) as exc:  # a bad setting, an address taken: one line, as sixnimmt says it
        print(f"sixnimmt: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sixnimmt: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
