"""``sixnimmt dashboard``: serve the web dashboard (an entry-point plugin of the ``sixnimmt`` command)."""

from __future__ import annotations

import argparse
import re
import socket
import sys
from pathlib import Path
from typing import Any

LIBRARIES = ("starlette", "jinja2", "uvicorn", "sqlalchemy")
"""What the dashboard imports, all from the ``server`` extra."""


def register(sub: Any) -> None:
    """Add the dashboard command to the root parser (a stand-in without the ``server`` extra),
    and ``view``, which needs only Jinja2 (the ``view`` extra)."""
    from importlib.util import find_spec

    register_view(sub)
    register_human(sub)
    missing = next((name for name in LIBRARIES if find_spec(name) is None), None)
    if missing:
        from bot_sdk.cli import stand_in

        stand_in(sub, "dashboard", missing)
        return
    p = sub.add_parser("dashboard", help="serve the web dashboard and its JSON API over the league store")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    p.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="the web server's log level (default: info)",
    )
    p.set_defaults(func=cmd_dashboard)


def register_view(sub: Any) -> None:
    """``sixnimmt view FILE…``: the replay viewer on transcript files (:mod:`dashboard.view`)."""
    from importlib.util import find_spec

    if find_spec("jinja2") is None:
        from bot_sdk.cli import stand_in

        stand_in(sub, "view", "jinja2", extra="view")
        return
    p = sub.add_parser("view", help="open transcript files in the replay viewer, in your browser")
    p.add_argument(
        "transcripts",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="transcript files (play / bot play --transcripts DIR), or directories of them",
    )
    p.add_argument("--port", type=port, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-open", action="store_true", help="print the URL, do not open a browser")
    p.add_argument("--json", action="store_true", help="print the URL and the games loaded as JSON")
    p.set_defaults(func=cmd_view)


def register_human(sub: Any) -> None:
    """``sixnimmt play --human``: the SDK's ``play`` gains a person's seat (:mod:`dashboard.table`),
    added here so the SDK never imports the dashboard; ``play`` without ``--human`` is the SDK's."""
    p = sub.choices.get("play")
    if p is None:
        return
    group = p.add_argument_group("a person at the table (--human; needs Jinja2: the view extra)")
    group.add_argument(
        "--human",
        action="store_true",
        help="you play a seat in your browser; --bots are your opponents (docs/play.md)",
    )
    group.add_argument(
        "--name",
        default="you",
        help="with --human: your name, or several comma-separated for several people at the table;"
        " each seat is human:NAME (default: %(default)s)",
    )
    group.add_argument(
        "--port", type=port, default=0, help="with --human: port on 127.0.0.1 (default: a free one)"
    )
    group.add_argument(
        "--no-open", action="store_true", help="with --human: print the URL, do not open a browser"
    )
    group.add_argument(
        "--no-sandbox",
        action="store_true",
        help="with --human: run the bots as plain processes, as bot play does (default: each in the"
        " sandbox a league runs it in)",
    )
    bots_only = p.get_default("func")

    def play(args: argparse.Namespace) -> int:
        if not args.human:
            return int(bots_only(args) or 0)
        from dashboard.table.local import cmd_play_human

        return cmd_play_human(args, confine=None if args.no_sandbox else sandboxed())

    p.set_defaults(func=play)


def sandboxed() -> Any:
    """What confines ``play --human``'s bots: :func:`workers.bots.confined.confine`, its errors
    one line each; None, said on stderr, where the league's packages cannot load (the ``server``
    extra is not installed): the bots then run as plain processes, as ``bot play`` runs them."""
    try:
        from workers.bots.confined import confine
        from workers.sandbox import SandboxError
    except ModuleNotFoundError as exc:
        from bot_sdk.cli import missing_extra

        print(
            f"sixnimmt play: the bots run as plain processes, not in the sandbox: {missing_extra(exc.name)}",
            file=sys.stderr,
        )
        return None
    from bot_sdk.loader import BotLoadError

    def confined(specs: dict[str, str], variant: str, root: Path, private: Path) -> Any:
        try:
            return confine(specs, variant, root, private)
        except SandboxError as exc:
            raise BotLoadError(
                f"the bots' sandbox cannot run here ({exc}); --no-sandbox runs them unconfined"
            ) from None
        except (ValueError, LookupError) as exc:  # what packing refuses, as bot submit would
            raise BotLoadError(str(exc)) from None

    return confined


def port(text: str) -> int:
    """A TCP port number, 0 (any free port) to 65535."""
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {value}")
    return value


def cmd_view(args: argparse.Namespace) -> int:
    from dashboard.view import cmd_view as view

    return view(args)


def cmd_dashboard(args: argparse.Namespace) -> int:
    """Bring an existing store to the newest schema (as every store command does), then serve it read only."""
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from dashboard.access import OperatorAuth, TokenTooShortError
    from dashboard.app import create_app
    from referee.settings import load
    from workers.store.engine import StoreError, StoreMissingError, describe, make_engine, open_existing
    from workers.store.engine import where as store_where
    from workers.store.migrate import is_current, upgrade

    token = load().dashboard_operator_token
    try:
        OperatorAuth(token)
    except TokenTooShortError as exc:
        print(f"sixnimmt: error: {exc}", file=sys.stderr)
        return 2
    try:
        writer = open_existing()  # a store that is not there is an error, never made empty here
        try:
            if not is_current(writer):
                upgrade(writer)
        finally:
            writer.dispose()
        engine = make_engine(read_only=True)
    except StoreMissingError as exc:
        print(f"sixnimmt: error: {exc}", file=sys.stderr)
        return 2
    except (StoreError, SQLAlchemyError, OSError) as exc:
        try:
            store = f"the store {store_where()}"
        except StoreError:  # the URL itself is the problem, and the message says so
            store = "the store"
        print(f"sixnimmt: error: cannot use {store}: {one_line(exc)}", file=sys.stderr)
        return 2
    refused = _cannot_listen(args.host, args.port)
    if refused:
        engine.dispose()
        print(f"sixnimmt: error: cannot listen on {args.host}:{args.port}: {refused}", file=sys.stderr)
        return 2
    print(f"sixnimmt dashboard: store {describe(engine)}, http://{args.host}:{args.port}/", file=sys.stderr)
    try:
        app = create_app(engine, operator_token=token)
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    finally:
        engine.dispose()
    return 0


def one_line(exc: BaseException) -> str:
    """A store error as one line: the driver's own message (it spans lines) without SQLAlchemy's
    "Background on this error" link."""
    text = str(getattr(exc, "orig", None) or exc)
    text = re.sub(r"\(Background on this error at: [^)]*\)", "", text)
    return " ".join(text.split())


def _cannot_listen(host: str, port: int) -> str | None:
    """Why the dashboard could not listen on ``host:port`` (a port in use, an address not of this
    machine), or ``None``: tried before uvicorn, whose own failure is a page of log lines."""
    try:
        where = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = where[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(address)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
