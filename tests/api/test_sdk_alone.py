"""The participant's commands run on the SDK alone: with the server extra's libraries hidden (as a
bot author's ``pip install sixnimmt-arena`` without extras has them), ``bot submit --server``,
``bot status`` and ``bot activate`` reach the API, and import nothing of the server extra."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from apikit import GOOD_BOT, OUTSIDE_TREE, site

HIDDEN = ("sqlalchemy", "alembic", "celery", "fastapi", "starlette", "uvicorn", "psycopg", "numpy", "jinja2")
RUN = f"""
import sys
for name in {HIDDEN!r}:
    sys.modules[name] = None  # not installed: find_spec says None, an import fails
from bot_sdk.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.partition(".")[0] in {HIDDEN!r} and sys.modules[m] is not None)
sys.stderr.write("loaded:" + ",".join(loaded) + "\\n")
sys.exit(code)
"""


def _base_install(*args: str, key: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env["SIXNIMMT_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-c", RUN, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=OUTSIDE_TREE,
        timeout=300,
    )


def test_the_participants_commands_need_no_extra(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        key = api.keys["alice"]
        done = _base_install(
            "bot", "submit", str(GOOD_BOT), "--server", api.url, "--name", "plain", "--json", key=key
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["version"] == "plain@1"
        assert done.stderr.strip().endswith("loaded:"), done.stderr  # nothing of the server extra
        active = _base_install("bot", "activate", "plain@1", "--server", api.url, key=key)
        assert active.returncode == 0 and "plain@1 is active" in active.stdout, active.stderr
        status = _base_install("bot", "status", "--server", api.url, "--json", key=key)
        assert json.loads(status.stdout)["versions"][0]["active"] is True
        # Without --server, bot submit is the operator's store command, which needs the extra.
        local = _base_install("bot", "submit", str(GOOD_BOT), "--name", "plain", key=key)
        assert local.returncode == 2, local.stderr
        assert local.stderr.startswith("sixnimmt bot submit: this command needs sqlalchemy"), local.stderr
        listed = _base_install("bot", "--help", key=key)
        assert "with --server URL: submit to a platform's API" in " ".join(listed.stdout.split())
