"""``sixnimmt play --human`` runs its bots as a league runs them: each in the sandbox, seeing its own
packed files and nothing else of the machine; ``--no-sandbox`` runs them as ``bot play`` does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from referee.rules.transcript import Transcript, verify

REPO = Path(__file__).resolve().parents[2]

PEEK = '''
import os
from bot_sdk import ClassicBot, ClassicView

SECRET = {secret!r}


class Peek(ClassicBot):
    """Raises, an exception fault in the transcript, whenever it can read the file beside it."""

    def choose_card(self, view: ClassicView) -> int:
        if os.path.exists(SECRET):
            raise RuntimeError("read the secret beside my file")
        return min(view.hand)
'''


def _call(url: str, value: Any = None) -> Any:
    data = None if value is None else json.dumps(value).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def _play(tmp_path: Path, *flags: str) -> tuple[Transcript, str]:
    """One small game against the peeking bot and a reference bot, the person always playing the
    first option; the verified transcript and the command's stderr."""
    bot_dir = tmp_path / "peek"
    bot_dir.mkdir()
    secret = bot_dir / "secret.txt"
    secret.write_text("the operator's secret\n")
    (bot_dir / "peek.py").write_text(PEEK.format(secret=str(secret)))
    games = tmp_path / "games"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env |= {"SIXNIMMT_HUMAN_GRACE_S": "1", "BROWSER": "false", "XDG_DATA_HOME": str(tmp_path / "xdg")}
    command = [
        sys.executable, "-m", "bot_sdk.cli", "play", "--human", "--bots", f"{bot_dir / 'peek.py'},random",
        "-o", "hand_size=3", "-o", "hands=1", "--no-open", "--json", "--transcripts", str(games), *flags,
    ]  # fmt: skip
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO
    )
    try:
        assert run.stdout is not None
        line = run.stdout.readline()
        assert line, run.stderr.read() if run.stderr else ""
        api = json.loads(line)["url"].replace("/seats/", "/api/seats/")
        version = None
        while True:
            state = _call(f"{api}/state?wait=5" + ("" if version is None else f"&after={version}"))["state"]
            version = state["version"]
            decision = state["decision"]
            if decision is not None and decision["chosen"] is None:
                _call(f"{api}/choose", {"request_id": decision["request_id"], "index": 0})
            if state["status"] == "over" and state.get("replay"):
                break
        (game,) = json.loads(run.stdout.readline())["games"]
        assert run.wait(60) == 0
        stderr = run.stderr.read() if run.stderr else ""
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    transcript = Transcript.from_json(json.loads(Path(game["file"]).read_text()))
    verify(transcript)
    return transcript, stderr


def _peek_faults(transcript: Transcript) -> dict[str, int]:
    seat = next(i for i, name in enumerate(transcript.meta["seats"]) if name.startswith("peek"))
    return dict(transcript.meta["faults"][seat])


@pytest.mark.slow
def test_the_bots_run_in_the_sandbox_and_see_only_their_own_files(tmp_path: Path) -> None:
    transcript, stderr = _play(tmp_path)
    assert _peek_faults(transcript) == {}, "the bot read a file outside its packed copy"
    assert "plain processes" not in stderr


@pytest.mark.slow
def test_no_sandbox_runs_them_as_bot_play_does(tmp_path: Path) -> None:
    transcript, _ = _play(tmp_path, "--no-sandbox")
    assert _peek_faults(transcript).get("exception", 0) >= 1  # it could: the test above can fail
