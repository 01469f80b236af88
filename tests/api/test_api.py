"""The platform's API (``sixnimmt api serve``) served for real on a free port, reached over HTTP by
the SDK's client and by ``sixnimmt bot submit|status|logs|activate --server`` as processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from apikit import GOOD_BOT, OUTSIDE_TREE, counts, site

from bot_sdk.client import ApiError, Client, pack_archive

SIXNIMMT = [sys.executable, "-m", "bot_sdk.cli"]


def _cli(*args: str, key: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    if key:
        env["SIXNIMMT_API_KEY"] = key
    return subprocess.run(
        [*SIXNIMMT, *args], capture_output=True, text=True, env=env, cwd=OUTSIDE_TREE, timeout=300
    )


def _status(call: object) -> int:
    with pytest.raises(ApiError) as caught:
        call()  # type: ignore[operator]
    assert caught.value.status is not None, str(caught.value)
    return caught.value.status


def test_a_participant_submits_follows_activates_and_reads_their_status(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        done = _cli(
            "bot",
            "submit",
            str(GOOD_BOT),
            "--server",
            api.url,
            "--name",
            "cautious",
            "--json",
            key=api.keys["alice"],
        )
        assert done.returncode == 0, done.stderr
        sent = json.loads(done.stdout)
        assert sent["status"] == "valid" and sent["version"] == "cautious@1", sent
        # The validation's report: every check passed, with the games it played.
        logs = api.client().get(f"/v1/submissions/{sent['id']}")
        assert logs["report"]["ok"] and logs["report"]["games"] > 0
        assert json.loads(logs["transcript"])["variant"] == "classic"  # the check game's first
        shown = _cli("bot", "logs", str(sent["id"]), "--server", api.url, key=api.keys["alice"])
        assert shown.returncode == 0 and "valid" in shown.stdout and "connects and plays" in shown.stdout
        active = _cli("bot", "activate", "cautious@1", "--server", api.url, "--key", api.keys["alice"])
        assert active.returncode == 0 and "cautious@1 is active" in active.stdout, active.stderr
        status = _cli("bot", "status", "--server", api.url, "--json", key=api.keys["alice"])
        versions = json.loads(status.stdout)["versions"]
        assert [(v["version"], v["active"]) for v in versions] == [("cautious@1", True)]
        off = _cli("bot", "deactivate", "cautious@1", "--server", api.url, key=api.keys["alice"])
        assert off.returncode == 0 and "inactive" in off.stdout
        # The same code again is the same version; the store holds one artifact.
        again = api.client().post("/v1/submissions", query={"name": "cautious"}, body=pack_archive(GOOD_BOT))
        assert again["status"] == "pending"
        assert counts(api.engine)["artifacts"] == 1


def test_no_key_reads_or_changes_another_accounts_bots(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        alice, bob = api.client("alice"), api.client("bob")
        sent = alice.post("/v1/submissions", query={"name": "cautious"}, body=pack_archive(GOOD_BOT))
        from apikit import wait_valid

        wait_valid(alice, sent["id"])
        for call in (
            lambda: bob.get(f"/v1/submissions/{sent['id']}"),
            lambda: bob.post("/v1/versions/cautious@1/activate"),
            lambda: bob.post("/v1/versions/cautious@1/deactivate"),
            lambda: bob.get("/v1/versions/cautious@1/faults"),
            lambda: bob.get("/v1/submissions/999999"),  # one that does not exist: the same answer
        ):
            assert _status(call) == 404
        assert bob.get("/v1/versions") == [] and bob.get("/v1/submissions") == []
        # Nor adds versions to it: the name is alice's.
        assert (
            _status(
                lambda: bob.post("/v1/submissions", query={"name": "cautious"}, body=pack_archive(GOOD_BOT))
            )
            == 409
        )
        assert [v["active"] for v in alice.get("/v1/versions")] == [False]


def test_a_revoked_key_and_no_key_get_401(tmp_path: Path) -> None:
    from workers.bots import accounts

    with site(tmp_path) as api:
        assert api.client().get("/v1/me")["account"] == "alice"
        accounts.revoke_key(api.engine, api.keys["alice"])
        assert _status(lambda: api.client().get("/v1/me")) == 401
        assert _status(lambda: Client(api.url, "").get("/v1/versions")) == 401
        done = _cli("bot", "status", "--server", api.url, key=api.keys["alice"])
        assert done.returncode == 2
        assert done.stderr.startswith("sixnimmt: error: 401 Unauthorized: ") and done.stderr.count("\n") == 1


def test_a_key_guessed_at_full_speed_gets_401s_then_429_and_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="sixnimmt.api")
    with site(tmp_path, {"SIXNIMMT_API_AUTH_FAILURES_BURST": "5"}) as api:
        answers = []
        for n in range(40):
            guess = Client(api.url, f"snk_{n:012x}_{'x' * 43}")
            answers.append(_status(lambda guess=guess: guess.get("/v1/me")))
        assert answers[:5] == [401] * 5 and 429 in answers[5:]
        assert answers.count(401) < 20  # refilled at one a second: the 40 guesses take far less than 15 s
        assert api.app.state.counters.refused_keys == 40
        refused = [r.getMessage() for r in caplog.records if "refused key" in r.getMessage()]
        assert len(refused) == 40 and any("rate-limited" in line for line in refused)
        assert "x" * 43 not in caplog.text  # a key is never logged, only its id


def test_a_live_key_past_its_rate_gets_429(tmp_path: Path) -> None:
    with site(tmp_path, {"SIXNIMMT_API_RATE_PER_S": "1", "SIXNIMMT_API_BURST": "5"}) as api:
        answers = []
        for _ in range(60):
            try:
                api.client().get("/v1/me")
                answers.append(200)
            except ApiError as exc:
                answers.append(exc.status)
        assert answers[:5] == [200] * 5 and 429 in answers
        assert api.client("bob").get("/v1/me")["account"] == "bob"  # per key: bob's is untouched
        public = []
        for _ in range(60):  # the public routes: per address
            try:
                Client(api.url, "").get("/v1/leagues")
                public.append(200)
            except ApiError as exc:
                public.append(exc.status)
        assert public[:5] == [200] * 5 and 429 in public


def test_the_daily_quota_and_the_active_limit(tmp_path: Path) -> None:
    from apikit import wait_valid

    env = {"SIXNIMMT_API_SUBMISSIONS_PER_DAY": "2", "SIXNIMMT_API_ACTIVE_PER_ACCOUNT": "1"}
    with site(tmp_path, env) as api:
        alice = api.client()
        first = alice.post("/v1/submissions", query={"name": "one"}, body=pack_archive(GOOD_BOT))
        second = alice.post("/v1/submissions", query={"name": "two"}, body=pack_archive(GOOD_BOT))
        wait_valid(alice, first["id"])
        wait_valid(alice, second["id"])
        before = counts(api.engine)
        done = _cli(
            "bot", "submit", str(GOOD_BOT), "--server", api.url, "--name", "three", key=api.keys["alice"]
        )
        assert done.returncode == 2
        assert done.stderr == (
            "sixnimmt: error: 429 Too Many Requests: daily submission quota of 2 used; next at 00:00 UTC\n"
        )
        assert counts(api.engine) == before
        alice.post("/v1/versions/one@1/activate")
        assert _status(lambda: alice.post("/v1/versions/two@1/activate")) == 409
        alice.post("/v1/versions/one@1/deactivate")
        assert alice.post("/v1/versions/two@1/activate")["active"]


def test_names_of_the_platform_and_reserved_names_are_refused(tmp_path: Path) -> None:
    from workers.bots.submit import store_reference
    from workers.store import repo

    with site(tmp_path) as api:
        repo.add_bot_version(
            api.engine, "operators", b"x", __import__("hashlib").sha256(b"x").hexdigest(), "a.py", "classic"
        )
        store_reference(api.engine, "classic", "random")
        body = pack_archive(GOOD_BOT)
        assert (
            _status(lambda: api.client().post("/v1/submissions", query={"name": "operators"}, body=body))
            == 409
        )
        for name in ("classic/random", "remote/alice", "heuristic", "../x"):
            assert (
                _status(
                    lambda name=name: api.client().post("/v1/submissions", query={"name": name}, body=body)
                )
                == 422
            )


def test_the_openapi_document_and_public_standings(tmp_path: Path) -> None:
    import urllib.request

    with site(tmp_path) as api:
        with urllib.request.urlopen(f"{api.url}/openapi.json", timeout=30) as response:
            document = json.loads(response.read())
        assert {"/v1/submissions", "/v1/versions", "/v1/leagues"} <= set(document["paths"])
        with urllib.request.urlopen(f"{api.url}/docs", timeout=30) as response:
            assert response.status == 200 and b"swagger" in response.read().lower()
        assert Client(api.url, "").get("/v1/leagues") == []  # public: no key
        assert _status(lambda: Client(api.url, "").get("/v1/leagues/nope/standings")) == 404


def test_uploads_at_once_cannot_pass_the_quota_together(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with site(tmp_path, {"SIXNIMMT_API_SUBMISSIONS_PER_DAY": "2"}) as api:
        body = pack_archive(GOOD_BOT)

        def upload(n: int) -> int:
            try:
                api.client().post("/v1/submissions", query={"name": f"rush{n}"}, body=body)
                return 202
            except ApiError as exc:
                return exc.status or 0

        with ThreadPoolExecutor(8) as pool:
            answers = sorted(pool.map(upload, range(8)))
        assert answers == [202, 202] + [429] * 6


def test_a_validation_lost_with_its_api_is_marked_invalid_at_the_next_start(tmp_path: Path) -> None:
    import datetime as dt

    from apikit import account, new_store
    from sqlalchemy import update

    from api.app import create_app
    from referee.settings import load
    from workers.store import repo
    from workers.store.schema import submissions

    engine = new_store(tmp_path)
    try:
        account(engine, "alice")
        old = repo.add_submission(engine, 1, "k", "lost", "classic")
        young = repo.add_submission(engine, 1, "k", "young", "classic")
        with engine.begin() as conn:
            hours_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)
            conn.execute(update(submissions).where(submissions.c.id == old).values(created_at=hours_ago))
        create_app(engine, load({}))
        assert repo.submission(engine, 1, old)["status"] == "invalid"
        assert "interrupted" in repo.submission(engine, 1, old)["reason"]
        assert repo.submission(engine, 1, young)["status"] == "pending"  # maybe another API's, running
    finally:
        engine.dispose()


def test_an_invalid_bot_says_why_and_its_logs_show_its_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import sys\nfrom bot_sdk import ClassicBot\n\n\nclass Bad(ClassicBot):\n"
        "    def choose_card(self, view):\n        print('about to fail', file=sys.stderr)\n"
        "        raise ValueError('\\x1b[2Joops in my bot')\n"
    )
    with site(tmp_path) as api:
        done = _cli("bot", "submit", str(bad), "--server", api.url, "--name", "bad", key=api.keys["alice"])
        assert done.returncode == 1, done.stderr
        assert done.stdout.startswith(
            "submission 1: invalid: the bot failed its check (decides without raising)"
        )
        logs = _cli("bot", "logs", "1", "--server", api.url, key=api.keys["alice"])
        assert "FAIL decides without raising" in logs.stdout
        assert "fault: exception" in logs.stdout and "oops in my bot" in logs.stdout
        assert "its stderr ends:" in logs.stdout
        assert "\x1b" not in done.stdout + logs.stdout  # the bot's words, without terminal escapes
        assert api.client().get("/v1/versions") == []


def test_a_failure_of_the_server_is_a_json_500_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from sqlalchemy import text

    with site(tmp_path) as api:
        with api.engine.begin() as conn:
            conn.execute(text("ALTER TABLE submissions RENAME TO gone"))
        assert _status(lambda: api.client().get("/v1/submissions")) == 500
        assert "GET /v1/submissions failed" in caplog.text
