"""Round-robin planning with duplicate deals, and the standings."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from arena.tournament import MatchRecord, game_tasks, plan_round_robin, run_tournament, standings
from bot_sdk.loader import load_bot
from bot_sdk.play import play_match
from referee.clikit.stats import t_interval, t_quantile_975
from referee.rules import make_variant


def test_every_table_of_k_out_of_n_is_planned_with_every_rotation() -> None:
    blocks = plan_round_robin(5, 4, 3, seed=9)
    assert len(blocks) == 5 * 3  # C(5,4) tables x 3 deals
    tables = {b.entrants for b in blocks}
    assert tables == set(itertools.combinations(range(5), 4))
    for block in blocks:
        seatings = block.seatings()
        assert len(seatings) == 4
        # Each entrant sits in each seat exactly once over the block.
        for seat in range(4):
            assert sorted(s[seat] for s in seatings) == sorted(block.entrants)
    assert len({b.seed for b in blocks}) == len(blocks)


def test_planning_is_a_pure_function_of_the_seed() -> None:
    assert plan_round_robin(6, 3, 2, seed=1) == plan_round_robin(6, 3, 2, seed=1)
    assert plan_round_robin(6, 3, 2, seed=1) != plan_round_robin(6, 3, 2, seed=2)


@pytest.mark.parametrize(("n", "k", "deals"), [(3, 4, 1), (4, 1, 1), (4, 2, 0)])
def test_bad_plans_are_refused(n: int, k: int, deals: int) -> None:
    with pytest.raises(ValueError):
        plan_round_robin(n, k, deals, seed=0)


def test_a_duplicate_block_deals_the_same_cards_in_every_rotation() -> None:
    game = make_variant("classic", {"players": 3, "hands": 1, "target": None})
    block = plan_round_robin(3, 3, 1, seed=3)[0]
    classes = [load_bot(name) for name in ("lowest", "highest", "random")]
    deals = []
    hands_of = {entrant: set() for entrant in range(3)}
    for seating in block.seatings():
        result = play_match(game, [classes[e] for e in seating], block.seed)
        deal = result.transcript.steps[0]
        deals.append(deal)
        cards = deal[0][1]
        for seat, entrant in enumerate(seating):
            hands_of[entrant].add(tuple(sorted(cards[4 + 10 * seat : 14 + 10 * seat])))
    assert deals[0] == deals[1] == deals[2]
    # Every entrant held every one of the three hands once.
    assert all(len(hands) == 3 for hands in hands_of.values())


def test_tournaments_replay_identically_and_in_parallel() -> None:
    kwargs = {"config": {"hands": 1, "target": None}, "table_size": 2, "deals": 2, "seed": 4}
    _, serial = run_tournament(["random", "heuristic", "lowest"], processes=1, **kwargs)
    _, parallel = run_tournament(["random", "heuristic", "lowest"], processes=2, **kwargs)
    assert [r.digest for r in serial] == [r.digest for r in parallel]


def test_the_pool_gets_games_not_blocks_every_game_once_in_plan_order() -> None:
    one = plan_round_robin(4, 4, 1, seed=1)
    assert game_tasks(one, 2) == [[(one[0], rotation)] for rotation in range(4)]
    many = plan_round_robin(6, 4, 10, seed=1)  # 150 blocks, 600 games
    tasks = game_tasks(many, 2)
    assert [game for task in tasks for game in task] == [(b, r) for b in many for r in range(4)]
    assert len(tasks) >= 2 * 8 and max(map(len, tasks)) <= 600 // 16


def test_one_block_keeps_every_process_of_the_pool_busy(tmp_path: Path) -> None:
    """The four rotations of a single block are four games for a pool of two, not one task."""
    pids = tmp_path / "pids"
    pids.mkdir()
    bot = tmp_path / "pid_bot.py"
    bot.write_text(
        "import os, time\n"
        "from bot_sdk import ClassicBot\n\n"
        "class PidBot(ClassicBot):\n"
        "    def on_start(self, seat, variant, config):\n"
        f"        (__import__('pathlib').Path({str(pids)!r}) / str(os.getpid())).touch()\n"
        "        time.sleep(0.2)  # a game long enough for the second process to start\n\n"
        "    def choose_card(self, view):\n"
        "        return min(view.hand)\n"
    )
    kwargs = {"config": {"hands": 1, "target": None}, "table_size": 4, "deals": 1, "seed": 3}
    _, records = run_tournament([str(bot), "random", "lowest", "highest"], processes=2, **kwargs)
    assert len(records) == 4
    assert len(list(pids.iterdir())) == 2
    _, serial = run_tournament([str(bot), "random", "lowest", "highest"], processes=1, **kwargs)
    assert [r.digest for r in serial] == [r.digest for r in records]


def test_remote_play_is_the_same_game_as_in_process_play() -> None:
    """Bots as processes under the gRPC referee play exactly the in-process games, digest for digest."""
    kwargs = {"config": {"hands": 1, "target": None}, "table_size": 3, "deals": 2, "seed": 8}
    bots = ["random", "heuristic", "lowest", "highest"]
    local_table, local = run_tournament(bots, **kwargs)
    remote_table, remote = run_tournament(bots, remote=True, **kwargs)
    assert [r.digest for r in remote] == [r.digest for r in local]
    assert [(s.name, s.mean_score) for s in remote_table] == [(s.name, s.mean_score) for s in local_table]
    assert all(f == 0 for r in remote for f in r.faults)


def test_standings_rank_lower_scores_first_for_classic() -> None:
    records = [
        MatchRecord(0, (0, 1), (10, 20), (1, 2), "a"),
        MatchRecord(0, (1, 0), (30, 5), (2, 1), "b"),
    ]
    table = standings(["good", "bad"], records, higher_is_better=False)
    assert [s.name for s in table] == ["good", "bad"]
    assert table[0].mean_score == pytest.approx(7.5)
    assert table[0].wins == 2 and table[0].games == 2
    flipped = standings(["good", "bad"], records, higher_is_better=True)
    assert flipped[0].name == "bad"


def test_t_interval_contains_the_mean_narrows_with_data_and_needs_two_blocks() -> None:
    rng = random.Random(0)
    few = [rng.gauss(10, 3) for _ in range(10)]
    many = [rng.gauss(10, 3) for _ in range(400)]
    lo1, hi1 = t_interval(few)
    lo2, hi2 = t_interval(many)
    assert lo1 is not None and hi1 is not None and lo2 is not None and hi2 is not None
    assert lo1 < sum(few) / len(few) < hi1
    assert hi2 - lo2 < hi1 - lo1
    assert lo2 < 10 < hi2
    assert t_interval([4.0]) == (None, None)
    lo, hi = t_interval([1.0, 3.0])  # mean 2, sd sqrt(2), se 1: ± 12.706
    assert (lo, hi) == pytest.approx((2 - 12.706, 2 + 12.706))


def test_t_quantiles_join_the_table_smoothly() -> None:
    assert t_quantile_975(1) == pytest.approx(12.706)
    assert t_quantile_975(30) == pytest.approx(2.042)
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=1e-3)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=1e-3)
    assert t_quantile_975(100_000) == pytest.approx(1.96, abs=1e-3)
