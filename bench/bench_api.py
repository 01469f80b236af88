"""The platform's API (``sixnimmt api serve``) on the local defaults: a SQLite store and the API's
own validation threads, served by uvicorn on a real socket in this process.

- ``api.submit_to_valid_s``: an upload of ``examples/cautious_bot.py`` through the SDK's client
  until its validation (the sandboxed check game of ``bot submit``) says valid; the median of 3
  uploads (1 with --quick), each under a new name, so each is validated.
- ``api.requests_per_s``: authenticated reads of ``GET /v1/versions`` (the key checked, the account's
  versions read) one after another over one keep-alive connection, for 3 s (1 s with --quick); the
  client runs in the same process as the server, so the figure is a floor of one API process's.
"""

from __future__ import annotations

import http.client
import statistics
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from api.app import create_app, serving
from bot_sdk.client import Client, pack_archive
from referee.settings import load
from workers.bots import accounts
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

BOT = Path(__file__).resolve().parents[1] / "examples" / "cautious_bot.py"


def run(quick: bool) -> Iterator[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'store.db'}")
        upgrade(engine)
        accounts.create_account(engine, "bench")
        key = accounts.create_key(engine, "bench")[1]
        settings = load(
            {
                "SIXNIMMT_API_RATE_PER_S": str(10**6),
                "SIXNIMMT_API_BURST": str(10**6),
                "SIXNIMMT_API_SUBMISSIONS_PER_DAY": "1000",
            }
        )
        try:
            with serving(create_app(engine, settings)) as url:
                client = Client(url, key)
                body = pack_archive(BOT)
                times = []
                for n in range(1 if quick else 3):
                    started = time.perf_counter()
                    sent = client.post("/v1/submissions", query={"name": f"bench{n}"}, body=body)
                    while sent["status"] == "pending":
                        time.sleep(0.02)
                        sent = client.get(f"/v1/submissions/{sent['id']}")
                    if sent["status"] != "valid":
                        raise RuntimeError(f"the benchmark's bot was not valid: {sent['reason']}")
                    times.append(time.perf_counter() - started)
                yield {
                    "name": "api.submit_to_valid_s",
                    "value": round(statistics.median(times), 3),
                    "unit": "s",
                }
                yield {
                    "name": "api.requests_per_s",
                    "value": _reads(url, key, 1.0 if quick else 3.0),
                    "unit": "1/s",
                }
        finally:
            engine.dispose()


def _reads(url: str, key: str, seconds: float) -> float:
    where = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    headers = {"Authorization": f"Bearer {key}"}
    try:
        count, started = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - started) < seconds:
            conn.request("GET", "/v1/versions", headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"GET /v1/versions answered {response.status}")
            count += 1
        return round(count / elapsed, 1)
    finally:
        conn.close()
