"""The committed wire code is what ``make proto`` generates from ``proto/sixnimmt/v1`` today."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_committed_generated_code_is_fresh(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("proto_generate", REPO / "proto" / "generate.py")
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)

    fresh = {p.relative_to(tmp_path): p.read_bytes() for p in generate.generate(tmp_path)}
    committed = {
        p.relative_to(REPO): p.read_bytes() for p in sorted((REPO / "sixnimmt" / "v1").glob("*_pb2*.py*"))
    }
    assert sorted(fresh) == sorted(committed), "generated files differ: run `make proto`"
    stale = [str(path) for path, content in fresh.items() if committed[path] != content]
    assert not stale, f"stale generated code in {stale}: run `make proto`"
