"""Commands whose extra is not installed: one line naming the extra, never a traceback.

Here in-process, with a plugin that cannot be imported and a command that imports a missing
library; tests/sdk/test_sdk_only.py does it for real in a venv of the base install.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot_sdk import cli

EXTRA = "pip install 'sixnimmt-arena[server]'"


class Unimportable:
    """An entry point whose module imports a library that is not installed."""

    name = "ledger"

    def __init__(self, missing: str) -> None:
        self.missing = missing

    def load(self) -> Any:
        raise ModuleNotFoundError(f"No module named {self.missing!r}", name=self.missing)


class Lazy:
    """An entry point that registers fine and imports a missing library when its command runs."""

    name = "lazy"

    def load(self) -> Any:
        def register(sub: Any) -> None:
            def run(args: Any) -> int:
                raise ModuleNotFoundError("No module named 'uvicorn'", name="uvicorn")

            sub.add_parser("lazy", help="needs uvicorn when it runs").set_defaults(func=run)

        return register


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    installed: list[Any] = []
    monkeypatch.setattr(cli, "entry_points", lambda group: list(installed))
    return installed


def test_a_plugin_that_cannot_be_imported_is_a_stand_in_that_names_the_extra(
    plugins: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    plugins.append(Unimportable("sqlalchemy"))
    help_text = cli.build_parser().format_help()
    (line,) = [line for line in help_text.splitlines() if line.strip().startswith("ledger")]
    assert EXTRA in line
    assert cli.main(["ledger", "list", "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"sixnimmt ledger: this command needs sqlalchemy, which is not installed: {EXTRA}"]


def test_a_command_that_imports_a_missing_library_says_which_extra(
    plugins: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    plugins.append(Lazy())
    assert cli.main(["lazy"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"sixnimmt: error: this command needs uvicorn, which is not installed: {EXTRA}"]


def test_a_module_of_the_project_missing_is_not_an_extra(plugins: list[Any]) -> None:
    """A broken install or a bug: the traceback is what helps."""
    plugins.append(Unimportable("workers.nowhere"))
    with pytest.raises(ModuleNotFoundError):
        cli.build_parser()
