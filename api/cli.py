"""``sixnimmt api serve`` (an entry-point plugin of the ``sixnimmt`` command)."""

from __future__ import annotations

import argparse
import logging
import sys
from importlib.util import find_spec
from typing import Any

LIBRARIES = ("fastapi", "uvicorn", "sqlalchemy")
"""What the API imports, all from the ``server`` extra."""


def register(sub: Any) -> None:
    """Add ``api serve`` (a stand-in without the ``server`` extra)."""
    from bot_sdk.cli import stand_in

    missing = next((name for name in LIBRARIES if find_spec(name) is None), None)
    if missing:
        stand_in(sub, "api", missing)
        return
    api = sub.add_parser("api", help="the platform's HTTP API: participants submit bots with API keys")
    group = api.add_subparsers(title="api commands", metavar="COMMAND")
    p = group.add_parser("serve", help="serve the API over the store (docs/api.md)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8090, help="port to listen on (default: 8090)")
    p.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="the web server's log level (default: info)",
    )
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """Bring the store to the newest schema (it is created if it is not there), then serve the API."""
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from api.app import create_app
    from referee.settings import load
    from workers.store.engine import StoreError, describe, make_engine
    from workers.store.migrate import is_current, upgrade

    settings = load()
    try:
        engine = make_engine()
        if not is_current(engine):
            upgrade(engine)
    except (StoreError, SQLAlchemyError, OSError) as exc:
        reason = " ".join(str(getattr(exc, "orig", None) or exc).split())  # the driver's spans lines
        print(f"sixnimmt: error: cannot use the store: {reason}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    print(f"sixnimmt api: store {describe(engine)}, http://{args.host}:{args.port}/docs", file=sys.stderr)
    from api.limits import redis_url

    checks = (
        "queued to the workers (SIXNIMMT_BROKER_URL)"
        if settings.broker_url
        else f"in this process ({settings.api_validation_workers} at once)"
    )
    limits = "in Redis, shared by replicas" if redis_url(settings) else "per process"
    print(f"sixnimmt api: validations {checks}; rate limits {limits}", file=sys.stderr)
    try:
        app = create_app(engine, settings)
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    finally:
        engine.dispose()
    return 0
