"""Remote bots end to end: ``sixnimmt bot connect`` in its own process, a real referee, a league.

Every test runs the real commands: ``referee serve`` (a public TCP port and a Unix socket),
``bot account|key``, ``bot connect`` as a subprocess, and leagues whose blocks play on that
referee with sandboxed reference bots beside the remote one.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from remotekit import Site, start_referee
from testkit import free_port, self_signed_certificate, sixnimmt, wait_for

from arena.matches import MatchPlan, RefereeError, play_matches
from referee.faults import FaultKind
from sixnimmt.v1 import referee_pb2

SHORT = {"players": 2, "hands": 1, "target": None}
ONE_HAND = ("-o", "hands=1", "-o", "target=None")


@pytest.mark.slow
def test_a_remote_bot_plays_a_league_block_from_another_process(site: Site) -> None:
    key = site.account("alice")
    bot = site.connect(key, "--server", site.referee.public, bot="heuristic")
    bot.wait_line("connected to")
    site.ok(
        "league", "create", "far", "--bots", "remote:alice,random,lowest,highest", "--deals", "1", *ONE_HAND
    )
    ran = json.loads(site.ok("league", "run", "far", "--local", "--processes", "1", "--json").stdout)
    assert ran["status"]["matches"] == 4
    status = json.loads(site.ok("league", "status", "far", "--json").stdout)
    assert status["blocks"] == {"done": 1} and status["waiting"] == []
    assert not any(status["faults"].values()), status
    assert "remote/alice@1" in json.dumps(ran)
    # It stays connected for the next league, and leaves cleanly when stopped.
    assert bot.process.poll() is None
    bot.process.terminate()
    assert bot.ended() == 0
    assert "4 games over 1 connections; 0 errors" in bot.process.stdout.read()  # type: ignore[union-attr]


@pytest.mark.slow
def test_a_block_waits_for_an_offline_remote_bot_then_records_its_fault(site: Site) -> None:
    site.account("bob")
    site.ok(
        "league", "create", "late", "--bots", "remote:bob,random", "--table", "2", "--deals", "1", *ONE_HAND
    )
    env = {**site.env, "SIXNIMMT_REMOTE_WAIT_S": "10"}
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot_sdk.cli",
            "league",
            "run",
            "late",
            "--local",
            "--processes",
            "1",
            "--json",
        ],
        cwd=site.cwd,
        env={**_clean_env(site.cwd), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = wait_for(
            lambda: (
                "waiting for remote bot bob to connect"
                in (out := site.cli("league", "status", "late").stdout)
                and out
            ),
            30,
            "league status to say the block waits",
        )
        assert "block 0: waiting for remote bot bob to connect (gives up in" in seen
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    status = json.loads(site.ok("league", "status", "late", "--json").stdout)
    assert status["blocks"] == {"done": 1} and status["waiting"] == []
    # Every seat of the offline bot defaulted, as a disconnect: the bot's fault, the league done.
    assert status["faults"]["disconnect"] == 2, status
    reasons = json.dumps(status["fault_reasons"])
    assert "did not connect" in reasons and "remote/bob" in reasons


def _clean_env(cwd: Path) -> dict[str, str]:
    import os

    clean = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    return {**clean, "XDG_DATA_HOME": str(Path(cwd).resolve() / "xdg-data")}


def test_a_bad_key_is_refused_in_one_line(site: Site) -> None:
    site.account("carol")
    bot = site.connect("snk_000000000000_not-a-key", "--server", site.referee.public)
    assert bot.ended() == 2
    lines = bot.stderr().strip().splitlines()
    assert lines == [
        "sixnimmt: error: the server refused the key (UNAUTHENTICATED): unknown or revoked API key"
    ]


def test_an_unreachable_server_is_retried_then_given_up_in_one_line(site: Site) -> None:
    port = free_port()
    bot = site.connect("snk_x_y", "--server", f"127.0.0.1:{port}", "--retries", "1")
    assert bot.ended() == 2
    lines = bot.stderr().strip().splitlines()
    assert len(lines) == 2, lines
    assert (
        lines[0].startswith(f"sixnimmt: cannot reach 127.0.0.1:{port} (")
        and "connecting again in" in lines[0]
    )
    assert lines[1].startswith(f"sixnimmt: error: cannot reach 127.0.0.1:{port}")
    assert lines[1].endswith("gave up after 1 retries")


def test_keys_made_and_revoked_on_the_command_line_reach_the_referee(site: Site) -> None:
    site.ok("bot", "account", "create", "dave")
    made = site.ok("bot", "key", "create", "dave", "--max-matches", "8", "--json")
    info = json.loads(made.stdout)
    key = info["key"]
    assert (info["account"], info["max_matches"], info["revoked_at"]) == ("dave", 8, None)
    assert info["referee"] == f"the referee at {site.referee.socket} has the keys"
    listed = site.ok("bot", "key", "list", "dave").stdout
    assert info["key_id"] in listed and key not in listed
    bot = site.connect(key, "--server", site.referee.public)
    bot.wait_line("connected to")
    key_id = key.split("_")[1]
    revoked = site.ok("bot", "key", "revoke", key_id)
    assert "1 connections of revoked keys closed" in revoked.stderr
    assert bot.ended() == 2
    assert bot.stderr().strip().splitlines()[-1] == (
        f"sixnimmt: error: the server at {site.referee.public} closed the connection: the API key was revoked"
    )
    again = site.connect(key, "--server", site.referee.public)
    assert again.ended() == 2
    assert "refused the key (UNAUTHENTICATED)" in again.stderr()


def test_per_key_limits_are_enforced_by_the_referee(site: Site) -> None:
    key = site.account("erin", max_connections=1, max_matches=2)
    first = site.connect(key, "--server", site.referee.public)
    first.wait_line("connected to")
    second = site.connect(key, "--server", site.referee.public, "--retries", "0")
    assert second.ended() == 2
    assert "RESOURCE_EXHAUSTED: API key" in second.stderr()
    assert "allows 1 connection(s) at once" in second.stderr()
    assert first.process.poll() is None
    client = site.admin()
    try:
        plans = [MatchPlan(("x", "a"), seed) for seed in range(3)]
        with pytest.raises(RefereeError, match="RESOURCE_EXHAUSTED: remote bot 'erin' has no room for 3"):
            client.create_matches("classic", SHORT, plans, remote={"x": "erin"})
        # Two matches fit its key's limit, and are played by the connected bot.
        run = play_matches({"a": "random"}, plans[:2], client=client, config=SHORT, remote={"x": "erin"})
        assert [m.status for m in run.matches] == ["finished", "finished"]
        assert not any(sum(s.faults.values()) for m in run.matches for s in m.seats)
        with pytest.raises(RefereeError, match="FAILED_PRECONDITION: remote bot 'nobody' is not connected"):
            client.create_matches("classic", {"players": 2}, plans[:1], remote={"x": "nobody"})
    finally:
        first.process.terminate()
        client.close()


def test_a_key_set_read_before_a_key_was_made_does_not_drop_it(site: Site) -> None:
    """Pushes from several processes arrive in any order: an older set is ignored, not applied."""
    from workers.bots import accounts
    from workers.bots import connected as remote

    engine = site.engine()
    client = site.admin()
    try:
        accounts.create_account(engine, "hana")
        before, old = accounts.referee_key_set(engine)  # read, then held up (another process)
        _, key = accounts.create_key(engine, "hana")
        site.push(engine)
        bot = site.connect(key, "--server", site.referee.public)
        bot.wait_line("connected to")

        def push(keys: list[dict[str, object]], generation: int) -> referee_pb2.SetRemoteKeysResponse:
            return remote.send_keys(client, keys, generation)

        late = push(before, old)
        now = accounts.referee_key_set(engine)[1]
        assert (late.stale, late.closed, late.generation) == (True, 0, now)
        assert late.keys == len(accounts.referee_keys(engine))
        hana = client.stub.GetRemoteStatus(
            referee_pb2.GetRemoteStatusRequest(accounts=["hana"]), timeout=10, metadata=client.metadata
        ).accounts[0]
        assert hana.connections == 1 and bot.process.poll() is None
        # A newer set applies: revoking the key closes the bot's connection.
        key_id = key.split("_")[1]
        accounts.revoke_key(engine, key_id)
        keys, newer = accounts.referee_key_set(engine)
        applied = push(keys, newer)
        assert (applied.stale, applied.closed, applied.generation) == (False, 1, newer)
        assert bot.ended() == 2
        assert bot.stderr().strip().endswith("the API key was revoked")
        # A set without a generation (0, a hand-made admin call) is always applied.
        unordered = push(keys, 0)
        assert (unordered.stale, unordered.generation) == (False, 0)
    finally:
        site.push(engine)  # the store's set again, for the module's other tests
        client.close()
        engine.dispose()


def test_tls_on_the_public_port(site: Site, tmp_path: Path) -> None:
    cert, key_file = self_signed_certificate(tmp_path)
    referee = start_referee(tmp_path / "tls-referee", "--tls-cert", str(cert), "--tls-key", str(key_file))
    plain = site.referee
    try:
        site.referee = referee
        key = site.account("frank")
        # A plaintext client cannot talk to the TLS port; one that checks the certificate can.
        refused = site.connect(key, "--server", referee.public, "--retries", "0")
        assert refused.ended() == 2
        assert "gave up after 0 retries" in refused.stderr()
        bot = site.connect(key, "--server", referee.public, "--tls-ca", str(cert))
        bot.wait_line(f"connected to {referee.public}")
        client = site.admin()
        try:
            run = play_matches(
                {"a": "random"},
                [MatchPlan(("x", "a"), 5)],
                client=client,
                config=SHORT,
                remote={"x": "frank"},
            )
        finally:
            client.close()
        assert run.matches[0].status == "finished"
        assert not any(sum(s.faults.values()) for s in run.matches[0].seats)
        bot.process.terminate()
    finally:
        site.referee = plain
        referee.stop()


def test_bad_tls_files_stop_the_referee_in_one_line(tmp_path: Path) -> None:
    missing = sixnimmt(tmp_path, "referee", "serve", "--listen", "127.0.0.1:0", "--tls-cert", "nope.pem")
    assert missing.returncode == 2
    assert missing.stderr.strip() == (
        "sixnimmt: error: TLS needs both a certificate and its key (--tls-cert and --tls-key)"
    )
    import dataclasses

    from referee.server.app import tls_credentials
    from referee.settings import load

    settings = dataclasses.replace(
        load({}), referee_tls_cert="a.pem", referee_tls_key=str(tmp_path / "b.pem")
    )
    with pytest.raises(ValueError, match=r"cannot read .*b\.pem: No such file or directory"):
        tls_credentials(settings)


def test_bot_connect_imports_nothing_of_the_server_extra(tmp_path: Path) -> None:
    """What a bot author installs (the SDK) is enough: connecting imports no library of the server
    extra, down to its one line about an unreachable server. (The command line's root loads the
    league's commands when the server extra is installed, as here; without it they are stand-ins
    that import nothing: tests/sdk/test_sdk_only.py.)"""
    port = free_port()
    code = (
        "import json, sys\n"
        "from bot_sdk.connect import ConnectError, connect\n"
        "from bot_sdk.loader import load_bot\n"
        "try:\n"
        f"    connect(load_bot('random'), server='127.0.0.1:{port}', key='snk_a_b', retries=0, say=print)\n"
        "except ConnectError as exc:\n"
        "    print(exc)\n"
        "server = {'sqlalchemy', 'alembic', 'celery', 'kombu', 'starlette', 'uvicorn', 'psycopg', 'numpy'}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & server)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    lines = done.stdout.strip().splitlines()
    assert json.loads(lines[-1]) == [], done.stderr
    assert lines[-2].startswith(f"cannot reach 127.0.0.1:{port}") and lines[-2].endswith(
        "gave up after 0 retries"
    )


def test_a_remote_bot_that_comes_late_or_reconnects_takes_up_its_games(site: Site) -> None:
    """Seats created while the bot is away wait for it (remote_wait); a bot killed mid-game
    connects again with its key and plays the rest: only its lost connection is a fault. (A seat
    whose bot is away is defaulted at once, so both bots are slow: the game lasts.)"""
    key = site.account("gina")
    slow = str(Path(__file__).parent / "bots" / "slow.py")
    client = site.admin()
    try:
        config = {"players": 2, "hands": 3, "target": None}
        ids, tokens = client.create_matches(
            "classic",
            config,
            [MatchPlan(("x", "house"), 3)],
            connect_ms=60_000,
            remote={"x": "gina"},
            remote_wait=True,
        )
        assert list(tokens) == ["house"]  # the remote entrant gets no token
        house = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bot_sdk.run",
                slow,
                "--referee",
                site.referee.socket,
                "--token",
                tokens["house"],
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        first = site.connect(key, "--server", site.referee.public, bot=slow)
        assert "taking up 1 seats" in first.wait_line("connected to")  # the seat that waited for it
        wait_for(lambda: client.result(ids[0], wait=False).status == "running", 30, "the match to start")
        time.sleep(1.5)  # a few decisions of 0.25 s each, of 30
        first.process.kill()  # no goodbye: a crash, mid-game
        first.ended()
        second = site.connect(key, "--server", site.referee.public, bot=slow)
        second.wait_line("connected to")
        result = client.result(ids[0], wait=True, timeout=120)
        house.wait(30)
    finally:
        client.close()
    assert result.status == "finished"
    gina = next(s for s in result.seats if s.entrant == "x")
    assert gina.faults.get(FaultKind.CRASH) == 1, gina.faults
    assert gina.decisions > 0 and gina.defaulted > 0
    second.process.terminate()
    assert second.ended() == 0
    # The game ended on the second connection: it played the rest.
    assert "1 games over 1 connections" in second.process.stdout.read()  # type: ignore[union-attr]
