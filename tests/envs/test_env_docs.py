"""docs/envs.md describes the observation layouts the encodings really have."""

from __future__ import annotations

from pathlib import Path

from envs.anniversary import anniversary_encoding
from envs.board import board_encoding
from envs.classic import classic_encoding
from envs.core import Encoding
from envs.junior import junior_encoding

DOC = (Path(__file__).resolve().parents[2] / "docs" / "envs.md").read_text()


def table(encoding: Encoding) -> str:
    rows = [f"{encoding.observation_size} floats, {encoding.action_size} actions.", ""]
    rows += ["| part | size | range | holds |", "|---|---|---|---|"]
    rows += [
        f"| `{p['name']}` | {p['size']} | {p['low']:g} … {p['high']:.4g} | {p['doc']} |"
        for p in encoding.describe()
    ]
    return "\n".join(rows)


def test_each_games_table_in_the_doc_is_its_encodings_layout() -> None:
    encodings = [
        classic_encoding(),
        junior_encoding("junior-experts"),
        board_encoding({"pro": True, "luck": True}),
        anniversary_encoding(),
    ]
    for encoding in encodings:
        assert table(encoding) in DOC, encoding.variant.name
