"""The tests of a person at the table share the dashboard's test kit and its browser fixtures
(tests/dashboard: dashkit, test_browser's ``browser`` and ``watched``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dashboard"))
