"""Attacks on the API's front door: uploads past every limit, archive bombs, filename attacks and the
project's hostile bots submitted through the API. A refused upload stores nothing but its refusal
(the tables of bots, code and submissions are counted before and after)."""

from __future__ import annotations

import gzip
import http.client
import io
import json
import secrets
import tarfile
import urllib.parse
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from apikit import PROJECT, Site, counts, site, wait_done

HOSTILE = PROJECT / "tests" / "workers" / "hostile_bots"
BOT = (
    b"from bot_sdk import ClassicBot\n\n\nclass Low(ClassicBot):\n"
    b"    def choose_card(self, view):\n        return min(view.hand)\n"
)


def post(
    api: Site,
    body: bytes,
    *,
    name: str = "attack",
    headers: dict[str, str] | None = None,
    chunked: bool = False,
) -> tuple[int, dict[str, Any]]:
    """POST an upload by hand (http.client): the status and the JSON error."""
    where = urllib.parse.urlsplit(api.url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
    try:
        all_headers = {"Authorization": f"Bearer {api.keys['alice']}", "Content-Type": "application/x-tar"}
        all_headers.update(headers or {})
        path = f"/v1/submissions?name={urllib.parse.quote(name)}"
        if chunked:
            conn.request(
                "POST",
                path,
                body=iter([body[i : i + 1024] for i in range(0, len(body), 1024)]),
                headers=all_headers,
                encode_chunked=True,
            )
        else:
            conn.request("POST", path, body=body, headers=all_headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def tar(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def file(name: str, data: bytes = BOT) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def special(name: str, kind: bytes, target: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def refused(api: Site, send: Callable[[], tuple[int, dict[str, Any]]], status: int, words: str) -> None:
    """``send`` is answered ``status`` naming ``words``, and stores only its refusal."""
    before = counts(api.engine)
    got, error = send()
    assert (got, error["status"]) == (status, status), error
    assert words in error["error"], error
    after = counts(api.engine)
    assert after == before | {"submissions": before["submissions"] + (1 if status != 429 else 0)}, (
        before,
        after,
    )
    assert api.client().get("/v1/submissions")[0]["status"] == "refused"


def test_uploads_past_every_limit_are_refused_naming_the_limit(tmp_path: Path) -> None:
    env = {
        "SIXNIMMT_API_MAX_UPLOAD_BYTES": "60000",
        "SIXNIMMT_BOT_MAX_BYTES": "20000",
        "SIXNIMMT_SUBMIT_MAX_FILES": "3",
        "SIXNIMMT_SUBMIT_MAX_PATH": "40",
        "SIXNIMMT_API_SUBMISSIONS_PER_DAY": "1000",
    }
    with site(tmp_path, env) as api:
        # The body: by its declared length, before a byte of it is read; and streamed past it.
        refused(
            api, lambda: post(api, b"", headers={"Content-Length": str(10**9)}), 413, "the limit is 60000"
        )
        refused(api, lambda: post(api, b"\0" * 70_000, chunked=True), 413, "the limit is 60000")
        # The archive's limits, from its headers.
        four = tar(*(file(f"f{i}.py") for i in range(4)))
        refused(api, lambda: post(api, four), 422, "more than 3 files")
        refused(api, lambda: post(api, tar(file("d" * 41 + ".py"))), 422, "at most 40")
        big = tar(file("bot.py", BOT + b"#" * 30_000))
        refused(api, lambda: post(api, big), 422, "more than 20000 bytes")
        # A header that claims more than it holds (a tar bomb's size, without the bytes).
        claimed, _ = file("bot.py", b"")
        claimed.size = 10**9
        refused(api, lambda: post(api, claimed.tobuf(tarfile.PAX_FORMAT)), 422, "more than 20000 bytes")
        # The name and the variant.
        refused(api, lambda: post(api, tar(file("bot.py")), name="a" * 101), 422, "name")
        # Nothing of it was stored, and the account still submits.
        assert counts(api.engine)["bot_versions"] == 0


def test_archive_bombs_and_other_formats_are_refused_before_unpacking(tmp_path: Path) -> None:
    with site(tmp_path, {"SIXNIMMT_API_SUBMISSIONS_PER_DAY": "1000"}) as api:
        zeros = tar(file("bot.py", BOT), file("zeros.py", b"\0" * (1 << 20)))
        bomb = gzip.compress(zeros + b"\0" * (64 << 20), compresslevel=9)  # 65 MB in ~65 kB
        assert len(bomb) < 200_000
        refused(api, lambda: post(api, bomb), 422, "not a bot archive")
        import zipfile

        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("bot.py", BOT + b"\0" * (8 << 20))
        refused(api, lambda: post(api, buffer.getvalue()), 422, "not a bot archive")
        refused(api, lambda: post(api, b"not a tar at all" * 100), 422, "not a bot archive")


@pytest.mark.parametrize(
    ("member", "words"),
    [
        (lambda marker: file(f"/tmp/{marker}.py"), "unsafe"),
        (lambda marker: file(f"../../../../tmp/{marker}.py"), "unsafe"),
        (lambda marker: special("bot.py", tarfile.SYMTYPE, "/etc/passwd"), "not a regular file"),
        (lambda marker: special("bot.py", tarfile.LNKTYPE, "/etc/passwd"), "not a regular file"),
        (lambda marker: special("bot.py", tarfile.CHRTYPE), "not a regular file"),
        (lambda marker: special("sub", tarfile.DIRTYPE), "not a regular file"),
        (lambda marker: file("bot\x1b[2J.py"), "unsafe"),
    ],
    ids=["absolute", "dotdot", "symlink", "hardlink", "device", "directory", "escape"],
)
def test_filename_attacks_are_refused_and_write_nothing(tmp_path: Path, member: Any, words: str) -> None:
    marker = f"sixnimmt-attack-{uuid.uuid4().hex}"
    with site(tmp_path) as api:
        body = tar(file("ok.py"), member(marker))
        refused(api, lambda: post(api, body), 422, words)
    assert not Path(f"/tmp/{marker}.py").exists()


HOSTILE_BOTS = ("rivals", "stderr", "subprocesses", "secrets", "sockets", "ptrace", "cpu", "forkbomb")
"""The corpus's bots whose check ends by itself (tests/workers/hostile_bots/README.md): the sleeper
spends the whole time control of every check game and the memory bot's gigabyte needs the league
test's long bank, so those two are the league test's (test_hostile_league.py) alone."""
SILENT = ("cpu", "forkbomb")
"""Killed by their limits (CPU time; processes) before they can say how their attack went."""


def pg_tables(name: str) -> list[str]:
    """The databases (postgres, test) of the machine's PostgreSQL that hold a table of that name."""
    import psycopg

    found = []
    for db in ("postgres", "test"):
        with psycopg.connect(host="127.0.0.1", user="postgres", dbname=db, connect_timeout=5) as conn:
            row = conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()
            if row is not None and row[0] is not None:
                found.append(db)
    return found


@pytest.mark.slow
def test_hostile_bots_submitted_through_the_api_end_invalid_and_harm_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIXNIMMT_SANDBOX_CPU_S", "4")  # the CPU bot's spin ends there
    token = secrets.token_hex(8)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("untouched\n")
    env = {"SIXNIMMT_API_SUBMISSIONS_PER_DAY": "100", "SIXNIMMT_API_VALIDATION_WORKERS": "2"}
    with site(tmp_path, env) as api:
        alice = api.client()
        sent = {}
        for name in HOSTILE_BOTS:
            path = tmp_path / f"{name}.py"
            source = (HOSTILE / f"{name}.py").read_text()
            path.write_text(source.replace("__TOKEN__", token).replace("__OUTSIDE__", str(outside)))
            from bot_sdk.client import pack_archive

            sent[name] = alice.post(
                "/v1/submissions", query={"name": f"hostile-{name}"}, body=pack_archive(path)
            )
        for name, submission in sent.items():
            done = wait_done(alice, submission["id"])
            logs = alice.get(f"/v1/submissions/{submission['id']}")
            assert done["status"] == "invalid", (name, done)
            assert done["reason"] and done["reason"].startswith("the bot failed its check"), done
            text = json.dumps(logs["report"])
            assert f"hostile {name}: SUCCEEDED" not in text, (name, text[:2000])
            if name not in SILENT:
                said = "done" if name == "stderr" else "blocked"
                assert f"hostile {name}: {said}" in text, (name, text[:2000])
        assert counts(api.engine)["bot_versions"] == 0  # nothing of them is a version
    assert (outside / "keep.txt").read_text() == "untouched\n"
    assert pg_tables(f"hostile_{token}") == []  # the sockets bot's table, in no database
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    survivors = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if (
                    token.encode() in (proc / "cmdline").read_bytes()
                    or token.encode() in (proc / "environ").read_bytes()
                ):
                    survivors.append(proc.name)
            except OSError:
                pass
    assert survivors == []
