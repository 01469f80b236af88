"""Train the linear policy of ``policy_bot.py`` with REINFORCE in the Gymnasium environment.

One seat of a four-player classic hand (``hands=1``) against reference bots (random by default);
the reward is minus the bull heads the seat takes. CPU only, numpy only, well under a minute:

    python examples/rl_classic/train.py --seconds 30             # writes policy.json beside it
    python examples/rl_classic/train.py --episodes 4000 --out /tmp/policy.json --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from policy_bot import WEIGHTS, LinearPolicy

from envs.classic import env as classic_env
from envs.single import SeatEnv

CONFIG = {"hands": 1, "target": None}


def train(
    *,
    episodes: int = 6000,
    seconds: float | None = None,
    seed: int = 0,
    opponents: str = "random",
    batch: int = 32,
    learning_rate: float = 0.3,
) -> tuple[LinearPolicy, dict[str, Any]]:
    """A policy trained for ``episodes`` games (or ``seconds``), and figures of the run."""
    game = SeatEnv(classic_env(**CONFIG), opponents)
    policy = LinearPolicy(game.game.encoding)  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    game.reset(seed=seed)
    start = time.perf_counter()
    grads = [np.zeros_like(policy.card), np.zeros_like(policy.row)]
    baseline = np.zeros(64)
    returns: list[float] = []
    played = 0
    while played < episodes and (seconds is None or time.perf_counter() - start < seconds):
        observation, info = game.reset()
        trace = []  # (is_row, features, probabilities, chosen, reward)
        done = False
        while not done:
            legal, feats, p = policy.probabilities(observation["observation"], info["action_mask"])
            chosen = int(rng.choice(len(legal), p=p))
            is_row = bool(legal[0] >= policy.encoding.top)
            observation, reward, done, _, info = game.step(int(legal[chosen]))
            trace.append((is_row, feats, p, chosen, reward))
        to_go = np.cumsum([t[4] for t in trace][::-1])[::-1]
        for step, ((is_row, feats, p, chosen, _), g) in enumerate(zip(trace, to_go, strict=True)):
            advantage = g - baseline[step]
            baseline[step] += 0.01 * (g - baseline[step])
            grads[is_row] += advantage * (feats[chosen] - p @ feats)
        returns.append(float(to_go[0]))
        played += 1
        if played % batch == 0:
            for weights, grad in zip((policy.card, policy.row), grads, strict=True):
                weights += learning_rate * np.clip(grad / batch, -1, 1)
                grad[:] = 0
    figures = {
        "episodes": played,
        "seconds": round(time.perf_counter() - start, 2),
        "bulls_first_500": round(-float(np.mean(returns[:500])), 3),
        "bulls_last_500": round(-float(np.mean(returns[-500:])), 3),
    }
    return policy, figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1_000_000, help="games to train on")
    parser.add_argument("--seconds", type=float, default=30.0, help="stop after this long")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--opponents", default="random", help="reference bots, e.g. random,heuristic,mc")
    parser.add_argument("--out", type=Path, default=WEIGHTS, help="where to save the weights")
    parser.add_argument("--json", action="store_true", help="print the run's figures as JSON")
    args = parser.parse_args(argv)
    if args.episodes < 1 or args.seconds <= 0:
        parser.error("--episodes and --seconds must be positive")
    try:
        SeatEnv(classic_env(**CONFIG), args.opponents)
    except ValueError as exc:
        parser.error(str(exc))
    policy, figures = train(
        episodes=args.episodes, seconds=args.seconds, seed=args.seed, opponents=args.opponents
    )
    policy.save(args.out)
    figures["out"] = str(args.out)
    if args.json:
        print(json.dumps({**figures, "weights": policy.to_json()}))
    else:
        print(
            f"{figures['episodes']} games in {figures['seconds']} s: bull heads per hand"
            f" {figures['bulls_first_500']} (first 500) -> {figures['bulls_last_500']} (last 500);"
            f" saved {args.out}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
