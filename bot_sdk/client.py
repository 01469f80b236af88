"""The participant's side of the platform's API (docs/api.md): ``sixnimmt bot submit PATH --server
URL``, ``bot status``, ``bot logs``, ``bot activate`` and ``bot deactivate``.

The SDK alone, standard library only (``urllib``): a bot author's ``pip install sixnimmt-arena``
without extras runs it. The key comes from ``--key`` or ``SIXNIMMT_API_KEY``. Every error of the
server is one line and exit status 2 (``sixnimmt: error: 429 Too Many Requests: daily submission
quota of 5 used; next at 00:00 UTC``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import stat
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any

from referee import settings as settings_module
from referee.clikit import tables
from referee.clikit.options import json_flag

SKIPPED = {"__pycache__", ".git", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", "node_modules"}
"""What packing leaves out of a directory (the platform's ``bot submit`` leaves out the same)."""
TIMEOUT_S = 60.0


class ApiError(RuntimeError):
    """A request the server refused (its status and message), or a server that could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Client:
    """Requests to the API at ``server`` with the key ``key``."""

    def __init__(self, server: str, key: str, *, timeout: float = TIMEOUT_S) -> None:
        if not server.startswith(("http://", "https://")):
            server = f"http://{server}"
        self.server, self.key, self.timeout = server.rstrip("/"), key, timeout

    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: bytes | None = None,
        content_type: str = "application/x-tar",
    ) -> Any:
        """The JSON (or text) the server answers; :class:`ApiError` for an error, in one line."""
        url = self.server + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = response.read()
                kind = response.headers.get("content-type", "")
        except urllib.error.HTTPError as exc:
            raise ApiError(_error_line(exc.code, exc.read()), exc.code) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise ApiError(f"cannot reach {self.server}: {reason}") from None
        return json.loads(data) if "json" in kind else data.decode("utf-8", "replace")

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def post(self, path: str, **kwargs: Any) -> Any:
        return self.request("POST", path, **kwargs)


def _error_line(status: int, body: bytes) -> str:
    """``429 Too Many Requests: <the server's message>``, on one line."""
    try:
        message = str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")[:200]
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "error"
    return tables.printable(f"{status} {phrase}: {' '.join(message.split())}")


def pack_archive(path: Path) -> bytes:
    """The archive of a bot file or directory to upload: an uncompressed tar of its regular files,
    with sorted names and zeroed owners and times. The server checks every limit again."""
    if path.is_symlink() or not path.exists():
        raise ApiError(f"{path}: no such file or directory (or a symbolic link)")
    if path.is_file():
        files = [(path.name, path)]
    else:
        files = []
        for directory, subdirs, names in os.walk(path):
            subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED)
            for name in sorted(names):
                full = Path(directory, name)
                info = full.lstat()
                if not stat.S_ISREG(info.st_mode):
                    raise ApiError(
                        f"{full} is not a regular file (a link, device or pipe); submit files only"
                    )
                files.append((full.relative_to(path).as_posix(), full))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, full in sorted(files):
            data = full.read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


# -- the commands ----------------------------------------------------------------------------


def server_options(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--server URL`` and ``--key KEY`` (default: ``$SIXNIMMT_API_KEY``)."""
    p.add_argument(
        "--server",
        required=required,
        metavar="URL",
        help="the platform's API, e.g. https://arena.example.org",
    )
    p.add_argument("--key", help="your account's API key (default: $SIXNIMMT_API_KEY)")


def register(bots: Any) -> None:
    """Add ``status``, ``logs``, ``activate`` and ``deactivate`` to the ``bot`` group, and the API
    to ``bot submit``: ``--server`` sends the bot to the platform's API; without it ``bot submit``
    stays the operator's command that stores into the store (the league's, with the server extra)."""
    p = bots.add_parser("status", help="your bots on the platform: validation, active or not, rank")
    server_options(p)
    json_flag(p)
    p.set_defaults(func=_command(cmd_status))
    p = bots.add_parser(
        "logs", help="a submission's validation (faults, stderr tail), a version's faults or a match of yours"
    )
    p.add_argument(
        "version",
        help="a submission's number (bot status lists them), NAME@N, or match:ID (a league match one of"
        " your versions played: its seats, scores and faults; --json: its whole transcript)",
    )
    server_options(p)
    json_flag(p)
    p.set_defaults(func=_command(cmd_logs))
    for name, active in (("activate", True), ("deactivate", False)):
        p = bots.add_parser(name, help=f"{name} one of your versions (NAME@N) on the platform")
        p.add_argument("version", help="NAME@N")
        server_options(p)
        json_flag(p)
        p.set_defaults(func=_command(cmd_activate if active else cmd_deactivate))
    _submit(bots)


def _submit(bots: Any) -> None:
    """``bot submit --server``: on the league's ``bot submit`` when it is there, else its own."""
    existing = bots.choices.get("submit")
    if existing is not None and existing.prefix_chars != "\0":  # the league's: add the API to it
        p = existing
        stored = p.get_default("func")
        server_options(p, required=False)
        p.add_argument("--no-wait", action="store_true", help="with --server: return once uploaded")
        p.add_argument("--competition", metavar="NAME", help="with --server: made for this competition")

        def either(args: argparse.Namespace) -> int:
            return int(_command(cmd_submit)(args) if args.server else stored(args))

        p.set_defaults(func=either)
        return
    # No server extra (a stand-in stands there): bot submit reaches the API, and without --server
    # says, as the stand-in does, which extra storing into a store needs.
    stand_in = existing.get_default("func") if existing is not None else None
    p = argparse.ArgumentParser(
        prog=f"{bots._prog_prefix} submit", description="submit a bot to the platform"
    )
    p.add_argument("path", type=Path)
    p.add_argument("--name", required=True, help="the bot's name; each submit adds a version NAME@N")
    p.add_argument("--entry", help="entry point for a directory, e.g. main.py:MyBot")
    p.add_argument("--variant", default="classic", help="the game variant (default: %(default)s)")
    p.add_argument(
        "--competition", metavar="NAME", help="made for this competition: enters it, counts in its quota"
    )
    server_options(p, required=stand_in is None)
    p.add_argument("--no-wait", action="store_true", help="return once uploaded, before the validation")
    json_flag(p)
    api_submit = _command(cmd_submit)

    def submit(args: argparse.Namespace) -> int:
        return int(api_submit(args) if args.server or stand_in is None else stand_in(args))

    p.set_defaults(func=submit)
    bots._name_parser_map["submit"] = p
    for action in bots._choices_actions:
        if action.dest == "submit":
            action.help = f"{action.help}; with --server URL: submit to a platform's API"


def _command(run: Callable[[argparse.Namespace, Client], int]) -> Callable[[argparse.Namespace], int]:
    def command(args: argparse.Namespace) -> int:
        key = args.key or settings_module.load().api_key
        if not key:
            print("sixnimmt: error: no API key: pass --key or set SIXNIMMT_API_KEY", file=sys.stderr)
            return 2
        try:
            return run(args, Client(args.server, key))
        except ApiError as exc:
            print(f"sixnimmt: error: {exc}", file=sys.stderr)
            return 2

    return command


def cmd_submit(args: argparse.Namespace, client: Client) -> int:
    body = pack_archive(args.path)
    limit = client.get("/v1/me")["max_upload_bytes"]
    if len(body) > limit:  # refused here: a server that refuses a big body may close before reading it
        raise ApiError(f"413 Content Too Large: the upload is {len(body)} bytes; the server takes {limit}")
    query = {"name": args.name, "variant": args.variant, "entry": args.entry, "competition": args.competition}
    sent = client.post("/v1/submissions", query=query, body=body)
    if not args.no_wait:
        sent = wait(client, sent, show=not args.json and sys.stderr.isatty())
    if args.json:
        print(json.dumps(sent))
        return 0 if sent["status"] in ("valid", "pending") else 1
    number, status = sent["id"], sent["status"]
    if status == "pending":
        print(
            f"submission {number}: {args.name} uploaded, validating ('sixnimmt bot logs {number}' follows it)"
        )
        return 0
    if status == "valid":
        print(
            f"submission {number}: valid, stored as {sent['version']}"
            f" ('sixnimmt bot activate {sent['version']}' makes it active)"
        )
        return 0
    print(tables.printable(f"submission {number}: {status}: {sent['reason']}"))
    print(f"its logs: sixnimmt bot logs {number} --server {args.server}", file=sys.stderr)
    return 1


def wait(client: Client, sent: dict[str, Any], *, show: bool, poll_s: float = 0.5) -> dict[str, Any]:
    """Follow a submission until its validation ends, with a progress line on a terminal."""
    started = time.monotonic()
    while sent["status"] == "pending":
        if show:
            print(
                f"\rvalidating {sent['bot']} (submission {sent['id']}): {time.monotonic() - started:.0f} s",
                end="",
                file=sys.stderr,
                flush=True,
            )
        time.sleep(poll_s)
        sent = client.get(f"/v1/submissions/{sent['id']}")
    if show:
        print(file=sys.stderr)
    return {k: v for k, v in sent.items() if k not in ("report", "transcript")}


def cmd_status(args: argparse.Namespace, client: Client) -> int:
    versions = client.get("/v1/versions")
    submitted = client.get("/v1/submissions")
    if args.json:
        print(json.dumps({"versions": versions, "submissions": submitted}))
        return 0
    if versions:
        tables.print_table(
            ["version", "variant", "active", "rank"],
            [
                [
                    v["version"],
                    v["variant"],
                    "active" if v["active"] else "",
                    f"{v['rank']['rank']} of {v['rank']['of']} in {v['rank']['league']}" if v["rank"] else "",
                ]
                for v in versions
            ],
        )
    else:
        print("no bot versions yet")
    waiting = [s for s in submitted if s["status"] in ("pending", "invalid", "refused")][:10]
    if waiting:
        print()
        tables.print_table(
            [tables.right("submission"), "bot", "status", "reason"],
            [[s["id"], s["bot"], s["status"], (s["reason"] or "")[:80]] for s in waiting],
        )
    return 0


def cmd_logs(args: argparse.Namespace, client: Client) -> int:
    if args.version.startswith("match:"):
        return _match_logs(args, client, args.version.removeprefix("match:"))
    if "@" in args.version:
        faults = client.get(f"/v1/versions/{urllib.parse.quote(args.version)}/faults")
        if args.json:
            print(json.dumps(faults))
        elif not faults:
            print(f"{args.version}: no league seat with faults")
        for seat in [] if args.json else faults:
            counts = ", ".join(f"{kind} ×{count}" for kind, count in seat["faults"].items())
            print(f"match {seat['match']} seat {seat['seat']}: {counts}")
            print(tables.printable(f"  {seat['detail']}", lines=True))
        return 0
    if not args.version.isdigit():
        raise ApiError(f"{args.version!r}: a submission's number or NAME@N")
    found = client.get(f"/v1/submissions/{args.version}")
    if args.json:
        print(json.dumps(found))
        return 0
    print(f"submission {found['id']}: {found['bot']} ({found['variant']}): {found['status']}")
    if found["reason"]:
        print(tables.printable(f"reason: {found['reason']}"))
    report = found.get("report") or {}
    for check in report.get("checks", []):
        print(f"  {'ok  ' if check['passed'] else 'FAIL'} {check['check']}")
    for group in report.get("fault_reasons", []):
        cause = group.get("cause") or group.get("reason") or ""
        print(tables.printable(f"fault: {group.get('kind')} ×{group.get('count')}: {cause}"))
    exit_info = report.get("exit") or {}
    if exit_info.get("how"):
        print(tables.printable(f"the bot process {exit_info['how']}"))
    stderr = tables.printable(exit_info.get("stderr") or "", lines=True)  # the bot's bytes: no escapes
    if stderr.strip():
        print("its stderr ends:")
        print("\n".join("  " + line for line in stderr.splitlines()[-20:]))
    return 0


def _match_logs(args: argparse.Namespace, client: Client, match: str) -> int:
    """A league match one of the account's versions played: each seat's score, rank and faults
    (the transcript's), or with ``--json`` the whole transcript (``sixnimmt view`` replays it)."""
    if not match.isdigit():
        raise ApiError(f"match:{match!r}: a match's number (bot logs NAME@N lists those with faults)")
    text = client.get(f"/v1/matches/{match}/transcript")
    try:
        transcript = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        raise ApiError(f"match {match}: the server's transcript is not JSON") from None
    if args.json:
        print(json.dumps(transcript))
        return 0
    meta, outcome = transcript.get("meta") or {}, transcript.get("outcome") or {}
    seats = meta.get("seats") or []
    print(f"match {match}: {transcript.get('variant', '?')}, {len(seats)} seats")
    for i, seat in enumerate(seats):
        scores, ranks = outcome.get("scores") or [], outcome.get("ranks") or []
        faults = (meta.get("faults") or [])[i] if i < len(meta.get("faults") or []) else {}
        shown = ", ".join(f"{kind} ×{count}" for kind, count in (faults or {}).items()) or "no faults"
        score = scores[i] if i < len(scores) else "?"
        rank = ranks[i] if i < len(ranks) else "?"
        print(tables.printable(f"  seat {i} {seat}: score {score}, rank {rank}, {shown}"))
    return 0


def cmd_activate(args: argparse.Namespace, client: Client) -> int:
    return _activation(args, client, "activate")


def cmd_deactivate(args: argparse.Namespace, client: Client) -> int:
    return _activation(args, client, "deactivate")


def _activation(args: argparse.Namespace, client: Client, what: str) -> int:
    done = client.post(f"/v1/versions/{urllib.parse.quote(args.version)}/{what}")
    if args.json:
        print(json.dumps(done))
    else:
        state = "active" if done["active"] else "inactive"
        print(f"{done['version']} is {state}" + ("" if done["changed"] else " (it was already)"))
    return 0
