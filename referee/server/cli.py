"""``sixnimmt referee serve``: registered through the ``sixnimmt.commands`` entry point."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys

from referee import settings as settings_module


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``referee`` command group."""
    referee = sub.add_parser("referee", help="the gRPC referee service")
    group = referee.add_subparsers(title="referee commands", metavar="COMMAND")
    p = group.add_parser("serve", help="run a referee until interrupted")
    p.add_argument("--listen", help="address to listen on (default: $SIXNIMMT_REFEREE_LISTEN)")
    p.add_argument("--ready-file", help="write the bound address here once serving")
    p.add_argument(
        "--metrics-port",
        type=int,
        help="serve Prometheus /metrics on this port, 0: off (default: $SIXNIMMT_REFEREE_METRICS_PORT, 9464)",
    )
    p.add_argument(
        "--metrics-host",
        help="host for /metrics (default: $SIXNIMMT_REFEREE_METRICS_HOST, else the --listen host;"
        " 127.0.0.1 for a Unix socket)",
    )
    p.add_argument(
        "--admin-token-file",
        help="write the admin token here (mode 0600); the token is never logged",
    )
    p.add_argument(
        "--tls-cert", help="serve --listen with TLS: PEM certificate (default: $SIXNIMMT_REFEREE_TLS_CERT)"
    )
    p.add_argument("--tls-key", help="its PEM private key (default: $SIXNIMMT_REFEREE_TLS_KEY)")
    p.add_argument(
        "--also-listen",
        action="append",
        default=[],
        metavar="ADDR",
        help="a further plaintext address, e.g. unix:/path/referee.sock for the league beside a TLS port",
    )
    p.add_argument(
        "--remote-keys",
        metavar="FILE",
        help="accept these API keys from the start (a file 'sixnimmt bot key export FILE' wrote;"
        " docs/remote.md); without it remote bots get UNAVAILABLE until the league pushes the keys",
    )
    p.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    from referee import accel

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Before the driver is imported; a build that cannot be used under `require` (a SettingsError,
    # as a bad SIXNIMMT_COMPILED is) is the command's error: exit status 2, saying what to run.
    accel.enable()
    from referee.server.app import serve

    settings = settings_module.load()
    if args.metrics_port is not None:
        settings = dataclasses.replace(settings, referee_metrics_port=args.metrics_port)
    if args.metrics_host is not None:
        settings = dataclasses.replace(settings, referee_metrics_host=args.metrics_host)
    if args.tls_cert is not None:
        settings = dataclasses.replace(settings, referee_tls_cert=args.tls_cert)
    if args.tls_key is not None:
        settings = dataclasses.replace(settings, referee_tls_key=args.tls_key)
    from referee.server.app import tls_credentials
    from referee.server.remote import read_keys_file

    try:
        tls_credentials(settings)
        remote_keys = read_keys_file(args.remote_keys) if args.remote_keys else None
    except ValueError as exc:
        print(f"sixnimmt: error: {exc}", file=sys.stderr)
        return 2
    asyncio.run(
        serve(
            args.listen or settings.referee_listen,
            settings,
            args.ready_file,
            args.admin_token_file,
            tuple(args.also_listen),
            remote_keys,
        )
    )
    return 0
