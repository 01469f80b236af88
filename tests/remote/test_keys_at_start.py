"""A referee started after keys were made accepts them from its first moment.

The operator writes the store's key set to a file (``sixnimmt bot key export FILE``) and the referee
reads it before it serves (``referee serve --remote-keys FILE``); without it a referee answers every
key with ``UNAVAILABLE`` until a league block pushes the keys. Real processes throughout: the
commands, ``referee serve``, and ``bot connect`` allowed no retry, so an ``UNAVAILABLE`` would end it.
"""

from __future__ import annotations

import json
from pathlib import Path

from remotekit import ADMIN, Site, start_referee
from testkit import sixnimmt

from sixnimmt.v1 import referee_pb2


def test_a_referee_started_after_keys_were_made_accepts_them_at_once(tmp_path: Path) -> None:
    env = {"SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}"}  # no referee to push to yet

    def ok(*args: str) -> str:
        done = sixnimmt(tmp_path, *args, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    ok("bot", "account", "create", "early")
    made = json.loads(ok("bot", "key", "create", "early", "--json"))
    gone = json.loads(ok("bot", "key", "create", "early", "--json"))
    ok("bot", "key", "revoke", gone["key_id"])
    keys_file = tmp_path / "keys.json"
    exported = json.loads(ok("bot", "key", "export", str(keys_file), "--json"))
    assert exported == {"file": str(keys_file), "keys": 1, "generation": 4}
    written = json.loads(keys_file.read_text())
    assert [k["key_id"] for k in written["keys"]] == [made["key_id"]]
    assert made["key"] not in keys_file.read_text()  # its hash only

    referee = start_referee(tmp_path / "referee", "--remote-keys", str(keys_file))
    site = Site(tmp_path, referee, {**env, "SIXNIMMT_ADMIN_TOKEN": ADMIN})
    try:
        bot = site.connect(made["key"], "--server", referee.public, "--retries", "0")
        bot.wait_line(f"connected to {referee.public}")  # the first attempt: no UNAVAILABLE
        assert bot.process.poll() is None
        refused = site.connect(gone["key"], "--server", referee.public, "--retries", "0")
        assert refused.ended() == 2
        assert "UNAUTHENTICATED" in refused.stderr()  # revoked before the export: not in the file
        admin = site.admin()
        try:
            status = admin.stub.GetRemoteStatus(
                referee_pb2.GetRemoteStatusRequest(accounts=["early"]), timeout=10, metadata=admin.metadata
            )
            assert status.keys_loaded and status.accounts[0].connections == 1
            # The file's generation is held: a push read before it is ignored, a later one applies.
            stale = admin.stub.SetRemoteKeys(
                referee_pb2.SetRemoteKeysRequest(generation=3), timeout=10, metadata=admin.metadata
            )
            assert stale.stale and stale.keys == 1 and stale.generation == 4
        finally:
            admin.close()
    finally:
        site.stop_bots()
        referee.stop()


def test_a_bad_key_file_stops_the_referee_in_one_line(tmp_path: Path) -> None:
    missing = sixnimmt(tmp_path, "referee", "serve", "--listen", "127.0.0.1:0", "--remote-keys", "nope.json")
    assert missing.returncode == 2
    assert missing.stderr.strip() == (
        "sixnimmt: error: cannot read the key file nope.json: No such file or directory"
    )
    (tmp_path / "bad.json").write_text('{"generation": 2, "keys": [{"key_id": "a"}]}')
    bad = sixnimmt(tmp_path, "referee", "serve", "--listen", "127.0.0.1:0", "--remote-keys", "bad.json")
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("sixnimmt: error: the key file bad.json: key 0 must have exactly")
