"""The chaos scenarios' fixtures live in test_chaos.py; this keeps each phase's report on the item."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Let fixtures tell whether their test passed (``item.rep_call``)."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
