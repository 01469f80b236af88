"""A sandboxed bot flooding its league's referee with Hello-less streams costs only itself.

The hostile bot ``tests/workers/hostile_bots/hello_flood.py`` is stored as a version and plays a
league against reference bots through the real machinery (``workers.league``: a pool process, the
referee on a Unix socket, every bot sandboxed, warm between blocks). At its first decision it
floods the referee for two seconds with streams that never send a Hello, anonymous ones and ones
naming its own token. The other bots (SDK bots, which name their tokens in the call's metadata)
play every block without a fault; the flooder's seats carry its report and protocol faults whose
reason names the per-token limit.
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from pathlib import Path

import pytest

from workers import league
from workers.bots.artifacts import pack
from workers.play.faults import parse_detail
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

HOSTILE = Path(__file__).resolve().parents[1] / "workers" / "hostile_bots" / "hello_flood.py"


@pytest.mark.slow
def test_a_sandboxed_hello_flood_costs_the_other_bots_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = secrets.token_hex(6)
    bot = tmp_path / f"hello_flood_{token}.py"
    bot.write_text(HOSTILE.read_text().replace("__TOKEN__", token))
    store = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.setenv("SIXNIMMT_DATABASE_URL", store)
    # The flood takes two seconds of the flooder's first decision: within its bank.
    monkeypatch.setenv("SIXNIMMT_DECISION_MS", "2000")
    monkeypatch.setenv("SIXNIMMT_BANK_MS", "10000")
    engine = make_engine(store)
    upgrade(engine)
    artifact = pack(bot)
    version, _ = repo.add_bot_version(
        engine, "hostile-hello-flood", artifact.content, artifact.sha256, artifact.entry_point, "classic"
    )
    planned = league.create(
        engine,
        f"flood-{token}",
        ["hostile-hello-flood", "random", "heuristic", "lowest"],
        table_size=4,
        deals=1,
        seed=5,
        config={"hands": 1, "target": None},
    )
    counts = league.run_local(engine, planned, processes=1)
    assert counts == {"stored": 1}

    reasons: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for version_id, text in repo.fault_details(engine, planned.id):
        detail = parse_detail(text) or {}
        reasons[version_id] += [(f["kind"], f["reason"]) for f in detail.get("faults", [])]
    flooder = reasons.pop(version.id, [])
    print(f"the flooder's faults: {sorted({(k, r.strip().splitlines()[-1][:200]) for k, r in flooder})}")
    # Nobody else paid.
    assert {v: r for v, r in reasons.items() if r} == {}
    # The flooder did flood, was stopped, and was charged for it.
    assert any(k == "exception" and "hostile hello_flood: blocked:" in r for k, r in flooder), flooder
    assert any(k == "protocol" and "SIXNIMMT_" in r and "flood" in r for k, r in flooder), flooder
