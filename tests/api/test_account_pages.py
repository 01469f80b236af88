"""The participant's web pages under ``/account`` of the API's server, over HTTP: signing in with a
key and out, forms forged from elsewhere refused (403) without a change, another account's
submission a 404, uploads from the form refused past the limits with the reason and nothing
stored but the refusal, and a bot uploaded from the form validated and activated."""

from __future__ import annotations

import copy
import html
import io
import tarfile
import zipfile
from pathlib import Path

from accountkit import Web, hidden
from apikit import GOOD_BOT, counts, site
from testkit import wait_for

from api.forms import as_tar
from api.pages import SESSION_COOKIE, SIGNIN_COOKIE
from bot_sdk.client import pack_archive
from workers.bots.artifacts import SubmissionError, SubmissionLimits
from workers.bots.submit import checked_archive

EVIL = "http://evil.example"


def test_signing_in_with_a_key_and_out(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        web = Web(api.url)
        first = web.get("/account")
        assert first.status == 303 and first.location.endswith("/account/signin")
        form = web.get("/account/signin")
        assert form.status == 200 and 'name="key"' in form.body
        csp = form.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        token = hidden(form.body, "form")

        # A wrong key: 401, the same page, no session; a revoked or another site's form neither.
        wrong = web.post("/account/signin", {"form": token, "key": api.keys["alice"] + "x"})
        assert wrong.status == 401 and 'id="signin-failed"' in wrong.body
        assert web.cookie(SESSION_COOKIE) is None
        assert (
            web.post("/account/signin", {"form": token, "key": api.keys["alice"]}, origin=EVIL).status == 403
        )
        stranger = Web(api.url)  # never saw the form: no anti-forgery cookie
        assert stranger.post("/account/signin", {"form": token, "key": api.keys["alice"]}).status == 403
        assert stranger.cookie(SESSION_COOKIE) is None

        web.sign_in(api.keys["alice"])
        cookie = web.cookie(SESSION_COOKIE)
        assert cookie.has_nonstandard_attr("HttpOnly") and cookie.get_nonstandard_attr("SameSite") == "strict"
        assert api.keys["alice"] not in cookie.value and cookie.path == "/account"
        assert web.cookie(SIGNIN_COOKIE) is None
        home = web.get("/account")
        assert home.status == 200 and "alice" in home.body and 'id="versions"' in home.body
        assert home.headers["cache-control"] == "no-store"

        # Signing out ends the session in the server: its cookie, presented again, signs nobody in.
        csrf = hidden(home.body, "csrf")
        out = web.post("/account/signout", {"csrf": csrf})
        assert out.status == 303 and out.location.endswith("/account/signin")
        replay = Web(api.url)
        replay.jar.set_cookie(cookie)
        assert replay.get("/account").status == 303
        assert web.get("/account").status == 303


def test_a_revoked_key_ends_its_sessions(tmp_path: Path) -> None:
    from workers.bots import accounts

    with site(tmp_path) as api:
        web = Web(api.url)
        web.sign_in(api.keys["alice"])
        assert web.get("/account").status == 200
        accounts.revoke_key(api.engine, api.keys["alice"])
        assert web.get("/account").status == 303


def test_forged_forms_are_refused_and_change_nothing(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        web = Web(api.url)
        web.sign_in(api.keys["alice"])
        csrf = web.csrf()
        before = counts(api.engine)
        # Another site's form rides on the browser's session cookie, without the page's value.
        for fields, origin in (({"version": "x@1"}, None), ({"csrf": "guess", "version": "x@1"}, None)):
            assert web.post("/account/activate", fields, origin=origin).status == 403
        assert web.post("/account/activate", {"csrf": csrf, "version": "x@1"}, origin=EVIL).status == 403
        assert web.post("/account/signout", {"csrf": "guess"}).status == 403
        bot = ("bot.py", GOOD_BOT.read_bytes())
        forged = web.post_files("/account/upload", {"name": "forged"}, {"file": bot})
        assert forged.status == 403
        assert (
            web.post_files("/account/upload", {"csrf": csrf, "name": "forged"}, {"file": bot}, EVIL).status
            == 403
        )
        assert counts(api.engine) == before  # not even a refusal
        assert web.get("/account").status == 200  # still signed in


def test_another_accounts_submission_is_not_found(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        refused = Web(api.url)
        refused.sign_in(api.keys["alice"])
        csrf = refused.csrf()
        sent = refused.post_files(
            "/account/upload", {"csrf": csrf, "name": "classic/mine"}, {"file": ("a.py", b"")}
        )
        assert sent.status == 422 and "reserved" in sent.body
        (mine,) = api.client("alice").get("/v1/submissions")
        assert mine["status"] == "refused"
        assert refused.get(f"/account/submissions/{mine['id']}").status == 200
        bob = Web(api.url)
        bob.sign_in(api.keys["bob"])
        for path in (
            f"/account/submissions/{mine['id']}",
            f"/account/submissions/{mine['id']}/state.json",
            "/account/submissions/999999",
            "/account/versions/nothing@1",
            "/account/matches/1/transcript",
        ):
            answer = bob.get(path)
            assert answer.status == 404 and "classic/mine" not in answer.body, path


def test_uploads_past_the_limits_store_their_refusal_alone(tmp_path: Path) -> None:
    env = {"SIXNIMMT_BOT_MAX_BYTES": "4000", "SIXNIMMT_API_MAX_UPLOAD_BYTES": "20000"}
    with site(tmp_path, env) as api:
        web = Web(api.url)
        web.sign_in(api.keys["alice"])
        csrf = web.csrf("/account/upload")
        before = counts(api.engine)  # the accounts' remote bots

        def upload(name: str, filename: str, content: bytes) -> tuple[int, str]:
            answer = web.post_files(
                "/account/upload", {"csrf": csrf, "name": name}, {"file": (filename, content)}
            )
            return answer.status, answer.body

        big = b"# " + b"x" * 5000 + b"\n"
        status, body = upload("big", "big.py", big)
        assert status == 422 and "more than 4000 bytes" in body, body
        status, body = upload("huge", "huge.py", big * 10)  # past the body's limit: never read whole
        assert status == 413 and "larger than 20000 bytes" in body
        bomb = io.BytesIO()
        with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("main.py", b"\0" * 10_000_000)
        status, body = upload("bomb", "bomb.zip", bomb.getvalue())
        assert status == 413 and "inflates to more than 20000 bytes" in body
        status, body = upload("links", "links.tar", _tar_with_link())
        assert status == 422 and "not a regular file" in body
        status, body = upload("what", "bot.exe", b"MZ")
        assert status == 422 and "not one the form takes" in body

        assert counts(api.engine) == before | {"submissions": 5}
        listed = api.client("alice").get("/v1/submissions")
        assert {s["bot"] for s in listed} == {"big", "huge", "bomb", "links", "what"}
        assert all(s["status"] == "refused" and s["reason"] for s in listed)
        home = web.get("/account").body
        assert "inflates to more than 20000 bytes" in home and "refused" in home


def test_a_bot_uploaded_from_the_form_is_validated_and_activated(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        web = Web(api.url)
        web.sign_in(api.keys["alice"])
        csrf = web.csrf("/account/upload")
        sent = web.post_files(
            "/account/upload",
            {"csrf": csrf, "name": "cautious", "variant": "classic", "entry": ""},
            {"file": ("cautious_bot.py", GOOD_BOT.read_bytes())},
        )
        assert sent.status == 303 and "/account/submissions/" in sent.location, sent
        path = sent.location.split(api.url)[-1]
        pending = web.get(path)
        assert pending.status == 200
        if "pending" in pending.body:  # the page asks for its state, with a script of the site's own
            assert 'data-poll="' in pending.body and "account.js" in pending.body
        ended = wait_for(
            lambda: '"pending"' not in (state := web.get(path + "/state.json").body) and state,
            240,
            "the validation",
            interval=0.5,  # within the key's rate: the page's requests spend it too
        )
        assert '"valid"' in ended, web.get(path).body
        page = web.get(path)
        assert "cautious@1" in page.body and 'id="checks"' in page.body and "FAIL" not in page.body
        assert web.get(path + "/transcript").body.startswith("{")
        # The same sha256 as the CLI's archive of the same file: the same path.
        (version,) = api.client("alice").get("/v1/versions")
        assert version["sha256"] == checked_archive(pack_archive(GOOD_BOT), "cautious").sha256

        csrf = web.csrf()
        done = web.post("/account/activate", {"csrf": csrf, "version": "cautious@1"})
        assert done.status == 303
        (version,) = api.client("alice").get("/v1/versions")
        assert version["active"]
        assert "deactivate" in web.get("/account").body
        assert web.post("/account/deactivate", {"csrf": csrf, "version": "cautious@1"}).status == 303
        assert not api.client("alice").get("/v1/versions")[0]["active"]
        assert web.get("/account/versions/cautious%401").status == 200


def test_archives_of_a_folder_become_the_archive_bot_submit_makes() -> None:
    limits = SubmissionLimits()
    code = GOOD_BOT.read_bytes()
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mybot/", b"")
        z.writestr("mybot/main.py", code)
        z.writestr("mybot/sixnimmt.json", b'{"entry": "main.py"}')
    tarred = io.BytesIO()
    with tarfile.open(fileobj=tarred, mode="w:gz") as t:
        for name, data in (("./main.py", code), ("./sixnimmt.json", b'{"entry": "main.py"}')):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    shas = set()
    for filename, content in (("bot.zip", zipped.getvalue()), ("bot.tar.gz", tarred.getvalue())):
        archive = as_tar(filename, content, limit=1 << 20, limits=limits)
        with tarfile.open(fileobj=io.BytesIO(archive)) as t:
            assert sorted(t.getnames()) == ["main.py", "sixnimmt.json"]
        shas.add(checked_archive(archive, "mybot").sha256)
    assert len(shas) == 1
    try:
        as_tar("bot.tar.gz", b"not gzip", limit=100, limits=limits)
    except SubmissionError as exc:
        assert "not a .tar.gz" in str(exc)
    else:
        raise AssertionError("a broken .tar.gz was taken")


def _tar_with_link() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as t:
        info = tarfile.TarInfo("main.py")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        t.addfile(info)
    return out.getvalue()


def test_a_session_holds_on_every_replica_with_the_same_secret(tmp_path: Path) -> None:
    from api.app import create_app, serving
    from referee.settings import load

    env = {"SIXNIMMT_API_SESSION_SECRET": "a-shared-secret-of-the-replicas"}
    with site(tmp_path, env) as api:
        web = Web(api.url)
        web.sign_in(api.keys["alice"])
        cookie = web.cookie(SESSION_COOKIE)
        assert api.keys["alice"] not in cookie.value
        other_secret = {"SIXNIMMT_API_SESSION_SECRET": "another-secret-of-another-site"}
        for settings, signed_in in ((env, True), (other_secret, False)):
            with serving(create_app(api.engine, load(settings))) as url:
                replica = Web(url)
                replica.jar.set_cookie(cookie)
                assert (replica.get("/account").status == 200) is signed_in
        # A cookie changed by hand (another key's id) is nobody's.
        key_id, rest = cookie.value.split(".", 1)
        forged = Web(api.url)
        changed = copy.copy(cookie)
        changed.value = f"{'0' * len(key_id)}.{rest}"
        forged.jar.set_cookie(changed)
        assert forged.get("/account").status == 303


def test_entering_a_competition_and_its_limits_from_the_pages(tmp_path: Path) -> None:
    from workers import competition

    with site(tmp_path, check_games=1) as api:
        competition.create(api.engine, "cup", table_size=2, active_per_account=1, submissions_per_day=1)
        web = Web(api.url)
        web.sign_in(api.keys["alice"])
        home = web.get("/account").body
        assert 'data-competition="cup"' in home and 'class="enter"' in home
        csrf = hidden(home, "csrf")
        assert web.post("/account/enter", {"competition": "cup"}).status == 403  # a forged form
        assert web.post("/account/enter", {"csrf": csrf, "competition": "cup"}).status == 303
        assert 'class="good entered"' in web.get("/account").body
        # An upload for it counts against its own daily quota of 1, checked before the upload.
        form = web.get("/account/upload").body
        assert '<option value="cup">' in form
        fields = {"csrf": csrf, "name": "a", "competition": "cup"}
        bot = {"file": ("a.py", b"")}
        first = web.post_files("/account/upload", fields, bot)
        assert first.status == 303, first  # accepted (its check will find nothing to play)
        again = web.post_files("/account/upload", {**fields, "name": "b"}, bot)
        assert again.status == 429
        assert "competition 'cup': daily submission quota" in html.unescape(again.body)
        (made,) = api.client("alice").get("/v1/submissions")  # nothing stored for the second
        assert made["bot"] == "a"
        assert web.post("/account/enter", {"csrf": csrf, "competition": "nothing"}).status == 404


def test_the_owner_reads_a_versions_league_faults_and_stderr_and_nobody_else(tmp_path: Path) -> None:
    import json

    from apikit import wait_valid

    from workers.bots.submit import store_reference
    from workers.store import repo

    marker = "STDERR-OF-ALICE-6c1f"
    with site(tmp_path) as api:
        alice = api.client("alice")
        sent = alice.post("/v1/submissions", query={"name": "cautious"}, body=pack_archive(GOOD_BOT))
        wait_valid(alice, sent["id"])
        mine = repo.find_version(api.engine, "cautious@1")
        other = store_reference(api.engine, "classic", "random")
        league_id = repo.create_league(
            api.engine, "cup", variant="classic", config={}, seed=1, format="round-robin",
            table_size=2, deals=1, entrants=[mine, other], planned=[(0, 11, [0, 1])],
        )  # fmt: skip
        block = repo.blocks_of(api.engine, league_id)[0]
        detail = json.dumps(
            {
                "faults": [{"kind": "timeout", "reason": "no answer in 2000 ms", "count": 1}],
                "exit": {"status": 1, "signal": None, "limit": None, "stderr": f"Traceback: {marker}"},
            }
        )
        seats = [
            repo.SeatRecord(0, 0, mine.id, 70, 2, {"timeout": 1}, 1, False, 10, detail),
            repo.SeatRecord(1, 1, other.id, 20, 1, {}, 0, False, 10, None),
        ]
        played = repo.MatchRecordRow(
            0, 11, "sha256:" + "0" * 64, "finished", seats, {"seed": 11, "events": []}
        )
        assert repo.record_block(api.engine, block.id, [played])

        web = Web(api.url)
        web.sign_in(api.keys["alice"])
        page = web.get("/account/versions/cautious%401")
        assert page.status == 200
        assert (
            marker in page.body
            and "no answer in 2000 ms" in page.body
            and "exited with status 1" in page.body
        )
        match_id = hidden_match(page.body)
        assert json.loads(web.get(f"/account/matches/{match_id}/transcript").body)["seed"] == 11
        bob = Web(api.url)
        bob.sign_in(api.keys["bob"])
        for path in ("/account/versions/cautious%401", f"/account/matches/{match_id}/transcript"):
            answer = bob.get(path)
            assert answer.status == 404 and marker not in answer.body, path


def hidden_match(body: str) -> int:
    import re

    found = re.search(r'data-match="(\d+)"', body)
    assert found, "no match on the page"
    return int(found.group(1))
