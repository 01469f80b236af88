"""The operator signs in through the form in a real chromium and reads a leaky bot's stderr and
fault reasons on its match page; before signing in, after a wrong token and after signing out the
same page shows the fault kinds and counts only. The session cookie is HttpOnly and SameSite=Strict.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_browser import CHROMIUM, CHROMIUM_ARGS, NO_CHROMIUM, Watched, dashboard_server, sync_api
from test_private_logs import REASON_MARKER, STDERR_MARKER, TOKEN, Played, played

from dashboard.access import SESSION_COOKIE

__all__ = ["played"]  # the league with the leaky bot, a fixture of test_private_logs

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def shows_no_logs(page: Any) -> None:
    html = page.content()
    assert STDERR_MARKER not in html and REASON_MARKER not in html and "ValueError" not in html


def test_the_operator_signs_in_through_the_form_to_read_the_logs(browser: Any, played: Played) -> None:
    with dashboard_server(played.url, {"SIXNIMMT_DASHBOARD_OPERATOR_TOKEN": TOKEN}) as base:
        watched = Watched(browser)
        page = watched.page
        match = f"{base}/matches/{played.match_id}"
        page.goto(match)
        faults = page.locator(f'.seat-faults[data-seat="{played.seat}"]')
        assert f"exception ×{played.exceptions}" in faults.locator(".fault-kinds").inner_text()
        assert faults.locator(".fault-reasons").count() == 0
        shows_no_logs(page)

        # A wrong token: the form again, with a failure that says nothing more, and no logs.
        page.locator("#signin").click()
        page.wait_for_url(lambda url: "/signin?next=" in url)
        page.fill('input[name="token"]', TOKEN + "-wrong")
        with page.expect_navigation() as wrong:
            page.click('button[type="submit"]')
        assert wrong.value is not None and wrong.value.status == 401
        assert page.locator("#signin-failed").inner_text() == "Sign-in failed."
        assert len(watched.errors) == 1 and "401" in watched.errors[0]  # chromium logs the 401 itself
        watched.errors.clear()
        assert not [c for c in watched.context.cookies() if c["name"] == SESSION_COOKIE]
        page.goto(match)
        shows_no_logs(page)

        # The token: back on the match page, which now shows the reasons and the stderr.
        page.locator("#signin").click()
        page.fill('input[name="token"]', TOKEN)
        page.click('button[type="submit"]')
        page.wait_for_url(match)
        assert page.locator("#operator").is_visible()
        assert REASON_MARKER in faults.locator(".fault-reasons").inner_text()
        faults.locator("details.stderr summary").click()
        assert STDERR_MARKER in faults.locator("details.stderr pre").inner_text()
        watched.shot("match-operator")
        (cookie,) = [c for c in watched.context.cookies() if c["name"] == SESSION_COOKIE]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
        assert page.evaluate("document.cookie") == ""  # no script reads the session

        # Signing out: the same page shows no logs again.
        page.locator("form.signout button").click()
        page.wait_for_url(f"{base}/")
        page.goto(match)
        shows_no_logs(page)
        assert page.locator("#signin").is_visible()
        watched.check()
