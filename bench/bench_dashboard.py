"""Dashboard page times on a league of 100,000 matches (10,000 with --quick).

The store (a SQLite file, migrated) is filled by bulk inserts, not by playing: 8 bots, tables of
4, 25,000 duplicate blocks of 4 matches, 400,000 seat results, stored ratings. Pages are
requested through the ASGI app in this process (routing, queries, templates; no sockets), after
one warm-up request each.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert

from dashboard import leaguestats
from dashboard.app import create_app
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import (
    artifacts,
    blocks,
    bot_versions,
    bots,
    league_entrants,
    leagues,
    matches,
    ratings,
    seat_results,
)

ENTRANTS = 8
TABLE = 4
CHUNK = 20_000


def fill(engine: Engine, n_matches: int, seed: int = 1) -> int:
    """A league of ``n_matches`` stored matches; returns its id."""
    rng = random.Random(seed)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    with engine.begin() as conn:
        for i in range(ENTRANTS):
            content = f"bot {i}".encode()
            sha = hashlib.sha256(content).hexdigest()
            conn.execute(insert(artifacts).values(sha256=sha, content=content, size=len(content)))
            conn.execute(insert(bots).values(id=i + 1, name=f"bot{i}"))
            conn.execute(
                insert(bot_versions).values(
                    id=i + 1, bot_id=i + 1, version=1, sha256=sha, entry_point="bot.py", variant="classic"
                )
            )
        conn.execute(
            insert(leagues).values(
                id=1,
                name="big",
                variant="classic",
                config={"players": TABLE},
                seed=seed,
                format="round-robin",
                table_size=TABLE,
                deals=n_matches // TABLE,
                seat_key=b"k" * 32,
            )
        )
        conn.execute(
            insert(league_entrants),
            [{"league_id": 1, "position": p, "bot_version_id": p + 1} for p in range(ENTRANTS)],
        )
        n_blocks = n_matches // TABLE
        block_rows, match_rows, seat_rows = [], [], []
        match_id = 0
        for b in range(n_blocks):
            members = rng.sample(range(ENTRANTS), TABLE)
            finished = start + dt.timedelta(seconds=b)
            block_rows.append(
                {
                    "id": b + 1,
                    "league_id": 1,
                    "number": b,
                    "seed": rng.getrandbits(62),
                    "entrants": members,
                    "status": "done",
                    "attempts": 1,
                    "claimed_by": "bench:1",
                    "claimed_at": finished - dt.timedelta(seconds=3),
                    "finished_at": finished,
                }
            )
            for rotation in range(TABLE):
                match_id += 1
                seating = members[rotation:] + members[:rotation]
                scores = [rng.randrange(0, 70) for _ in seating]
                match_rows.append(
                    {
                        "id": match_id,
                        "block_id": b + 1,
                        "rotation": rotation,
                        "seed": 1,
                        "digest": "sha256:" + "0" * 64,
                        "termination": "target_reached",
                    }
                )
                for seat, position in enumerate(seating):
                    seat_rows.append(
                        {
                            "match_id": match_id,
                            "seat": seat,
                            "position": position,
                            "bot_version_id": position + 1,
                            "score": scores[seat],
                            "rank": 1 + sum(s < scores[seat] for s in scores),
                            "timeouts": int(rng.random() < 0.01),
                        }
                    )
            if len(seat_rows) >= CHUNK or b == n_blocks - 1:
                conn.execute(insert(blocks), block_rows)
                conn.execute(insert(matches), match_rows)
                conn.execute(insert(seat_results), seat_rows)
                block_rows, match_rows, seat_rows = [], [], []
        games = n_matches * TABLE // ENTRANTS
        conn.execute(
            insert(ratings),
            [
                {
                    "league_id": 1,
                    "position": p,
                    "mu": 25.0 + p,
                    "sigma": 0.5,
                    "ordinal": 23.5 + p,
                    "games": games,
                    "mean_score": 30.0 - p,
                    "ci_low": 29.0 - p,
                    "ci_high": 31.0 - p,
                    "faults": games // 100,
                }
                for p in range(ENTRANTS)
            ],
        )
    return 1


def timed(client: Any, path: str, requests: int) -> list[float]:
    """Milliseconds per request of ``path``, after one warm-up request."""
    assert client.get(path).status_code == 200, path
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, path
    return times


def p95(times: list[float]) -> float:
    return round(statistics.quantiles(times, n=20)[-1], 2)


def run(quick: bool) -> Iterator[dict[str, Any]]:
    from starlette.testclient import TestClient

    n_matches = 10_000 if quick else 100_000
    requests = 20 if quick else 200
    with tempfile.TemporaryDirectory(prefix="sixnimmt-bench-dashboard-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'store.db'}"
        writer = make_engine(url)
        upgrade(writer)
        started = time.perf_counter()
        league_id = fill(writer, n_matches)
        yield {
            "name": "dashboard.fill.matches_per_s",
            "value": round(n_matches / (time.perf_counter() - started)),
            "unit": "matches/s",
        }
        writer.dispose()
        engine = make_engine(url, read_only=True)
        with TestClient(create_app(engine)) as client:
            times = timed(client, f"/leagues/{league_id}", requests)
            yield {"name": "dashboard.league_page.p95_ms", "value": p95(times), "unit": "ms"}
            yield {
                "name": "dashboard.league_page.median_ms",
                "value": round(statistics.median(times), 2),
                "unit": "ms",
            }
            pages = {
                "leagues_page": "/",
                "league_api": f"/api/leagues/{league_id}",
                "matches_page_deep": f"/leagues/{league_id}/matches?page={n_matches // 100}",
                "bot_matches_page": "/bots/1/matches?page=10",
                "live_page": "/live",
            }
            for name, path in pages.items():
                yield {
                    "name": f"dashboard.{name}.p95_ms",
                    "value": p95(timed(client, path, requests // 4)),
                    "unit": "ms",
                }
            started = time.perf_counter()
            assert client.get("/bots/1").status_code == 200
            yield {
                "name": "dashboard.bot_page.first_ms",
                "value": round((time.perf_counter() - started) * 1000, 1),
                "unit": "ms",
            }
            # The statistics behind the bot page (ratings over time, results by opponent) are
            # computed in the background; time that directly, then the page once they are there.
            started = time.perf_counter()
            leaguestats.load(engine, league_id, ENTRANTS)
            yield {
                "name": "dashboard.league_stats.compute_s",
                "value": round(time.perf_counter() - started, 2),
                "unit": "s",
            }
            deadline = time.monotonic() + 300
            while "stats-pending" in client.get("/bots/1").text:
                assert time.monotonic() < deadline, "the bot page's statistics never arrived"
                time.sleep(0.5)
            yield {
                "name": "dashboard.bot_page.p95_ms",
                "value": p95(timed(client, "/bots/1", requests // 4)),
                "unit": "ms",
            }
        engine.dispose()
