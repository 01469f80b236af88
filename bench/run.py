"""Run every benchmark module (``bench/bench_*.py``) and print one JSON object per line.

Usage: python bench/run.py [--quick] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small samples: a smoke run, not figures")
    parser.add_argument("--only", default="", help="run only modules whose name contains this")
    args = parser.parse_args()
    here = Path(__file__).parent
    failed = 0
    for path in sorted(here.glob("bench_*.py")):
        if args.only not in path.stem:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        started = time.perf_counter()
        try:
            spec.loader.exec_module(module)  # an import that fails is that module's failure alone
            for row in module.run(args.quick):
                print(
                    json.dumps({"name": row["name"], "value": row["value"], "unit": row["unit"]}), flush=True
                )
        except Exception as exc:  # one broken module must not hide the others' figures
            failed += 1
            print(f"bench: {path.stem} failed: {exc!r}", file=sys.stderr)
        print(f"bench: {path.stem} took {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
