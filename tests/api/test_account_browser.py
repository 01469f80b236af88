"""A participant in a real chromium (Debian's, driven by Playwright, as tests/dashboard does):
signs in with a key at the API's ``/account`` pages, enters a competition with its button,
uploads a bot from the form, watches its validation reach valid (the page follows it by itself),
activates it, and, once the competition has played a round, sees it in the season's standings on
the dashboard's public competition page and its rank on its own page. No page logs an error (the
pages' content security policy forbids inline code) or raises an alert."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apikit import GOOD_BOT, site
from sqlalchemy import Engine, insert, select
from testkit import free_port, wait_for

from api.pages import SESSION_COOKIE
from workers import competition
from workers import league as leagues
from workers.bots import accounts
from workers.bots.submit import reference_version
from workers.store import repo
from workers.store.schema import bot_accounts, bot_owners, bots

REQUIRED = os.environ.get("SIXNIMMT_TEST_BROWSER") == "required"
"""``make test`` sets it (after installing chromium): a missing browser fails instead of skipping."""
if REQUIRED:
    import playwright.sync_api as sync_api
else:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]


def _chromium() -> str | None:
    named = os.environ.get("SIXNIMMT_CHROMIUM")
    for candidate in [named] if named else ["/usr/bin/chromium", shutil.which("chromium")]:
        if candidate and Path(candidate).exists():
            return candidate
    return None


CHROMIUM = _chromium()
NO_CHROMIUM = "no chromium at $SIXNIMMT_CHROMIUM, /usr/bin/chromium or on PATH (apt-get install chromium)"
if CHROMIUM is None and REQUIRED:
    pytest.fail(f"{NO_CHROMIUM}; make test installs it when it can", pytrace=False)
pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM), pytest.mark.slow]


@contextlib.contextmanager
def dashboard(url: str) -> Iterator[str]:
    """``sixnimmt dashboard`` on a free port over the store at ``url``."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env["SIXNIMMT_DATABASE_URL"] = url
    process = subprocess.Popen(
        [sys.executable, "-m", "bot_sdk.cli", "dashboard", "--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _up(base) or process.poll() is not None, 60, "the dashboard to start")
        assert process.poll() is None, "the dashboard exited"
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _up(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _account_id(engine: Engine, name: str) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(bot_accounts.c.id).where(bot_accounts.c.name == name)).scalar_one())


def _bob_plays_lowest(engine: Engine) -> None:
    """bob's account owns the reference bot lowest as bob-lowest@1, active."""
    bob = _account_id(engine, "bob")
    new = reference_version("classic", "lowest")
    version, _ = repo.add_bot_version(
        engine, "bob-lowest", new.content, new.sha256, new.entry_point, "classic"
    )
    with engine.begin() as conn:
        bot_id = conn.execute(select(bots.c.id).where(bots.c.name == "bob-lowest")).scalar_one()
        conn.execute(insert(bot_owners).values(bot_id=bot_id, account_id=bob))
    repo.set_active(engine, bob, f"bob-lowest@{version.version}", True, max_active=3)


def test_sign_in_upload_watch_validation_activate_and_see_the_standings(tmp_path: Path) -> None:
    with site(tmp_path) as api, sync_api.sync_playwright() as playwright:
        engine = api.engine
        competition.create(
            engine, "cup", config={"hands": 1, "target": None}, table_size=2, placement=1, round_deals=2
        )
        _bob_plays_lowest(engine)
        competition.enter(engine, "cup", _account_id(engine, "bob"))

        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        dialogs: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))

        def dialog(d: Any) -> None:
            dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)

        # Signing in with the account's key.
        page.goto(f"{api.url}/account")
        page.wait_for_url("**/account/signin")
        page.fill('input[name="key"]', api.keys["alice"])
        page.click('button[type="submit"]')
        page.wait_for_url(f"{api.url}/account")
        assert page.locator("#who").inner_text() == "alice"
        (cookie,) = [c for c in context.cookies() if c["name"] == SESSION_COOKIE]
        assert (
            cookie["httpOnly"] and cookie["sameSite"] == "Strict" and api.keys["alice"] not in cookie["value"]
        )
        assert page.evaluate("document.cookie") == ""

        # Entering the competition with its button.
        page.locator('#competitions tr[data-competition="cup"] button.enter').click()
        page.wait_for_selector('#competitions tr[data-competition="cup"] .entered')

        # Uploading a bot from the form; its page follows the validation until it ends.
        page.click("#nav-upload")
        page.fill('input[name="name"]', "mybot")
        page.set_input_files('input[name="file"]', str(GOOD_BOT))
        page.click("#upload button[type=submit]")
        page.wait_for_url("**/account/submissions/*")
        page.wait_for_selector("#state .status.valid", timeout=240_000)
        assert page.locator("#stored").inner_text().startswith("Stored as mybot@1")
        assert page.locator("#checks li.error").count() == 0
        assert page.locator("#transcript").count() == 1

        # Activating it: it joins the competition's season (synced as versions activate).
        page.click("#nav-account")
        row = page.locator('#versions tr[data-version="mybot@1"]')
        assert row.locator(".active-state").inner_text() == "inactive"
        row.locator("button.activate").click()
        page.wait_for_selector('#versions tr[data-version="mybot@1"] .active-state b.good')
        assert api.client("alice").get("/v1/versions")[0]["active"]

        # One round of the season (the operator's `competition run`), then the public page.
        competition.touch(engine, "cup")

        def play(league: repo.League, planned: Any) -> dict[str, int]:
            return leagues.run_local(engine, league, processes=2, planned=planned)

        competition.run(engine, "cup", play, rounds=1)
        (season,) = [
            r for r in repo.competition(engine, "cup")["season"]["standings"] if r["bot"] == "mybot@1"
        ]
        assert season["games"] > 0, season
        with dashboard(f"sqlite:///{tmp_path / 'store.db'}") as board:
            page.goto(f"{board}/competitions")
            page.get_by_role("link", name="cup").click()
            page.wait_for_url("**/competitions/cup")
            table = page.locator("#season")
            assert table.locator('tr[data-bot="mybot@1"]').count() == 1
            assert table.locator('tr[data-bot="bob-lowest@1"]').count() == 1
            assert "stderr" not in page.content()
            table.get_by_role("link", name="mybot@1").click()  # its history page
            page.wait_for_url("**/bots/*")

        # The account's page shows the version's rank in the season.
        page.goto(f"{api.url}/account")
        assert "of 2" in page.locator('#versions tr[data-version="mybot@1"] .rank').inner_text()
        accounts.revoke_key(engine, api.keys["alice"])
        page.reload()
        page.wait_for_url("**/account/signin")  # a revoked key ends its session

        assert dialogs == [], dialogs
        assert errors == [], errors
        context.close()
        browser.close()
