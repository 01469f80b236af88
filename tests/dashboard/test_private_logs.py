"""Seats' logs are the operator's: a bot's stderr and its fault reasons never reach anonymous visitors.

A real league (sandboxed bots over gRPC, ``run_local``) plays a bot that prints a marker to its
stderr and raises with another marker in its exception. Every route of the dashboard, asked
anonymously, shows neither marker but each seat's fault kind and count; the operator (Bearer token,
or the session cookie of the sign-in form) reads both; wrong credentials get a bare 401.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from starlette.routing import Route
from starlette.testclient import TestClient

from dashboard.access import SESSION_COOKIE, TokenTooShortError
from dashboard.app import create_app
from workers import league as leagues
from workers.bots.artifacts import pack
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import blocks, bot_versions, matches, seat_results

TOKEN = "operator-token-5d1e0c77a9b24f61"
STDERR_MARKER = "LEAKED-STDERR-3f9a61c2"
REASON_MARKER = "LEAKED-REASON-8be04d17"
LEAKY = f"""
import sys
from bot_sdk import ClassicBot

class Leaky(ClassicBot):
    def choose_card(self, view):
        sys.stderr.write("{STDERR_MARKER}: the code I read\\n")
        sys.stderr.flush()
        if len(view.hand) % 3 == 0:
            raise ValueError("{REASON_MARKER}")
        return view.hand[0]
"""


@dataclass(frozen=True)
class Played:
    url: str
    engine: Engine
    league_id: int
    match_id: int
    """A match where the leaky bot faulted."""
    seat: int
    exceptions: int
    """Its seat's exception count in that match."""
    bot_id: int


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    directory = tmp_path_factory.mktemp("private-logs")
    url = f"sqlite:///{directory / 'store.db'}"
    writer = make_engine(url)
    upgrade(writer)
    source = directory / "leaky.py"
    source.write_text(LEAKY)
    artifact = pack(source, max_bytes=1 << 20)  # stored unchecked: the conformance check refuses faults
    version, _ = repo.add_bot_version(
        writer, "leaky", artifact.content, artifact.sha256, artifact.entry_point, "classic"
    )
    league = leagues.create(
        writer, "private-logs", ["leaky", "random", "lowest"], table_size=3, deals=1, seed=5,
        config={"hands": 1, "target": None},
    )  # fmt: skip
    assert leagues.run_local(writer, league, processes=1) == {"stored": 1}
    with writer.connect() as conn:
        row = conn.execute(
            select(seat_results.c.match_id, seat_results.c.seat, seat_results.c.exceptions)
            .join(matches, matches.c.id == seat_results.c.match_id)
            .join(blocks, blocks.c.id == matches.c.block_id)
            .where(blocks.c.league_id == league.id, seat_results.c.bot_version_id == version.id)
            .where(seat_results.c.exceptions > 0)
            .order_by(seat_results.c.match_id)
        ).first()
        assert row is not None, "the leaky bot never faulted"
        detail = conn.execute(
            select(seat_results.c.fault_detail).where(
                seat_results.c.match_id == row.match_id, seat_results.c.seat == row.seat
            )
        ).scalar_one()
        bot_id = conn.execute(
            select(bot_versions.c.bot_id).where(bot_versions.c.id == version.id)
        ).scalar_one()
    # The store holds both markers: what the dashboard must keep to the operator.
    assert STDERR_MARKER in detail and REASON_MARKER in detail
    writer.dispose()
    engine = make_engine(url, read_only=True)
    yield Played(url, engine, league.id, row.match_id, row.seat, row.exceptions, bot_id)
    engine.dispose()


def every_get_path(app: Any, played: Played) -> list[str]:
    """Every GET route of the app with this league's ids (and the viewer's query forms)."""
    ids = {"league_id": played.league_id, "bot_id": played.bot_id, "match_id": played.match_id}
    paths = []
    for route in app.routes:
        if not isinstance(route, Route) or "GET" not in (route.methods or ()):
            continue
        if any(name not in ids for name in re.findall(r"\{(\w+):int\}", route.path)):
            continue  # games against people: tests/dashboard/test_play_hosted_private.py
        if re.search(r"\{\w+:(?!int\})", route.path):
            continue  # competitions by name: tests/dashboard/test_competition_pages.py
        path = re.sub(r"\{(\w+):int\}", lambda m: str(ids[m.group(1)]), route.path)
        paths.append(path)
    match = f"/matches/{played.match_id}"
    paths += [
        f"{match}?step=0", f"{match}?seat={played.seat}", f"/api{match}/replay?step=1",
        f"/api{match}/replay?seat={played.seat}", f"/live?league={played.league_id}",
        f"/live/fragment?league={played.league_id}", f"/api/live?league={played.league_id}",
    ]  # fmt: skip
    assert {f"/api{match}", match, f"/api{match}/replay", "/live/fragment"} <= set(paths)
    return paths


def no_logs(text: str) -> None:
    assert STDERR_MARKER not in text and REASON_MARKER not in text
    assert "the end of its stderr" not in text and "ValueError" not in text


def seat_of(info: dict[str, Any], seat: int) -> dict[str, Any]:
    return next(s for s in info["seats"] if s["seat"] == seat)


@pytest.mark.parametrize("token", [TOKEN, ""], ids=["operator-token-set", "no-operator-token"])
def test_anonymous_visitors_see_fault_kinds_and_counts_only(played: Played, token: str) -> None:
    app = create_app(played.engine, operator_token=token)
    with TestClient(app) as client:
        for path in every_get_path(app, played):
            response = client.get(path)
            assert response.status_code == 200, (path, response.status_code)
            no_logs(response.text)
            assert "no-store" not in response.headers.get("cache-control", "")
        info = client.get(f"/api/matches/{played.match_id}").json()["match"]
        html = client.get(f"/matches/{played.match_id}").text
    seat = seat_of(info, played.seat)
    assert "fault_detail" not in seat
    assert (
        seat["fault_kinds"]["exception"]
        == played.exceptions
        == seat["faults"] - sum(v for k, v in seat["fault_kinds"].items() if k != "exception")
    )
    assert f'data-seat="{played.seat}"' in html
    assert f"<b>exception</b> ×{played.exceptions}" in html
    assert "shown to the operator" in html


def test_the_operator_reads_them_with_the_bearer_token(played: Played) -> None:
    app = create_app(played.engine, operator_token=TOKEN)
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(app) as client:
        info = client.get(f"/api/matches/{played.match_id}", headers=bearer)
        replay = client.get(f"/api/matches/{played.match_id}/replay?step=0", headers=bearer)
        html = client.get(f"/matches/{played.match_id}", headers=bearer)
    assert info.status_code == replay.status_code == html.status_code == 200
    assert info.headers["cache-control"] == "no-store" and "Authorization" in info.headers["vary"]
    detail = seat_of(info.json()["match"], played.seat)["fault_detail"]
    assert REASON_MARKER in detail["faults"][0]["reason"]
    assert STDERR_MARKER in detail["exit"]["stderr"]
    assert STDERR_MARKER in seat_of(replay.json()["match"], played.seat)["fault_detail"]["exit"]["stderr"]
    assert REASON_MARKER in html.text and STDERR_MARKER in html.text
    assert "the end of its stderr" in html.text


@pytest.mark.parametrize(
    "authorization",
    [
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        "Bearer ",
        f"Basic {TOKEN}",
        TOKEN,
        f"Bearer {TOKEN} {TOKEN}",
    ],
    ids=["longer", "shorter", "empty", "basic", "no-scheme", "twice"],
)
def test_wrong_credentials_get_a_bare_401_on_every_route(played: Played, authorization: str) -> None:
    app = create_app(played.engine, operator_token=TOKEN)
    with TestClient(app) as client:
        for path in every_get_path(app, played):
            response = client.get(path, headers={"Authorization": authorization})
            assert response.status_code == 401, path
            assert response.json() == {"error": "unauthorized"}
            assert response.headers["www-authenticate"] == "Bearer"


def test_without_a_token_configured_nobody_is_the_operator(played: Played) -> None:
    app = create_app(played.engine, operator_token="")
    with TestClient(app) as client:
        for authorization in ("Bearer ", "Bearer x", f"Bearer {TOKEN}"):
            response = client.get(f"/api/matches/{played.match_id}", headers={"Authorization": authorization})
            assert response.status_code == 401
        signed = client.post("/signin", data={"token": ""}, follow_redirects=False)
        assert signed.status_code == 401 and SESSION_COOKIE not in signed.cookies
        assert 'id="signin"' not in client.get("/").text  # no sign-in link where nobody can sign in


def test_the_sign_in_form_sets_a_signed_session_cookie(played: Played) -> None:
    app = create_app(played.engine, operator_token=TOKEN)
    match = f"/matches/{played.match_id}"
    with TestClient(app, base_url="https://dashboard.example") as client:
        form = client.get(f"/signin?next={match}")
        assert form.status_code == 200 and 'name="token"' in form.text and f'value="{match}"' in form.text
        signed = client.post("/signin", data={"token": TOKEN, "next": match}, follow_redirects=False)
        assert signed.status_code == 303 and signed.headers["location"] == match
        header = signed.headers["set-cookie"]
        attributes = {a.strip().split("=")[0].lower() for a in header.split(";")[1:]}
        assert {"httponly", "secure", "samesite", "max-age", "path"} <= attributes
        assert "samesite=strict" in header.lower()
        value = client.cookies[SESSION_COOKIE]
        assert TOKEN not in value and TOKEN not in header
        page = client.get(match)
        assert STDERR_MARKER in page.text and REASON_MARKER in page.text and 'id="operator"' in page.text
        assert page.headers["cache-control"] == "no-store"
        api = client.get(f"/api{match}").json()["match"]
        assert STDERR_MARKER in seat_of(api, played.seat)["fault_detail"]["exit"]["stderr"]
        # Signing out removes the cookie: the next request is anonymous.
        out = client.post("/signout", follow_redirects=False)
        assert out.status_code == 303
        no_logs(client.get(match).text)
    # Over plain HTTP the cookie is not Secure (a browser would not send it back), over a TLS
    # proxy that says so it is.
    with TestClient(app) as client:
        plain = client.post("/signin", data={"token": TOKEN}, follow_redirects=False)
        assert plain.status_code == 303 and "secure" not in plain.headers["set-cookie"].lower()
        proxied = client.post(
            "/signin", data={"token": TOKEN}, headers={"X-Forwarded-Proto": "https"}, follow_redirects=False
        )
        assert "secure" in proxied.headers["set-cookie"].lower()


@pytest.mark.parametrize(
    "cookie",
    ["", "x", "9999999999.nonce.0000", "{session}x", "{expires_forged}", "{other_token}"],
    ids=["empty", "junk", "unsigned", "tampered-signature", "forged-expiry", "other-token"],
)
def test_a_session_not_signed_by_this_token_is_anonymous(played: Played, cookie: str) -> None:
    from dashboard.access import OperatorAuth

    session = OperatorAuth(TOKEN).new_session()
    expires, nonce, signature = session.split(".")
    values = {
        "session": session,
        "expires_forged": f"{int(expires) + 10**6}.{nonce}.{signature}",
        "other_token": OperatorAuth(TOKEN + "-old").new_session(),
    }
    app = create_app(played.engine, operator_token=TOKEN)
    with TestClient(app) as client:
        client.cookies.set(SESSION_COOKIE, cookie.format(**values))
        response = client.get(f"/api/matches/{played.match_id}")
        assert response.status_code == 200
        no_logs(response.text)
        client.cookies.set(SESSION_COOKIE, session)  # the untouched one does read them
        assert STDERR_MARKER in client.get(f"/api/matches/{played.match_id}").text


def test_an_expired_session_is_anonymous() -> None:
    from dashboard.access import SESSION_SECONDS, OperatorAuth

    now = [1_000_000.0]
    auth = OperatorAuth(TOKEN, clock=lambda: now[0])
    session = auth.new_session()
    assert auth.session_valid(session)
    now[0] += SESSION_SECONDS + 1
    assert not auth.session_valid(session)


@pytest.mark.parametrize(
    "form",
    [
        {"token": TOKEN + "x"},
        {"token": ""},
        {},
        {"token": TOKEN.upper()},
        {"token": TOKEN, **{f"f{i}": "x" for i in range(8)}},
        {"token": TOKEN, "pad": "x" * 5000},
    ],
    ids=["wrong", "empty", "none", "case", "many-fields", "too-big"],
)
def test_a_failed_sign_in_is_a_401_that_says_nothing_more(
    played: Played, form: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(played.engine, operator_token=TOKEN)
    with caplog.at_level(logging.DEBUG), TestClient(app) as client:
        failed = client.post("/signin", data=form, follow_redirects=False)
        assert failed.status_code == 401 and "set-cookie" not in failed.headers
        assert "Sign-in failed." in failed.text and TOKEN not in failed.text
        assert SESSION_COOKIE not in client.cookies
        no_logs(client.get(f"/matches/{played.match_id}").text)
        # The right token from another site's form is refused too.
        foreign = client.post(
            "/signin",
            data={"token": TOKEN},
            headers={"Origin": "https://evil.example"},
            follow_redirects=False,
        )
        assert foreign.status_code == 401 and "set-cookie" not in foreign.headers
        client.post("/signin", data={"token": TOKEN}, follow_redirects=False)
    assert all(TOKEN not in record.getMessage() for record in caplog.records)


def test_sign_in_goes_back_only_to_this_sites_paths(played: Played) -> None:
    app = create_app(played.engine, operator_token=TOKEN)
    with TestClient(app) as client:
        for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"):
            signed = client.post("/signin", data={"token": TOKEN, "next": target}, follow_redirects=False)
            assert signed.status_code == 303 and signed.headers["location"] == "/", target


def test_a_short_operator_token_is_refused(played: Played) -> None:
    with pytest.raises(TokenTooShortError):
        create_app(played.engine, operator_token="short")


def test_the_cli_refuses_a_short_token_in_one_line(tmp_path: Path) -> None:
    from testkit import sixnimmt

    env = {
        "SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}",
        "SIXNIMMT_DASHBOARD_OPERATOR_TOKEN": "tiny",
    }
    done = sixnimmt(tmp_path, "dashboard", "--port", "0", env=env)
    assert done.returncode == 2
    assert done.stderr.startswith("sixnimmt: error: SIXNIMMT_DASHBOARD_OPERATOR_TOKEN must be at least 16")
    assert len(done.stderr.splitlines()) == 1 and "tiny" not in done.stderr


def test_sixnimmt_settings_masks_the_operator_token(tmp_path: Path) -> None:
    from testkit import sixnimmt

    done = sixnimmt(tmp_path, "settings", env={"SIXNIMMT_DASHBOARD_OPERATOR_TOKEN": TOKEN})
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("SIXNIMMT_DASHBOARD_OPERATOR_TOKEN")]
    assert "***" in line and TOKEN not in done.stdout + done.stderr
