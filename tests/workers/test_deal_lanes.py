"""Lanes: no bot process ever holds two hands of one deal (docs/league.md, "Lanes").

A league plays each table as a duplicate block: one deal, replayed once per seat rotation. One
process playing an entrant's seats in every rotation would hold, at its first decision, every
hand of the deal. The hostile bot ``hostile_bots/rotations.py`` keeps the hands it is dealt per
process and reports, through its seats' fault reasons, what it knows of its opponents' hands:
with one process for every rotation (``play_matches`` as it is) it finds them all, checked against
the deal; split into lanes it never holds two hands of one deal, fresh, warm, in sets of blocks,
sandboxed, and across the twin blocks of an SPRT test. The games themselves do not change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from arena.matches import (
    FinishedMatch,
    MatchPlan,
    MatchRun,
    ProcessExit,
    SeatOutcome,
    deal_lanes,
    play_lanes,
    play_matches,
)
from arena.tournament import Block
from referee.faults import FaultKind
from referee.rules.chance import SeededChance
from referee.rules.registry import make_variant
from workers import league as leagues
from workers.bots.artifacts import pack
from workers.cli import bottest
from workers.play.execute import claim_and_play, play_blocks
from workers.play.faults import parse_detail
from workers.play.warm import WarmPool
from workers.store import repo, schema
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

HOSTILE = Path(__file__).resolve().parent / "hostile_bots" / "rotations.py"
ONE_HAND = {"hands": 1, "target": None}
REPORT = re.compile(r"hostile rotations: (SUCCEEDED|blocked): (\d+) deals")


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    store = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(store)
    try:
        yield store
    finally:
        store.dispose()


def render(mode: str, into: Path) -> Path:
    """The hostile bot reporting at every match (``every``) or only when it succeeds (``found``)."""
    path = into / f"rotations_{mode}.py"
    path.write_text(HOSTILE.read_text().replace("__MODE__", mode))
    return path


def stored(engine: Engine, mode: str, into: Path) -> str:
    """The hostile bot stored as a version (it raises on purpose: ``bot check`` would refuse it)."""
    artifact = pack(render(mode, into))
    repo.add_bot_version(
        engine,
        f"hostile-rotations-{mode}",
        artifact.content,
        artifact.sha256,
        artifact.entry_point,
        "classic",
    )
    return f"hostile-rotations-{mode}"


def first_deal(players: int, seed: int) -> tuple[int, ...]:
    """The cards a classic match of this seed deals first: four row cards, then each seat's hand."""
    variant = make_variant("classic", {"players": players, **ONE_HAND})
    return tuple(variant.sample_chance(variant.initial_state(), SeededChance(seed)))


def reports(reasons: list[str]) -> list[tuple[str, int, str]]:
    """(outcome, deals seen, reason) of each report of the hostile bot among fault reasons."""
    found = []
    for reason in reasons:
        match = REPORT.search(reason)
        if match:
            found.append((match.group(1), int(match.group(2)), reason))
    return found


def stored_reports(engine: Engine, league_id: int, version_id: int) -> list[tuple[str, int, str]]:
    reasons = [
        fault["reason"]
        for vid, text in repo.fault_details(engine, league_id)
        if vid == version_id
        for fault in (parse_detail(text) or {}).get("faults", [])
    ]
    return reports(reasons)


def hostile_seats(engine: Engine, league_id: int, position: int) -> int:
    return sum(r["position"] == position for r in repo.league_results(engine, league_id))


# -- the split itself ------------------------------------------------------------------------


def test_each_seat_of_a_deal_goes_to_another_lane() -> None:
    block = Block(0, (0, 1, 2, 3), 77)
    other = Block(1, (0, 1, 2, 3), 78)
    twin = Block(2, (4, 1, 2, 3), 77)  # an SPRT test's pair: OLD's table on NEW's deal
    plans = [
        MatchPlan(tuple(f"e{p}" for p in seating), b.seed)
        for b in (block, other, twin)
        for seating in b.seatings()
    ]
    lanes = deal_lanes(plans, whole=["e3"])
    for lane in lanes.owner:
        seeds = [plan.seed for plan in lanes.plans for name in plan.entrants if name == lane]
        if lanes.owner[lane] != "e3":
            assert len(seeds) == len(set(seeds)), (lane, seeds)  # never two seats of one deal
        assert set(seeds) == lanes.seeds[lane]
    by = lanes.by_entrant()
    assert len(by["e0"]) == 4 and len(by["e4"]) == 4  # one lane a rotation
    assert len(by["e1"]) == 8  # the field plays both twins: eight seats of deal 77
    assert by["e3"] == ["e3"]  # kept whole (a remote bot: one connection)
    assert by["e0"][0] == "e0"  # lane 0 keeps the entrant's name
    # Lane k plays the k-th match of every deal: many games per message across blocks.
    assert sorted(lanes.seeds["e0"]) == [77, 78]
    assert [tuple(lanes.owner[n] for n in p.entrants) for p in lanes.plans] == [p.entrants for p in plans]


def test_a_run_by_lane_is_told_by_entrant() -> None:
    lanes = deal_lanes([MatchPlan(("a", "b"), 5), MatchPlan(("b", "a"), 5)])
    lane_a = lanes.plans[1].entrants[1]
    assert lane_a != "a" and lanes.owner[lane_a] == "a"

    def seat(index: int, name: str) -> SeatOutcome:
        return SeatOutcome(
            index, name, 0, 1, {FaultKind.EXCEPTION: 1} if name == lane_a else {}, 0, 1, False, 1
        )

    matches = [
        FinishedMatch(
            str(i),
            "finished",
            [seat(s, n) for s, n in enumerate(p.entrants)],
            "d",
            {"meta": {"seats": list(p.entrants)}},
        )
        for i, p in enumerate(lanes.plans)
    ]
    crashed, clean = ProcessExit(9, stderr="boom"), ProcessExit(0)
    run = lanes.run(MatchRun(matches, {"a": 0, lane_a: 9}, {"a": clean, lane_a: crashed}))
    assert [[s.entrant for s in m.seats] for m in run.matches] == [["a", "b"], ["b", "a"]]
    assert [m.transcript["meta"]["seats"] for m in run.matches] == [["a", "b"], ["b", "a"]]
    assert run.exits == {"a": crashed} and run.exit_codes == {"a": 9}  # a fault of any lane is the entrant's


# -- the hostile bot, real processes ---------------------------------------------------------


def seatings_plans(seed: int) -> list[MatchPlan]:
    names = ("hostile", "random", "lowest", "highest")
    return [
        MatchPlan(tuple(names[p] for p in seating), seed)
        for seating in Block(0, (0, 1, 2, 3), seed).seatings()
    ]


def hostile_reasons(run: MatchRun) -> list[str]:
    return [
        reason for m in run.matches for s in m.seats if s.entrant == "hostile" for _, reason, _ in s.reasons
    ]


@pytest.mark.slow
def test_one_process_for_every_rotation_knows_every_hand_and_lanes_know_none(tmp_path: Path) -> None:
    """The control: ``play_matches`` with one process per entrant, as leagues played before lanes."""
    bot = render("every", tmp_path)
    specs = {"hostile": f"{bot}:Rotations", "random": "random", "lowest": "lowest", "highest": "highest"}
    seed = 424242
    deal = first_deal(4, seed)
    whole = play_matches(specs, seatings_plans(seed), config={**ONE_HAND, "players": 4})
    found = reports(hostile_reasons(whole))
    assert len(found) == 4, found
    succeeded = [reason for outcome, _, reason in found if outcome == "SUCCEEDED"]
    assert len(succeeded) == 3, found  # from its second match on it knows its opponents' hands
    everything = [
        r for r in succeeded if len(json.loads(r.split("opponents' hands ", 1)[1].split(" rows ")[0])) == 3
    ]
    assert everything, succeeded  # at its last first decision: all three opponents' hands
    for reason in succeeded:
        known = json.loads(reason.split("opponents' hands ", 1)[1].split(" rows ")[0])
        rows = json.loads(reason.split(" rows ", 1)[1].splitlines()[0])
        assert sorted(rows) == sorted(deal[:4])
        for seat, hand in known.items():
            start = 4 + 10 * int(seat)
            assert hand == sorted(deal[start : start + 10]), (seat, hand)

    laned = play_lanes(specs, seatings_plans(seed), config={**ONE_HAND, "players": 4})
    found = reports(hostile_reasons(laned))
    assert [(outcome, deals) for outcome, deals, _ in found] == [("blocked", 1)] * 4, found
    assert [m.digest for m in laned.matches] != [] and len(laned.matches) == 4


@pytest.mark.slow
def test_fresh_sandboxed_lanes_never_hold_two_hands_of_a_deal(engine: Engine, tmp_path: Path) -> None:
    bot = stored(engine, "every", tmp_path)
    league = leagues.create(engine, "fresh", [bot, "random", "lowest", "highest"], config=ONE_HAND, deals=2)
    for block in repo.blocks_of(engine, league.id):
        assert claim_and_play(engine, block.id).status == "stored"  # sandboxed, a process per lane
    found = stored_reports(engine, league.id, league.entrants[0].id)
    assert len(found) == hostile_seats(engine, league.id, 0) == 8, found  # every seat reported
    assert {(outcome, deals) for outcome, deals, _ in found} == {("blocked", 1)}, found


@pytest.mark.slow
def test_warm_sets_of_blocks_never_give_a_process_two_hands_of_a_deal(engine: Engine, tmp_path: Path) -> None:
    bot = stored(engine, "every", tmp_path)
    league = leagues.create(engine, "sets", [bot, "random", "lowest", "highest"], config=ONE_HAND, deals=4)
    pool = WarmPool()
    try:
        ids = [block.id for block in repo.blocks_of(engine, league.id)]
        outcomes = play_blocks(engine, ids, warm=pool, at_once=4)
        assert [o.status for o in outcomes] == ["stored"] * 4
    finally:
        pool.close()
    found = stored_reports(engine, league.id, league.entrants[0].id)
    assert len(found) == hostile_seats(engine, league.id, 0) == 16, found
    assert {outcome for outcome, _, _ in found} == {"blocked"}, found
    # The first block plays alone (its bots not measured yet), the other three as one set: each
    # lane's process played one seat of each of their three deals.
    assert max(deals for _, deals, _ in found) == 3, found


@pytest.mark.slow
def test_no_warm_process_of_the_field_gets_the_twin_deal_of_an_sprt_test(
    engine: Engine, tmp_path: Path
) -> None:
    bot = stored(engine, "found", tmp_path)
    test = bottest.create(
        engine, "random", "lowest", [bot, "highest", "heuristic"], config=ONE_HAND, max_deals=2, seed=9
    )
    blocks = repo.blocks_of(engine, test.id)
    assert len(blocks) == 4 and blocks[0].seed == blocks[1].seed and blocks[2].seed == blocks[3].seed
    hostile = 2  # NEW, OLD, then the field
    pool = WarmPool()
    try:
        for block in blocks:  # one at a time: NEW's table, then OLD's on the same deal
            assert claim_and_play(engine, block.id, warm=pool).status == "stored"
        sha = test.entrants[hostile].sha256
        mine = [bot for bot in pool.bots if bot.version.sha256 == sha]
        # Four lanes a table; the twin table needed four processes that had not seen its deal.
        assert len(mine) == 8, [sorted(b.seeds) for b in mine]
        assert all(b.seeds == {blocks[0].seed, blocks[2].seed} for b in mine), [sorted(b.seeds) for b in mine]
    finally:
        pool.close()
    assert stored_reports(engine, test.id, test.entrants[hostile].id) == []
    assert hostile_seats(engine, test.id, hostile) == 16


@pytest.mark.slow
def test_an_sprt_pair_in_one_set_splits_the_field_by_deal(engine: Engine, tmp_path: Path) -> None:
    bot = stored(engine, "found", tmp_path)
    test = bottest.create(
        engine, "random", "lowest", [bot, "highest", "heuristic"], config=ONE_HAND, max_deals=2, seed=10
    )
    ids = [block.id for block in repo.blocks_of(engine, test.id)]
    pool = WarmPool()
    try:
        outcomes = play_blocks(engine, ids, warm=pool, at_once=4)  # the last three as one set
        assert [o.status for o in outcomes] == ["stored"] * 4
    finally:
        pool.close()
    assert stored_reports(engine, test.id, test.entrants[2].id) == []
    assert hostile_seats(engine, test.id, 2) == 16


# -- the games do not change -----------------------------------------------------------------


def test_lanes_store_the_games_one_process_per_entrant_plays(engine: Engine) -> None:
    """The same seeds give the same digests, scores and transcripts as one process per entrant."""
    bots = ["random", "heuristic", "lowest", "highest"]
    league = leagues.create(engine, "same", bots, config=ONE_HAND, deals=2, seed=11)
    for block in repo.blocks_of(engine, league.id):
        assert claim_and_play(engine, block.id, sandbox=False).status == "stored"
    query = (
        select(schema.blocks.c.number, schema.matches.c.rotation, schema.matches.c.digest)
        .join(schema.matches, schema.matches.c.block_id == schema.blocks.c.id)
        .where(schema.blocks.c.league_id == league.id)
        .order_by(schema.blocks.c.number, schema.matches.c.rotation)
    )
    with engine.connect() as conn:
        stored = [tuple(row) for row in conn.execute(query)]
    scores = [
        (r["block"], r["rotation"], r["seat"], r["score"]) for r in repo.league_results(engine, league.id)
    ]

    specs = {f"entrant{p}": name for p, name in enumerate(bots)}
    again, again_scores = [], []
    for block in repo.blocks_of(engine, league.id):
        seatings = Block(block.number, block.entrants, block.seed).seatings()
        plans = [MatchPlan(tuple(f"entrant{p}" for p in seating), block.seed) for seating in seatings]
        run = play_matches(
            specs, plans, variant=league.variant, config=league.config, seat_key=league.seat_key
        )
        for rotation, match in enumerate(run.matches):
            again.append((block.number, rotation, match.digest))
            again_scores += [
                (block.number, rotation, s.seat, s.score) for s in sorted(match.seats, key=lambda s: s.seat)
            ]
    assert stored == again and len(stored) == 8
    assert scores == again_scores
    match_ids = sorted({r["match_id"] for r in repo.league_results(engine, league.id)})
    seats = [repo.transcript(engine, match_id)["meta"]["seats"] for match_id in match_ids]
    assert len(seats) == 8 and all(sorted(s) == [f"entrant{p}" for p in range(4)] for s in seats), seats
