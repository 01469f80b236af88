"""A person at the table (``sixnimmt play --human``, docs/play.md) in a real browser: Debian's
chromium driven by Playwright, on the local defaults (classic, four seats: the person and three
``random`` bots, which answer at once; the people's time control).

- ``human.page_ready_ms``: from starting the command to a playable page (the first option button
  visible in the browser, which was already running, as a person's is); median of the runs.
- ``human.url_printed_ms``: from starting the command to its URL printed (the command's own
  start: imports, the server), the first part of ``human.page_ready_ms``.
- ``human.decision_rtt_ms``: from a click on an option to the next decision's options shown
  (the choice posted, the referee's step, the bots' answers, the next request, the long poll's
  answer and the table swapped in), measured inside the page; median over the decisions of
  the runs, and ``human.decision_rtt_p95_ms`` its 95th percentile.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
]
OPEN = "#options button.option:not([disabled])"

CLICK_TO_NEXT_VIEW = """old => new Promise(resolve => {
  const box = document.getElementById('table-box');
  const started = performance.now();
  const seen = new MutationObserver(() => {
    const table = document.getElementById('table');
    const request = table && table.dataset.request;
    if (request && request !== old && document.querySelector('#options button.option:not([disabled])')) {
      seen.disconnect();
      resolve(performance.now() - started);
    }
  });
  seen.observe(box, {childList: true, subtree: true});
  document.querySelector('#options button.option[data-index="0"]').click();
})"""


def chromium() -> str:
    named = os.environ.get("SIXNIMMT_CHROMIUM")
    for candidate in [named] if named else ["/usr/bin/chromium", shutil.which("chromium")]:
        if candidate and Path(candidate).exists():
            return candidate
    raise RuntimeError("no chromium (apt-get install chromium, or set SIXNIMMT_CHROMIUM)")


def one_table(browser: Any, decisions: int) -> tuple[float, float, list[float]]:
    """Start the command, time the page until playable, then time up to ``decisions`` clicks."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    command = [sys.executable, "-m", "bot_sdk.cli", "play", "--human", "--bots", "random,random,random",
               "--no-open", "--json"]  # fmt: skip
    context = browser.new_context()
    page = context.new_page()
    started = time.perf_counter()
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=REPO
    )
    try:
        assert run.stdout is not None
        url = json.loads(run.stdout.readline())["url"]
        printed_ms = (time.perf_counter() - started) * 1000
        page.goto(url)
        page.wait_for_selector(OPEN, timeout=120_000)
        ready_ms = (time.perf_counter() - started) * 1000
        rtts = []
        while len(rtts) < decisions and page.locator("#hand [data-card]").count() >= 2:
            request = page.locator("#table").get_attribute("data-request")
            rtts.append(page.evaluate(CLICK_TO_NEXT_VIEW, request))
        return printed_ms, ready_ms, rtts
    finally:
        context.close()
        run.send_signal(signal.SIGINT)
        try:
            run.wait(30)
        except subprocess.TimeoutExpired:
            run.kill()
            run.wait()


def run(quick: bool = False) -> Iterator[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    tables, decisions = (1, 4) if quick else (5, 8)
    printed: list[float] = []
    ready: list[float] = []
    rtts: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            one_table(browser, 1)  # warm-up: the interpreter's and the browser's caches
            for _ in range(tables):
                url, first, clicks = one_table(browser, decisions)
                printed.append(url)
                ready.append(first)
                rtts += clicks
        finally:
            browser.close()
    yield {"name": "human.page_ready_ms", "value": round(statistics.median(ready), 1), "unit": "ms"}
    yield {"name": "human.url_printed_ms", "value": round(statistics.median(printed), 1), "unit": "ms"}
    yield {"name": "human.decision_rtt_ms", "value": round(statistics.median(rtts), 1), "unit": "ms"}
    p95 = statistics.quantiles(rtts, n=20)[-1] if len(rtts) >= 2 else rtts[0]
    yield {"name": "human.decision_rtt_p95_ms", "value": round(p95, 1), "unit": "ms"}


if __name__ == "__main__":
    for row in run("--quick" in sys.argv):
        print(json.dumps(row))
