"""Helpers every test kit shares: polling with a deadline, a free TCP port, the command line."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def wait_for(condition: Callable[[], T | None], timeout: float, what: str, interval: float = 0.1) -> T:
    """Poll ``condition`` until it returns something truthy; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def default_store(cwd: Path) -> Path:
    """Where :func:`sixnimmt` run in ``cwd`` keeps the default store."""
    return Path(cwd).resolve() / "xdg-data" / "sixnimmt" / "sixnimmt.db"


def read_until_closed(fd: int) -> bytes:
    """Everything read from the pseudo-terminal ``fd`` until its other end is closed."""
    data = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        data += chunk
    return data


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sixnimmt(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``sixnimmt ARGS`` in ``cwd`` with none of this machine's SIXNIMMT_* settings, plus ``env``.

    Its per-user data directory is ``cwd/xdg-data`` (``XDG_DATA_HOME``, unless ``env`` names one),
    so the default store is the test's own (``cwd/xdg-data/sixnimmt/sixnimmt.db``), never the user's.
    """
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        cwd=cwd,
        env={**clean, "XDG_DATA_HOME": str(Path(cwd).resolve() / "xdg-data"), **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def table_rows(text: str, headers: Sequence[str], count: int) -> list[dict[str, str]]:
    """The ``count`` rows of the table in ``text`` whose header line holds ``headers``, in order.

    Fails unless the header line is followed by a rule and every cell of every row lies under
    its header: a left-aligned cell starts where its header starts, a right-aligned one ends
    where its header ends (cells are runs of words with single spaces; columns are further apart).
    Blank lines inside the table (between groups of rows) are skipped. Returns each row as
    ``{header: cell}``, ``""`` for an empty cell.
    """
    lines = text.splitlines()
    found = [(n, spans) for n, line in enumerate(lines) if (spans := _header_spans(line, headers))]
    assert found, f"no header line with {list(headers)} in:\n{text}"
    number, spans = found[0]
    assert re.fullmatch(r"[─-]+", lines[number + 1]), f"no rule under the header:\n{text}"
    body = [line for line in lines[number + 2 :] if line.strip()][:count]
    assert len(body) == count, f"{count} rows expected, {len(body)} found:\n{text}"
    rows = []
    ways = {h: {"left", "right"} for h in headers}  # how each column's cells line up, so far
    for line in body:
        row = dict.fromkeys(headers, "")
        for cell in re.finditer(r"\S+(?: \S+)*", line):
            under = [
                h
                for h, (start, end) in zip(headers, spans, strict=True)
                if cell.start() == start or cell.end() == end
            ]
            assert under, f"{cell.group()!r} lies under no header in:\n{lines[number]}\n{line}"
            header = under[0]
            assert not row[header], f"two cells under {header!r} in {line!r}"
            row[header] = cell.group()
            start, end = spans[headers.index(header)]
            ways[header] &= {"left"} if cell.start() == start and cell.end() != end else {"left", "right"}
            ways[header] &= {"right"} if cell.end() == end and cell.start() != start else {"left", "right"}
            assert ways[header], f"the cells under {header!r} line up neither left nor right:\n{text}"
        rows.append(row)
    return rows


def _header_spans(line: str, headers: Sequence[str]) -> list[tuple[int, int]] | None:
    """Where each header lies in ``line``, if the line is exactly those headers apart, in order."""
    spans: list[tuple[int, int]] = []
    at = 0
    for header in headers:
        found = line.find(header, at)
        if found < 0 or line[at:found].strip() or (spans and found - at < 2):
            return None
        spans.append((found, found + len(header)))
        at = found + len(header)
    return spans if not line[at:].strip() else None


@contextlib.contextmanager
def migrated_store(kind: str, directory: Path, prefix: str) -> Iterator[Any]:
    """A migrated, empty store for a test: a SQLite file in ``directory`` (``kind`` ``sqlite``),
    or a fresh PostgreSQL database named ``prefix_…``, dropped afterwards (``postgresql``)."""
    import uuid

    import psycopg

    from workers.store.engine import make_engine
    from workers.store.migrate import upgrade

    if kind == "sqlite":
        store = make_engine(f"sqlite:///{directory / 'store.db'}")
        upgrade(store)
        try:
            yield store
        finally:
            store.dispose()
        return
    admin_url = "postgresql://postgres@127.0.0.1:5432/test"
    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    store = make_engine(f"postgresql://postgres@127.0.0.1:5432/{name}")
    try:
        upgrade(store)
        yield store
    finally:
        store.dispose()
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate naming localhost and 127.0.0.1 in its subjectAltName, written with
    its key into ``directory`` (``cert.pem``, ``key.pem``)."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sixnimmt test referee")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
REDIS_DBS = range(15, 0, -1)
"""The Redis databases tests may borrow, under the same lock files as tests/workers (never 0)."""


@contextlib.contextmanager
def borrowed_redis() -> Iterator[str]:
    """The URL of a Redis database no other test uses meanwhile (a lock file reserves it), flushed
    before and after; skips the test when Redis does not answer."""
    import fcntl
    import tempfile

    import pytest
    import redis

    try:
        redis.Redis(host=REDIS_HOST, port=REDIS_PORT, socket_timeout=5).ping()
    except Exception as exc:
        pytest.skip(f"Redis at {REDIS_HOST}:{REDIS_PORT} is not reachable: {exc}")
    for db in REDIS_DBS:
        handle = open(Path(tempfile.gettempdir()) / f"sixnimmt-test-redis-{db}.lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db, socket_timeout=10)
        try:
            client.flushdb()
            yield f"redis://{REDIS_HOST}:{REDIS_PORT}/{db}"
            client.flushdb()
        finally:
            client.close()
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        return
    pytest.fail(f"every Redis database in {list(REDIS_DBS)} is in use by other tests")


def compiled_build() -> Path:
    """The referee's compiled build (referee.accel) for a test that needs it: the test skips when
    it is missing or stale, or fails with ``SIXNIMMT_TEST_COMPILED=required`` (as `make test` sets)."""
    import pytest

    from referee import accel

    why = accel.stale()
    if why is not None:
        if os.environ.get("SIXNIMMT_TEST_COMPILED") == "required":
            pytest.fail(f"the compiled build cannot be used: {why}")
        pytest.skip(f"the compiled build cannot be used: {why}")
    return accel.build_dir()
