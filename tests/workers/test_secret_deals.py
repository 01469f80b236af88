"""Secret deals: a drawn seed and deal key, keyed deal seeds, a commitment until the league ends.

A bot that predicts its deal from everything it can see (``hostile_bots/deals.py``) finds it in a
league whose deals follow from a known seed (the control) and gets it wrong in a league with a
deal key; leagues without a key (a given seed, or made before keys existed) keep their deals.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, insert, select, update
from starlette.testclient import TestClient
from testkit import sixnimmt as run_cli

from arena.tournament import Block
from dashboard import queries
from dashboard.app import create_app
from workers import league as leagues
from workers.bots.artifacts import pack
from workers.cli import bottest
from workers.planning import adaptive, deals, fixed_plan_seed, ladder, plan_league
from workers.store import repo, schema
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

HOSTILE = Path(__file__).resolve().parent / "hostile_bots" / "deals.py"
ONE_HAND = {"hands": 1, "target": None}
THREE = ["random", "lowest", "highest"]
RULE = adaptive.rule(0.9, 40).to_json()


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    store = make_engine(f"sqlite:///{tmp_path / 'sixnimmt.db'}")
    upgrade(store)
    yield store
    store.dispose()


def stored_seeds(engine: Engine, league: repo.League) -> list[int]:
    return [b.seed for b in repo.blocks_of(engine, league.id)]


def by_hand(deal_key: bytes, plan_seed: int) -> int:
    """The keyed deal seed, computed here from its definition (docs/league.md#seeds)."""
    digest = hashlib.blake2b(plan_seed.to_bytes(8, "big", signed=True), key=deal_key, digest_size=8)
    return int.from_bytes(digest.digest(), "big") >> 1


# --- the derivation ----------------------------------------------------------------------------


def test_a_league_without_a_seed_draws_one_and_a_key_and_stores_keyed_deal_seeds(engine: Engine) -> None:
    one = leagues.create(engine, "one", THREE, table_size=2, deals=2, config=ONE_HAND)
    two = leagues.create(engine, "two", THREE, table_size=2, deals=2, config=ONE_HAND)
    assert one.seed != two.seed and one.deal_key != two.deal_key
    assert one.deal_key is not None and len(one.deal_key) == 32
    plan = [b.seed for b in plan_league("round-robin", 3, 2, 2, one.seed)]
    assert stored_seeds(engine, one) == [by_hand(one.deal_key, s) for s in plan]
    assert set(stored_seeds(engine, one)).isdisjoint(plan), "no deal is its plan seed"
    assert len(set(stored_seeds(engine, one))) == len(plan), "no two blocks share a deal"
    # Knowing the seed is not enough: the seed's old derivation gives none of the deals.
    checked = leagues.verify_deals(engine, one)
    assert all(c.ok for c in checked) and len(checked) == 6


@pytest.mark.parametrize("fmt", ["round-robin", "gauntlet", "sampled"])
def test_a_fixed_plan_s_block_seeds_follow_from_the_seed_and_block_number(fmt: str) -> None:
    """What verification recomputes (``fixed_plan_seed``) is what planning made, format by format."""
    blocks = plan_league(fmt, 5, 3, 2, 99, **({"per_bot": 3} if fmt == "sampled" else {}))
    assert [fixed_plan_seed(fmt, 99, 2, b.number) for b in blocks] == [b.seed for b in blocks]


def test_a_given_seed_and_a_league_made_before_keys_keep_their_deals(engine: Engine) -> None:
    given = leagues.create(engine, "given", THREE, table_size=2, deals=2, seed=5, config=ONE_HAND)
    again = leagues.create(engine, "again", THREE, table_size=2, deals=2, seed=5, config=ONE_HAND)
    plan = [b.seed for b in plan_league("round-robin", 3, 2, 2, 5)]
    assert given.deal_key is None and stored_seeds(engine, given) == plan == stored_seeds(engine, again)
    # A league stored before deal keys (its key column NULL) adds its rounds with their plan seeds.
    old = leagues.create(engine, "old", THREE, table_size=2, seed=9, config=ONE_HAND, stopping=RULE)
    assert old.deal_key is None
    extra = [Block(50, (0, 1), 123456789)]
    assert repo.add_blocks(engine, old.id, [(b.number, b.seed, b.entrants) for b in extra]) == 1
    assert repo.blocks_of(engine, old.id)[-1].seed == 123456789
    assert all(c.ok for c in leagues.verify_deals(engine, repo.find_league(engine, "given")))


def test_a_store_from_before_the_migration_keeps_every_deal(tmp_path: Path) -> None:
    """A league stored at revision 0006 (no deal key) reads back, and plays, its very seeds."""
    store = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    try:
        upgrade(store, "0006")
        plan = plan_league("round-robin", 3, 2, 1, 1)  # the old default seed
        old = {
            "name": "before",
            "variant": "classic",
            "config": {"players": 2, **ONE_HAND},
            "seed": 1,
            "format": "round-robin",
            "table_size": 2,
            "deals": 1,
            "seat_key": b"k" * 32,
        }  # the columns of revision 0006
        with store.begin() as conn:
            league_id = conn.execute(
                insert(schema.leagues).values(old).returning(schema.leagues.c.id)
            ).scalar_one()
            rows = [{"league_id": league_id, "number": b.number, "seed": b.seed, "entrants": list(b.entrants)}
                    for b in plan]  # fmt: skip
            conn.execute(insert(schema.blocks), rows)
        upgrade(store)
        league = repo.league_by_id(store, league_id)
        assert league.deal_key is None
        assert stored_seeds(store, league) == [b.seed for b in plan]
        assert all(c.ok for c in leagues.verify_deals(store, league))
    finally:
        store.dispose()


def test_rounds_added_as_a_league_goes_are_keyed_too(engine: Engine) -> None:
    """Adaptive rounds, a ladder's rounds and an SPRT test's batches: every add stores keyed seeds."""
    adaptive_league = leagues.create(engine, "adaptive", THREE, table_size=2, config=ONE_HAND, stopping=RULE)
    key = adaptive_league.deal_key
    assert key is not None
    more = [Block(n, (0, 1), deals_plan) for n, deals_plan in ((10, 11), (11, 12))]
    repo.add_blocks(engine, adaptive_league.id, [(b.number, b.seed, b.entrants) for b in more])
    assert stored_seeds(engine, adaptive_league)[-2:] == [by_hand(key, 11), by_hand(key, 12)]
    # Adding the same planned round again is the same round (idempotent), keyed the same way.
    assert repo.add_blocks(engine, adaptive_league.id, [(b.number, b.seed, b.entrants) for b in more]) == 0

    lad = leagues.create(
        engine, "lad", THREE, table_size=2, fmt="ladder", config=ONE_HAND,
        stopping=ladder.rule(placement=2, round_deals=2).to_json(),
    )  # fmt: skip
    assert lad.deal_key is not None
    assert all(c.ok for c in leagues.verify_deals(engine, lad))

    test = bottest.create(engine, "lowest", "highest", ["random"], config=ONE_HAND, max_deals=8)
    seeds = stored_seeds(engine, test)
    assert test.deal_key is not None and seeds[0] == seeds[1] != seeds[2] == seeds[3]
    assert all(c.ok for c in leagues.verify_deals(engine, test))


def test_verification_finds_a_deal_that_is_not_the_one_the_seed_and_key_give(engine: Engine) -> None:
    league = leagues.create(engine, "tampered", THREE, table_size=2, deals=1, config=ONE_HAND)
    first = repo.blocks_of(engine, league.id)[1]
    with engine.begin() as conn:
        conn.execute(update(schema.blocks).where(schema.blocks.c.id == first.id).values(seed=first.seed ^ 1))
    checked = leagues.verify_deals(engine, league)
    assert [c.block for c in checked if not c.ok] == [1]
    # Another key (the operator's second try) gives other deals: the commitment pins the first.
    other = deals.shown(league.seed, b"x" * 32, True)["commitment"]
    assert other != deals.commitment(league.seed, league.deal_key)


# --- what is shown ------------------------------------------------------------------------------


def cli(tmp_path: Path, *args: str) -> Any:
    done = run_cli(tmp_path, *args, env={"SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp_path / 'sixnimmt.db'}"})
    return done


def outputs_while(tmp_path: Path, engine: Engine, league: repo.League) -> list[str]:
    """Everything the command line and the dashboard print about the league."""
    texts = [
        cli(tmp_path, "league", "status", league.name, "--json").stdout,
        cli(tmp_path, "league", "status", league.name).stdout,
        cli(tmp_path, "league", "standings", league.name, "--json").stdout,
        cli(tmp_path, "league", "list", "--json").stdout,
    ]
    with TestClient(create_app(make_engine(str(engine.url), read_only=True))) as client:
        for path in (
            f"/api/leagues/{league.id}",
            f"/leagues/{league.id}",
            f"/api/leagues/{league.id}/matches",
        ):
            response = client.get(path)
            assert response.status_code == 200, path
            texts.append(response.text)
    return texts


def test_the_seed_and_key_are_a_commitment_until_the_league_is_finished(tmp_path: Path) -> None:
    made = cli(tmp_path, "league", "create", "cup", "--bots", ",".join(THREE), "--table", "2", "--deals", "1",
               "-o", "hands=1", "-o", "target=None", "--json")  # fmt: skip
    assert made.returncode == 0, made.stderr
    created = json.loads(made.stdout)["deals"]
    assert created["seed"] is None and created["deal_key"] is None and created["secret"]
    engine = make_engine(f"sqlite:///{tmp_path / 'sixnimmt.db'}")
    try:
        league = repo.find_league(engine, "cup")
        assert league.deal_key is not None
        commitment = hashlib.sha256(league.seed.to_bytes(8, "big", signed=True) + league.deal_key).hexdigest()
        assert created["commitment"] == commitment
        for text in outputs_while(tmp_path, engine, league):
            assert str(league.seed) not in text and league.deal_key.hex() not in text
        status = json.loads(cli(tmp_path, "league", "status", "cup", "--json").stdout)["deals"]
        assert status == created
        refused = cli(tmp_path, "league", "verify-deals", "cup")
        assert refused.returncode == 2 and "secret until the league is finished" in refused.stderr

        assert cli(tmp_path, "league", "run", "cup", "--processes", "1", "--json").returncode == 0
        assert repo.league_phase(engine, league.id) == "finished"
        shown = json.loads(cli(tmp_path, "league", "status", "cup", "--json").stdout)["deals"]
        assert shown["seed"] == league.seed and shown["deal_key"] == league.deal_key.hex()
        assert shown["commitment"] == commitment
        with TestClient(create_app(make_engine(str(engine.url), read_only=True))) as client:
            api = client.get(f"/api/leagues/{league.id}").json()["league"]
            assert (api["seed"], api["deal_key"], api["deal_commitment"]) == (
                league.seed, league.deal_key.hex(), commitment,
            )  # fmt: skip
            assert league.deal_key.hex() in client.get(f"/leagues/{league.id}").text
        verified = cli(tmp_path, "league", "verify-deals", "cup", "--json")
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert json.loads(verified.stdout)["ok"] and json.loads(verified.stdout)["blocks"] == 3
        # Anyone can redo it from the published seed and key alone: the plan, then the keyed seeds.
        published_key = bytes.fromhex(shown["deal_key"])
        plan = plan_league("round-robin", 3, 2, 1, shown["seed"])
        assert stored_seeds(engine, league) == [by_hand(published_key, b.seed) for b in plan]
    finally:
        engine.dispose()


def test_a_deal_played_again_elsewhere_is_withheld_until_that_block_is_stored(engine: Engine) -> None:
    """An SPRT test plays each deal twice (NEW's block and OLD's): the first one's transcript must
    not show the second one's deal while it is still to be played."""
    test = bottest.create(engine, "lowest", "highest", ["random"], config=ONE_HAND, max_deals=4)
    first, second = repo.blocks_of(engine, test.id)[:2]
    assert first.seed == second.seed
    store_played(engine, first)
    match_id = match_of(engine, first)
    with engine.connect() as conn, pytest.raises(queries.DealWithheldError, match="played again in block 1"):
        queries.match(conn, match_id)
    with TestClient(create_app(engine)) as client:
        for path in (f"/api/matches/{match_id}", f"/api/matches/{match_id}/transcript",
                     f"/api/matches/{match_id}/replay", f"/matches/{match_id}"):  # fmt: skip
            response = client.get(path)
            assert response.status_code == 404 and str(first.seed) not in response.text, path
    store_played(engine, second)
    with engine.connect() as conn:
        assert queries.match(conn, match_id)["seed"] == first.seed


def store_played(engine: Engine, block: repo.BlockRow) -> None:
    """A block's matches as a worker stores them (a real match per rotation)."""
    from bot_sdk.play import play_match
    from games.classic.bots import LowestBot
    from referee.rules.registry import make_variant

    game = make_variant("classic", {"players": len(block.entrants), **ONE_HAND})
    played = []
    for rotation in range(len(block.entrants)):
        result = play_match(game, [LowestBot] * len(block.entrants), block.seed)
        seats = [
            repo.SeatRecord(s, p, 1, result.outcome.scores[s], result.outcome.ranks[s], {}, 0, False, 1)
            for s, p in enumerate(block.entrants)
        ]
        transcript = result.transcript.to_json()
        played.append(repo.MatchRecordRow(rotation, block.seed, result.transcript.digest(), "finished",
                                          seats, transcript))  # fmt: skip
    assert repo.record_block(engine, block.id, played)


def match_of(engine: Engine, block: repo.BlockRow) -> int:
    with engine.connect() as conn:
        return int(
            conn.execute(
                select(schema.matches.c.id).where(schema.matches.c.block_id == block.id).limit(1)
            ).scalar_one()
        )


# --- the bot that predicts its deal -------------------------------------------------------------

PREDICTION = re.compile(r"hostile deals: (FOUND|GUESSED) (.*?) deal (\[[0-9, ]*\])")


def stored_bot(engine: Engine, public: dict[str, Any], into: Path, name: str) -> str:
    """The hostile bot with ``public`` written into it, stored as a version of bot ``name`` (as the
    corpus is: its reports are exceptions, which the submission check would refuse)."""
    path = into / f"{name}.py"
    path.write_text(HOSTILE.read_text().replace("__PUBLIC__", json.dumps(public)))
    artifact = pack(path)
    repo.add_bot_version(engine, name, artifact.content, artifact.sha256, artifact.entry_point, "classic")
    return name


def predictions(engine: Engine, league: repo.League, bot: str) -> list[tuple[str, list[int], list[int], int]]:
    """(FOUND or GUESSED, predicted deal, dealt deal, seat) of each match the bot played."""
    version = next(v for v in repo.find_league(engine, league.name).entrants if v.bot == bot)
    query = (
        select(schema.seat_results.c.match_id, schema.seat_results.c.seat, schema.seat_results.c.fault_detail)
        .join(schema.matches, schema.matches.c.id == schema.seat_results.c.match_id)
        .join(schema.blocks, schema.blocks.c.id == schema.matches.c.block_id)
        .where(schema.blocks.c.league_id == league.id, schema.seat_results.c.bot_version_id == version.id)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    out = []
    for match_id, seat, detail in rows:
        found = PREDICTION.search(detail or "")
        assert found, f"match {match_id}: no prediction reported: {detail}"
        dealt = repo.transcript(engine, match_id)["steps"][0][0][1]
        out.append((found.group(1), json.loads(found.group(3)), list(dealt), int(seat)))
    assert out, f"{bot} played no match"
    return out


def numbers_in(value: Any) -> Iterator[int]:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from numbers_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from numbers_in(item)


@pytest.mark.slow
def test_a_bot_that_predicts_its_deal_from_everything_it_sees_gets_it_wrong(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.play.execute import claim_and_play

    monkeypatch.setenv("SIXNIMMT_DATABASE_URL", str(engine.url))
    # Control: a league whose deals follow from a seed the bot can guess (a given --seed 7, as
    # every league's did with the old default 1): it finds its deal, every opponent's hand.
    control_bot = stored_bot(engine, {}, tmp_path, "control_deals")
    control = leagues.create(engine, "control", [control_bot, "lowest"], table_size=2, deals=1, seed=7,
                             config=ONE_HAND)  # fmt: skip
    assert leagues.run_local(engine, control, processes=1) == {"stored": 1}
    told = predictions(engine, control, "control_deals")
    assert [(how, guess == dealt) for how, guess, dealt, _ in told] == [("FOUND", True)] * 2

    # A ladder with a secret deal key: its first round is played, then the bot's author reads
    # everything public (status, the dashboard's API, the played matches' seeds and transcripts),
    # writes it into the bot, and enters it; it plays its placement tables.
    secret = leagues.create(
        engine, "secret", ["lowest", "highest", "random"], table_size=2, config=ONE_HAND,
        fmt="ladder", stopping=ladder.rule(placement=1, round_deals=1).to_json(),
    )  # fmt: skip
    for block in repo.blocks_of(engine, secret.id):
        assert claim_and_play(engine, block.id).status == "stored"
    status = json.loads(cli(tmp_path, "league", "status", "secret", "--json").stdout)
    public: dict[str, Any] = {"commitment": status["deals"]["commitment"], "numbers": [], "match_seeds": []}
    seen: list[Any] = [status]
    with TestClient(create_app(make_engine(str(engine.url), read_only=True))) as client:
        seen.append(client.get(f"/api/leagues/{secret.id}").json())
        listed = client.get(f"/api/leagues/{secret.id}/matches").json()
        seen.append(listed)
        for match in listed["matches"]:
            shown = client.get(f"/api/matches/{match['id']}").json()["match"]
            public["match_seeds"].append(shown["seed"])
            seen.append(client.get(f"/api/matches/{match['id']}/transcript").json())
    public["numbers"] = sorted({n for value in seen for n in numbers_in(value) if 0 <= n < 2**63})
    assert secret.seed not in public["numbers"], "the seed is not shown while the league runs"
    bot = stored_bot(engine, public, tmp_path, "predictor")
    added = cli(tmp_path, "league", "add", "secret", bot, "--json")
    assert added.returncode == 0, added.stderr
    assert leagues.plan_next_round(engine, secret), "the newcomer's placement round"
    assert cli(tmp_path, "league", "stop", "secret").returncode == 0
    leagues.run_local(engine, repo.find_league(engine, "secret"), processes=1)
    assert repo.league_phase(engine, secret.id) == "finished"

    told = predictions(engine, secret, "predictor")
    for how, guess, dealt, seat in told:
        assert how == "GUESSED" and guess != dealt, "no candidate gives its deal"
        others = [sorted(dealt[4 + 10 * s : 14 + 10 * s]) for s in range(2) if s != seat]
        guessed = [sorted(guess[4 + 10 * s : 14 + 10 * s]) for s in range(2) if s != seat]
        assert others != guessed, "it does not know its opponent's hand"
    # Once finished, the seed and key are published, and every deal is the one they give.
    shown = json.loads(cli(tmp_path, "league", "status", "secret", "--json").stdout)["deals"]
    assert shown["seed"] == secret.seed and bytes.fromhex(shown["deal_key"]) == secret.deal_key
    verified = json.loads(cli(tmp_path, "league", "verify-deals", "secret", "--json").stdout)
    assert verified["ok"] and verified["blocks"] == len(repo.blocks_of(engine, secret.id))
