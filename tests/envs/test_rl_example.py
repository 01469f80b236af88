"""examples/rl_classic: training beats the random bot, the policy saves, and it plays through the SDK."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import sixnimmt

from bot_sdk.loader import load_bot
from bot_sdk.play import play_match
from games.classic.bots import RandomBot
from games.classic.rules.classic import Classic, ClassicConfig

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rl_classic"
sys.path.insert(0, str(EXAMPLE))

import train  # noqa: E402
from policy_bot import LinearPolicy, PolicyBot  # noqa: E402

ONE_HAND = ClassicConfig(hands=1, target=None)


def paired_bulls(bot: type, seeds: range) -> tuple[float, float, float]:
    """Mean bull heads per hand of ``bot`` in seat 0 and of the random bot there on the same deals
    against three random bots, and the paired t statistic of the difference (random minus bot)."""
    game = Classic(ONE_HAND)
    diffs, mine, random_ = [], [], []
    for seed in seeds:
        ours = play_match(game, [bot, RandomBot, RandomBot, RandomBot], seed).outcome.scores[0]
        theirs = play_match(game, [RandomBot] * 4, seed).outcome.scores[0]
        mine.append(ours)
        random_.append(theirs)
        diffs.append(theirs - ours)
    n = len(diffs)
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    return sum(mine) / n, sum(random_) / n, mean / (sd / math.sqrt(n))


@pytest.mark.slow
def test_training_learns_a_policy_that_beats_the_random_bot(tmp_path: Path) -> None:
    """A short run (the example trains for 30 s; this one for 1,500 games) is already far better."""
    policy, figures = train.train(episodes=1500, seed=3)
    assert figures["episodes"] == 1500
    saved = tmp_path / "policy.json"
    policy.save(saved)
    loaded = LinearPolicy.from_json(policy.encoding, json.loads(saved.read_text()))
    assert (loaded.card == policy.card).all() and (loaded.row == policy.row).all()

    class Trained(PolicyBot):
        weights = saved

    ours, theirs, t = paired_bulls(Trained, range(10_000, 10_300))
    # 300 paired deals: a t of 4 is p < 1e-4; the trained policy takes about half of random's heads.
    assert t > 4, (ours, theirs, t)
    assert ours < 0.8 * theirs


def test_the_committed_policy_beats_the_random_bot() -> None:
    ours, theirs, t = paired_bulls(load_bot(str(EXAMPLE / "policy_bot.py")), range(20_000, 20_200))
    assert t > 4, (ours, theirs, t)


def test_the_policy_plays_through_the_referee_as_bot_play_does(tmp_path: Path) -> None:
    """`sixnimmt bot play` starts the policy bot and three random bots as processes under a referee."""
    result = sixnimmt(
        tmp_path,
        "bot", "play", str(EXAMPLE / "policy_bot.py"), "--against", "random,random,random",
        "--games", "24", "-o", "hands=1", "-o", "target=None", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    ours, *others = report["entrants"]
    assert ours["name"] == "policy_bot" and ours["games"] == 24
    assert ours["exit_code"] == 0 and not ours["faults"] and ours["defaulted"] == 0
    random_mean = sum(o["mean_score"] for o in others) / len(others)
    assert ours["interval95"][1] < random_mean, report


def test_the_training_script_saves_where_it_is_told_and_refuses_bad_options(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    run = subprocess.run(
        [sys.executable, str(EXAMPLE / "train.py"), "--episodes", "40", "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    assert figures["episodes"] == 40 and json.loads(out.read_text()) == figures["weights"]
    for bad, message in ((["--episodes", "0"], "must be positive"), (["--opponents", "randm"], "randm")):
        run = subprocess.run(
            [sys.executable, str(EXAMPLE / "train.py"), *bad, "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 2 and message in run.stderr
        assert run.stderr.strip().splitlines()[-1].startswith("train.py: error:")


@pytest.mark.slow
def test_the_policy_bot_submitted_as_its_directory_passes_its_check_in_the_sandbox(tmp_path: Path) -> None:
    """`bot submit` checks a bot in the league's sandbox, which binds ``envs`` for policy bots."""
    result = sixnimmt(
        tmp_path, "bot", "submit", str(EXAMPLE), "--entry", "policy_bot.py", "--name", "policy", "--json"
    )
    assert result.returncode == 0, result.stderr
    assert "policy" in result.stdout
