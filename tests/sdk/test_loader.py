"""Loading bots from reference names and from authors' files, with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot_sdk.bot import Bot
from bot_sdk.loader import BotLoadError, load_bot, spec_label


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


GOOD = """
from bot_sdk import ClassicBot
class Mine(ClassicBot):
    def choose_card(self, view):
        return view.hand[0]
"""


def test_reference_and_file_bots_load(tmp_path: Path) -> None:
    assert issubclass(load_bot("random"), Bot)
    cls = load_bot(write(tmp_path, "mine.py", GOOD))
    assert cls.__name__ == "Mine"
    assert spec_label(str(tmp_path / "mine.py")) == "mine"
    assert spec_label(str(tmp_path / "mine.py") + ":Mine") == "mine:Mine"


def test_a_named_class_is_picked_among_several(tmp_path: Path) -> None:
    path = write(tmp_path, "two.py", GOOD + GOOD.replace("Mine", "Other"))
    with pytest.raises(BotLoadError, match="exactly one Bot subclass"):
        load_bot(path)
    assert load_bot(path + ":Other").__name__ == "Other"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("this is not python", "importing"),
        ("raise SystemError('boom')", "importing"),
        ("X = 1", "exactly one Bot subclass"),
        ("from bot_sdk import Bot\nclass J(Bot):\n    variants = ('junior-basic',)\n", "plays junior-basic"),
    ],
)
def test_malformed_bot_files_are_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(BotLoadError, match=message):
        load_bot(write(tmp_path, "bad.py", text))
