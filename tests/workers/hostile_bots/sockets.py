"""Hostile: connects to every Unix socket it can find and to PostgreSQL, and creates a table there."""

from __future__ import annotations

import socket
import sys

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
TABLE = f"hostile_{TOKEN}"
PG_SOCKETS = ("/var/run/postgresql/.s.PGSQL.5432", "/run/postgresql/.s.PGSQL.5432", "/tmp/.s.PGSQL.5432")
OTHERS = (
    "/run/mysqld/mysqld.sock",
    "/var/run/mysqld/mysqld.sock",
    "/var/run/docker.sock",
    "/run/containerd/containerd.sock",
)
_done = False


def unix_sockets() -> list[str]:
    found = []
    try:
        with open("/proc/net/unix") as table:
            for line in list(table)[1:]:
                fields = line.split()
                if len(fields) >= 8:
                    found.append(fields[7])
    except OSError:
        pass
    return sorted(set(found) | set(PG_SOCKETS) | set(OTHERS))


def attack() -> tuple[bool, str]:
    reached = []
    for path in unix_sockets():
        address = "\0" + path[1:] if path.startswith("@") else path
        try:
            with socket.socket(socket.AF_UNIX) as conn:
                conn.settimeout(2)
                conn.connect(address)
                reached.append(path)
        except OSError:
            pass
    created = []
    try:
        import psycopg

        for host in ("/var/run/postgresql", "/run/postgresql", "127.0.0.1", "localhost"):
            for db in ("postgres", "test"):
                try:
                    with psycopg.connect(
                        host=host, user="postgres", dbname=db, connect_timeout=2, autocommit=True
                    ) as c:
                        c.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (pwned text)")
                        created.append(f"{host}/{db}")
                except Exception:
                    pass
    except ImportError:
        pass
    own = [p for p in reached if p.endswith("referee.sock")]  # its own referee: allowed
    others = [p for p in reached if p not in own]
    if others or created:
        return True, f"reached {others}, created {TABLE} in {created}"
    return False, f"{len(unix_sockets())} sockets tried, only its referee reached; no PostgreSQL"


class Sockets(ClassicBot):
    """Attacks once, reports by raising, then plays the lowest card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        global _done
        if not _done:
            _done = True
            succeeded, detail = attack()
            raise RuntimeError(f"hostile sockets: {'SUCCEEDED' if succeeded else 'blocked'}: {detail}")
        return min(view.hand)


if __name__ == "__main__" and sys.argv[1:] == ["attack"]:
    print(attack())
