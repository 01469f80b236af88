"""``sixnimmt account create|list|key …`` (participant accounts, docs/api.md), and the older
``sixnimmt bot account create|list`` and ``sixnimmt bot key create|revoke|export|list``, which
stay: an account is one kind, whether its bots play from its author's machine or are submitted."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.clikit import tables
from referee.clikit.options import json_flag

ACCOUNT_COMMANDS = ("account", "key")


def register(bots: Any, guard: Callable[..., Any]) -> None:
    """Add the ``account`` and ``key`` groups to the ``bot`` command group (the top-level
    ``account`` group is :func:`register_accounts`)."""
    account = bots.add_parser("account", help="bot accounts: bots that play from their authors' machines")
    group = account.add_subparsers(title="account commands", metavar="COMMAND")
    p = group.add_parser("create", help="create a bot account (it enters leagues as remote:NAME)")
    p.add_argument("name")
    json_flag(p)
    p.set_defaults(func=guard(cmd_account_create, creates=True))
    p = group.add_parser("list", help="every bot account and its keys")
    json_flag(p)
    p.set_defaults(func=guard(cmd_account_list))

    key = bots.add_parser("key", help="a bot account's API keys (shown once, stored hashed, revocable)")
    group = key.add_subparsers(title="key commands", metavar="COMMAND")
    p = group.add_parser("create", help="a new API key for an account; the key is shown once")
    p.add_argument("account")
    p.add_argument("--max-connections", type=int, default=2, help="connections at once (default 2)")
    p.add_argument("--max-matches", type=int, default=64, help="matches at once (default 64)")
    json_flag(p)
    p.set_defaults(func=guard(cmd_key_create))
    p = group.add_parser("revoke", help="revoke a key: the referee refuses it and closes its connections")
    p.add_argument("key_id", help="the key's id (or the whole key)")
    json_flag(p)
    p.set_defaults(func=guard(cmd_key_revoke))
    p = group.add_parser(
        "export",
        help="write the keys that are not revoked (hashes only) to FILE for 'referee serve --remote-keys'",
    )
    p.add_argument("file", help="the key file to write (replaced whole)")
    json_flag(p)
    p.set_defaults(func=guard(cmd_key_export))
    p = group.add_parser("list", help="the keys (of one account), revoked ones too; never the keys")
    p.add_argument("account", nargs="?")
    json_flag(p)
    p.set_defaults(func=guard(cmd_key_list))


def register_accounts(sub: Any, guard: Callable[..., Any]) -> None:
    """Add the top-level ``account`` group: participant accounts and their API keys."""
    account = sub.add_parser(
        "account", help="participant accounts: they own bots and submit them with API keys"
    )
    group = account.add_subparsers(title="account commands", metavar="COMMAND")
    p = group.add_parser("create", help="create an account (it also plays as remote:NAME from its machine)")
    p.add_argument("name")
    p.add_argument("--display-name", help="the name its pages show (default: NAME)")
    json_flag(p)
    p.set_defaults(func=guard(cmd_account_create, creates=True))
    p = group.add_parser("list", help="every account: its keys and the bots it owns")
    json_flag(p)
    p.set_defaults(func=guard(cmd_participant_list))
    key = group.add_parser("key", help="an account's API keys (shown once, stored hashed, revocable)")
    keys = key.add_subparsers(title="key commands", metavar="COMMAND")
    p = keys.add_parser("create", help="a new API key for an account; the key is shown once")
    p.add_argument("account")
    p.add_argument(
        "--max-connections", type=int, default=2, help="remote bot connections at once (default 2)"
    )
    p.add_argument("--max-matches", type=int, default=64, help="remote bot matches at once (default 64)")
    json_flag(p)
    p.set_defaults(func=guard(cmd_key_create))
    p = keys.add_parser("revoke", help="revoke a key: the API and the referee refuse it")
    p.add_argument("key_id", help="the key's id (or the whole key)")
    json_flag(p)
    p.set_defaults(func=guard(cmd_key_revoke))
    p = keys.add_parser("list", help="the keys (of one account), revoked ones too; never the keys")
    p.add_argument("account", nargs="?")
    json_flag(p)
    p.set_defaults(func=guard(cmd_key_list))


def cmd_participant_list(args: argparse.Namespace, engine: Any) -> int:
    # The bots' accounts load SQLAlchemy (and gRPC): when a command runs, not at start-up.
    from workers.bots import accounts

    rows = accounts.list_participants(engine)
    if args.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no accounts")
        return 0
    tables.print_table(
        ["account", "display name", tables.right("bots"), tables.right("keys"), tables.right("revoked")],
        [[r["account"], r["display_name"], r["bots"], r["keys"], r["revoked"]] for r in rows],
    )
    return 0


def cmd_account_create(args: argparse.Namespace, engine: Any) -> int:
    # The bots' accounts load SQLAlchemy (and gRPC): when a command runs, not at start-up.
    from workers.bots import accounts

    info = accounts.create_account(engine, args.name, getattr(args, "display_name", None))
    if args.json:
        print(json.dumps(info))
    else:
        print(
            f"bot account {info['account']} created: it enters leagues as remote:{info['account']}"
            f" (standings: {info['bot']}); make it a key with 'sixnimmt bot key create {info['account']}'"
        )
    return 0


def cmd_account_list(args: argparse.Namespace, engine: Any) -> int:
    # The bots' accounts load SQLAlchemy (and gRPC): when a command runs, not at start-up.
    from workers.bots import accounts

    rows = accounts.list_accounts(engine)
    if args.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no bot accounts")
        return 0
    tables.print_table(
        ["account", "bot", tables.right("keys"), tables.right("revoked")],
        [[r["account"], r["bot"], r["keys"], r["revoked"]] for r in rows],
    )
    return 0


def cmd_key_create(args: argparse.Namespace, engine: Any) -> int:
    # The bots' accounts load SQLAlchemy (and gRPC): when a command runs, not at start-up.
    from workers.bots import accounts
    from workers.bots import connected as remote

    key, secret = accounts.create_key(
        engine, args.account, max_connections=args.max_connections, max_matches=args.max_matches
    )
    pushed = remote.push_keys_if_configured(engine)
    if args.json:
        print(json.dumps({**key.to_json(), "key": secret, "referee": pushed}))
        return 0
    print(secret)
    print(
        f"API key {key.key_id} of {key.account} (at most {key.max_connections} connections and"
        f" {key.max_matches} matches at once). It is shown only now: the store keeps its hash.",
        file=sys.stderr,
    )
    _say_pushed(pushed)
    return 0


def cmd_key_revoke(args: argparse.Namespace, engine: Any) -> int:
    # The bots' accounts load SQLAlchemy (and gRPC): when a command runs, not at start-up.
    from workers.bots import accounts
    from workers.bots import connected as remote

    key = accounts.revoke_key(engine, args.key_id)
    pushed = remote.push_keys_if_configured(engine)
    if args.json:
        print(json.dumps({**key.to_json(), "referee": pushed}))
        return 0
    print(f"API key {key.key_id} of {key.account} revoked")
    _say_pushed(pushed)
    return 0


def cmd_key_export(args: argparse.Namespace, engine: Any) -> int:
    """Write the referee's key set (``SetRemoteKeys``'s: hashes, never keys) to a file, whole.

    ``sixnimmt referee serve --remote-keys FILE`` reads it before it serves, so a referee that
    starts after keys were made accepts them at once (docs/remote.md, "Keys at the referee's
    start"). The file is replaced atomically: a referee starting meanwhile reads the old set or
    the new one, never half of one.
    """
    # The bots' accounts load SQLAlchemy (and gRPC): when a command runs, not at start-up.
    from workers.bots import accounts

    keys, generation = accounts.referee_key_set(engine)
    target = Path(args.file)
    text = json.dumps({"generation": generation, "keys": keys}, indent=1) + "\n"
    try:
        fd, temporary = tempfile.mkstemp(dir=target.parent or Path("."), prefix=f".{target.name}.")
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(temporary, 0o644)  # hashes of random keys: the referee's user may read them
        os.replace(temporary, target)
    except OSError as exc:
        print(f"sixnimmt: error: cannot write {exc.filename or target}: {exc.strerror}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"file": str(target), "keys": len(keys), "generation": generation}))
    else:
        noun = "API key" if len(keys) == 1 else "API keys"
        print(f"{len(keys)} {noun} (generation {generation}) written to {target}")
    return 0


def _say_pushed(pushed: str | None) -> None:
    if pushed:
        print(f"sixnimmt: {pushed}", file=sys.stderr)


def cmd_key_list(args: argparse.Namespace, engine: Any) -> int:
    # The bots' accounts load SQLAlchemy (and gRPC): when a command runs, not at start-up.
    from workers.bots import accounts

    keys = accounts.list_keys(engine, args.account)
    if args.json:
        print(json.dumps([k.to_json() for k in keys]))
        return 0
    if not keys:
        print("no API keys")
        return 0
    tables.print_table(
        ["key", "account", tables.right("connections"), tables.right("matches"), "created", "revoked"],
        [
            [
                k.key_id,
                k.account,
                k.max_connections,
                k.max_matches,
                f"{k.created_at:%Y-%m-%d %H:%M}" if k.created_at else "",
                f"{k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "",
            ]
            for k in keys
        ],
    )
    return 0
