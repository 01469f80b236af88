"""``make chaos``: run the chaos scenarios and print one bench line per figure (JSON, as ``make bench``).

Every scenario prints ``chaos.<scenario>.recovery_s`` and ``chaos.<scenario>.ok``; a scenario that
did not get as far as reporting (skipped, or broken in its setup) prints ``ok`` 0. The exit status
is pytest's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SCENARIOS = ["kill9", "broker_restart", "db_stop", "link_cut", "rolling"]


def main() -> int:
    here = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory(prefix="sixnimmt-chaos-") as tmp:
        report = Path(tmp) / "bench.jsonl"
        env = {**os.environ, "SIXNIMMT_CHAOS": "1", "SIXNIMMT_CHAOS_REPORT": str(report)}
        argv = [
            sys.executable,
            "-m",
            "pytest",
            str(here),
            "-n",
            "0",
            "-q",
            "-p",
            "no:cacheprovider",
            *sys.argv[1:],
        ]
        status = subprocess.run(argv, env=env, cwd=here.parents[1], stdout=sys.stderr).returncode
        lines = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
    seen = {line["name"] for line in lines}
    for name in SCENARIOS:
        for figure, unit in (("recovery_s", "s"), ("ok", "bool")):
            if f"chaos.{name}.{figure}" not in seen:
                lines.append(
                    {
                        "name": f"chaos.{name}.{figure}",
                        "value": None if figure == "recovery_s" else 0,
                        "unit": unit,
                    }
                )
    order = {
        f"chaos.{n}.{f}": i
        for i, (n, f) in enumerate((n, f) for n in SCENARIOS for f in ("recovery_s", "ok"))
    }
    for line in sorted(lines, key=lambda row: order.get(row["name"], len(order))):
        print(json.dumps(line), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
