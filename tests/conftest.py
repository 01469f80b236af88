"""Every test session's own per-user data directory: no test reads or writes the user's default store.

The suite runs the referee's pure-Python modules unless ``SIXNIMMT_COMPILED`` says otherwise:
``SIXNIMMT_COMPILED=require`` runs the same tests (and the referees they start) on the compiled
build (referee.accel; `make test` runs the referee's tests that way too).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from referee import accel

os.environ.setdefault("SIXNIMMT_COMPILED", "off")
accel.enable()  # before any test module imports the driver

_OWN: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """Point ``XDG_DATA_HOME`` (the default store's directory, referee.settings) at a fresh temporary
    directory for this process and every command it starts; tests/testkit.sixnimmt gives each
    command-line test its own below its working directory."""
    directory = tempfile.mkdtemp(prefix="sixnimmt-test-data-")
    _OWN.append(directory)
    os.environ["XDG_DATA_HOME"] = directory


def pytest_unconfigure(config: pytest.Config) -> None:
    for directory in _OWN:
        shutil.rmtree(directory, ignore_errors=True)
