"""Competitions (workers.competition): a season ladder of the entered accounts' active versions,
entries, quotas and active limits, the freeze at the close, and the final among the top T, played
here with deterministic reference bots owned by accounts; the ladder's random share and
inactive entrants; migration 0012 on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, insert, inspect, select
from testkit import migrated_store

from workers import competition
from workers import league as leagues
from workers.bots import accounts
from workers.bots import competitions as entries
from workers.bots.submit import reference_version
from workers.planning import PlanError, ladder, rounds
from workers.play.execute import claim_and_play
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import bot_owners, competitions, metadata, submissions

QUICK = {"hands": 1, "target": None}


def own(engine: Engine, account: str, reference: str, *, active: bool = True) -> str:
    """Store reference bot ``reference`` as ``ACCOUNT-REFERENCE``, owned by ``account`` (made if
    new), and activate it; returns its label."""
    if account not in {a["account"] for a in accounts.list_participants(engine)}:
        accounts.create_account(engine, account)
    new = reference_version("classic", reference)
    name = f"{account}-{reference}"
    version, _ = repo.add_bot_version(engine, name, new.content, new.sha256, new.entry_point, "classic")
    with engine.begin() as conn:
        account_id = account_id_of(conn, account)
        conn.execute(insert(bot_owners).values(bot_id=bot_id_of(conn, name), account_id=account_id))
    label = f"{name}@{version.version}"
    if active:
        activate(engine, account, label)
    return label


def account_id_of(conn: Any, account: str) -> int:
    from workers.store.schema import bot_accounts

    return int(conn.execute(select(bot_accounts.c.id).where(bot_accounts.c.name == account)).scalar_one())


def bot_id_of(conn: Any, name: str) -> int:
    from workers.store.schema import bots

    return int(conn.execute(select(bots.c.id).where(bots.c.name == name)).scalar_one())


def aid(engine: Engine, account: str) -> int:
    with engine.connect() as conn:
        return account_id_of(conn, account)


def activate(engine: Engine, account: str, label: str, active: bool = True) -> None:
    repo.set_active(engine, aid(engine, account), label, active, max_active=5)


def local(engine: Engine) -> Callable[[repo.League, Callable[[int], None]], dict[str, int]]:
    """A league's blocks played here, round after round as :func:`workers.league.run_local` plays
    them, without the sandbox: these tests are of the competition's logic; the command's test
    plays through the local pool and the sandbox."""

    def play(league: repo.League, planned: Callable[[int], None]) -> dict[str, int]:
        counts: dict[str, int] = {}
        while True:
            for block in repo.blocks_of(engine, league.id):
                if block.status != "done":
                    status = str(claim_and_play(engine, block.id, sandbox=False).status)
                    counts[status] = counts.get(status, 0) + 1
            added = leagues.plan_next_round(engine, league)
            if not added:
                repo.finish_league(engine, league.id)
                return counts
            planned(added)

    return play


def make(engine: Engine, name: str = "spring", **options: Any) -> repo.Competition:
    settings: dict[str, Any] = {
        "config": QUICK,
        "table_size": 2,
        "submissions_per_day": 2,
        "active_per_account": 1,
        "final_top": 3,
        "final_until_confident": 0.9,
        "final_max_deals": 12,
        "placement": 1,
        "round_deals": 2,
        **options,
    }
    return competition.create(engine, name, **settings)


@pytest.mark.slow
def test_a_whole_competition(tmp_path: Path) -> None:
    with migrated_store("sqlite", tmp_path, "unused") as store:
        make(store)
        labels = {
            who: own(store, who, bot)
            for who, bot in (("ana", "lowest"), ("bo", "highest"), ("cy", "heuristic"), ("di", "lowest"))
        }
        spare = own(store, "ana", "highest", active=False)  # ana's second version, not active
        for who in ("ana", "bo", "cy"):
            entries.enter(store, "spring", aid(store, who))
        assert [e["account"] for e in repo.competition_entries(store, "spring")] == ["ana", "bo", "cy"]
        # Three entrants at tables of two: the season ladder starts.
        assert competition.status(store, "spring")["season"]["league"] == "spring-season"
        assert sorted(competition.status(store, "spring")["entrants"]) == sorted(
            [labels["ana"], labels["bo"], labels["cy"]]
        )
        # ana's limit is one active version for this competition: the second is refused.
        with pytest.raises(repo.ConflictError, match="allows 1 active version of classic"):
            entries.check_activation(store, aid(store, "ana"), spare)
        entries.check_activation(store, aid(store, "ana"), labels["ana"])  # active already: no change
        # A season round, then di enters: placement tables next round.
        ran = competition.run(store, "spring", local(store), rounds=1)
        assert ran["state"] == "season" and ran["ran"] == {}
        entries.enter(store, "spring", aid(store, "di"))
        competition.run(store, "spring", local(store), rounds=1)
        season = repo.find_league(store, "spring-season")
        assert labels["di"] in leagues.entrant_names(season)
        # bo deactivates: bo's version keeps its results and gets no new table.
        activate(store, "bo", labels["bo"], False)
        competition.touch(store, "spring")
        season = repo.find_league(store, "spring-season")
        bo = leagues.entrant_names(season).index(labels["bo"])
        assert ladder.LadderRule.from_json(season.stopping).inactive == (bo,)
        before = {b.number for b in repo.blocks_of(store, season.id)}
        competition.run(store, "spring", local(store), rounds=1)
        later = [b for b in repo.blocks_of(store, season.id) if b.number not in before]
        assert later and all(bo not in b.entrants for b in later)
        activate(store, "bo", labels["bo"])
        competition.touch(store, "spring")
        # The public page: the season's table with rank intervals, never a log.
        page = repo.competition(store, "spring")
        assert page["state"] == "season" and page["final"] is None
        table = page["season"]["standings"]
        assert {row["bot"] for row in table} == set(labels.values())
        assert {"rank", "rank_low", "rank_high", "score", "next", "account"} <= set(table[0])
        assert "stderr" not in str(page) and "fault_detail" not in str(page)
        # The close: submissions freeze, the ladder stops, the final among the top 3 is made.
        closed = competition.close(store, "spring")
        assert closed.state == "final" and closed.closed_at is not None
        with pytest.raises(entries.FrozenError, match="submissions froze"):
            entries.check_submission(store, "spring", aid(store, "ana"), "classic")
        with pytest.raises(entries.FrozenError, match="no new entries"):
            entries.enter(store, "spring", aid(store, "ana"))
        season = repo.find_league(store, "spring-season")
        assert ladder.LadderRule.from_json(season.stopping).stopped
        assert all(b.status == "done" for b in repo.blocks_of(store, season.id))
        final = repo.find_league(store, "spring-final")
        assert final.stopping and final.stopping["kind"] == "adaptive"
        assert final.stopping["until_confident"] == 0.9 and final.stopping["max_deals"] == 12
        assert final.seed != season.seed and final.deal_key and final.deal_key != season.deal_key
        top = [row["bot"] for row in repo.competition(store, "spring")["season"]["standings"]][:3]
        assert sorted(leagues.entrant_names(final)) == sorted(top)
        assert spare not in leagues.entrant_names(final)
        # The final plays to its end; the competition is finished.
        done = competition.run(store, "spring", local(store))
        assert done["state"] == "finished" and done["ran"]["final"]
        page = repo.competition(store, "spring")
        final_table = page["final"]["standings"]
        assert len(final_table) == 3 and all(row["games"] for row in final_table)
        assert all(row["rank_low"] <= row["rank"] <= row["rank_high"] for row in final_table)
        assert final_table[-1]["next"] is None and "told_apart" in final_table[0]["next"]
        assert competition.close(store, "spring").state == "finished"  # closing again: nothing


@pytest.mark.slow
def test_the_end_time_freezes_a_competition_when_it_is_next_touched(tmp_path: Path) -> None:
    with migrated_store("sqlite", tmp_path, "unused") as store:
        soon = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
        found = make(store, "autumn", ends_at=soon)
        for who, bot in (("ana", "lowest"), ("bo", "highest")):
            own(store, who, bot)
            entries.enter(store, "autumn", aid(store, who))
        competition.run(store, "autumn", local(store), rounds=1)
        repo.update_competition(store, found.id, ends_at=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1))
        with pytest.raises(entries.FrozenError):
            entries.check_submission(store, "autumn", aid(store, "ana"), "classic")
        assert competition.touch(store, "autumn").state == "final"
        assert competition.run(store, "autumn", local(store))["state"] == "finished"


def test_a_competitions_daily_quota_and_variant(tmp_path: Path) -> None:
    with migrated_store("sqlite", tmp_path, "unused") as store:
        found = make(store, "quota", submissions_per_day=2)
        accounts.create_account(store, "ana")
        ana = aid(store, "ana")
        with pytest.raises(repo.ConflictError, match="plays classic, not"):
            entries.check_submission(store, "quota", ana, "board")
        for _ in range(2):
            entries.check_submission(store, "quota", ana, "classic")
            sid = repo.add_submission(store, ana, "k1", "x", "classic", sha256="0" * 64, entry_point="x.py")
            repo.set_submission_competition(store, sid, found.id)
        with pytest.raises(repo.QuotaError, match="daily submission quota of 2"):
            entries.check_submission(store, "quota", ana, "classic")
        assert repo.has_entered(store, found.id, ana)
        with store.connect() as conn:
            assert conn.execute(select(submissions.c.competition_id)).scalars().all() == [found.id] * 2


def test_bad_competition_settings_store_nothing(tmp_path: Path) -> None:
    with migrated_store("sqlite", tmp_path, "unused") as store:
        with pytest.raises(PlanError, match="--final-top must be at least 2"):
            make(store, "x", final_top=1)
        with pytest.raises(PlanError, match="until-confident"):
            make(store, "x", final_until_confident=1.0)
        make(store, "x")
        with pytest.raises(repo.ConflictError, match="exists already"):
            make(store, "x")
        assert [c["name"] for c in repo.list_competitions(store)] == ["x"]


def a_ladder(entrants: int, table: int = 2, **settings: Any) -> repo.League:
    versions = tuple(
        repo.BotVersion(i + 1, f"bot{i}", 1, "0" * 64, "b.py", "classic") for i in range(entrants)
    )
    return repo.League(
        1, "ladder", "classic", {"players": table, **QUICK}, 7, "ladder", table, 1,
        versions, b"k" * 32, ladder.rule(**settings).to_json(),
    )  # fmt: skip


def results(blocks: list[Any]) -> list[dict[str, Any]]:
    """Every seat's result, the lower position the better."""
    return [
        {"block": b.number, "rotation": r, "seat": s, "position": p, "score": p,
         "rank": 1 + sorted(seating).index(p), "faults": 0}
        for b in blocks for r, seating in enumerate(b.seatings()) for s, p in enumerate(seating)
    ]  # fmt: skip


def test_a_ladder_draws_a_share_of_random_tables_and_seats_no_inactive_entrant() -> None:
    league = a_ladder(8, table=2, placement=1, round_deals=8, random_share=0.5)
    planned = rounds.next_blocks(league, [], [])
    new = rounds.next_blocks(league, results(planned), planned)
    assert len(new) == 8
    # Settled order (positions score their number): without the share, every table would be an
    # adjacent pair of the fit or the least met; the random ones reach across the table.
    assert any(abs(b.entrants[0] - b.entrants[1]) > 1 for b in new)
    assert new == rounds.next_blocks(league, results(planned), planned), "a function of the seed"
    stopping = {**(league.stopping or {}), "inactive": [0, 3]}
    quiet = dataclasses.replace(league, stopping=stopping)
    later = rounds.next_blocks(quiet, results(planned), planned)
    assert later and not any({0, 3} & set(b.entrants) for b in later)
    too_few = dataclasses.replace(league, stopping={**stopping, "inactive": list(range(7))})
    assert rounds.next_blocks(too_few, results(planned), planned) == []
    # A ladder stored before the share draws none.
    old = {k: v for k, v in (league.stopping or {}).items() if k not in ("random_share", "inactive")}
    assert ladder.LadderRule.from_json(old).random_share == 0.0
    with pytest.raises(PlanError, match="--random-share"):
        ladder.rule(random_share=1.5)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_migration_0012_adds_competitions_to_a_0011_store(kind: str, tmp_path: Path) -> None:
    if kind == "sqlite":
        store = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
        upgrade(store, "0011")
        accounts.create_account(store, "dana")
        upgrade(store)
        with store.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
            assert conn.execute(select(competitions)).all() == []
        assert {"archive", "competition_id"} <= {c["name"] for c in inspect(store).get_columns("submissions")}
        store.dispose()
        return
    with migrated_store("postgresql", tmp_path, "sixnimmt_comp") as store:
        from alembic import command

        from workers.store.migrate import alembic_config

        config = alembic_config()
        with store.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "0011")
        assert "competitions" not in inspect(store).get_table_names()
        accounts.create_account(store, "dana")
        upgrade(store)
        with store.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        assert [r["account"] for r in accounts.list_participants(store)] == ["dana"]


def test_the_key_path_on_postgresql(tmp_path: Path) -> None:
    with migrated_store("postgresql", tmp_path, "sixnimmt_comp") as store:
        make(store, "pg", final_top=2)
        for who, bot in (("ana", "lowest"), ("bo", "highest"), ("cy", "heuristic")):
            own(store, who, bot)
            competition.enter(store, "pg", aid(store, who))
        competition.run(store, "pg", local(store), rounds=1)
        assert competition.close(store, "pg").state == "final"
        assert competition.run(store, "pg", local(store))["state"] == "finished"
        page = repo.competition(store, "pg")
        assert len(page["final"]["standings"]) == 2
        assert [c["state"] for c in repo.list_competitions(store)] == ["finished"]


def sixnimmt(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env["SIXNIMMT_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
        timeout=600,
    )


@pytest.mark.slow
def test_the_organisers_commands_on_the_local_pool(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    made = sixnimmt(
        url, "competition", "create", "cup", "-o", "hands=1", "-o", "target=None", "--table", "2",
        "--submissions-per-day", "3", "--active-per-account", "1", "--final-top", "2",
        "--final-until-confident", "0.9", "--final-max-deals", "6", "--placement", "1", "--round-deals", "1",
        "--ends", "2999-01-01T00:00", "--json",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["ends_at"] == "2999-01-01T00:00:00+00:00"
    store = make_engine(url)
    try:
        for who, bot in (("ana", "lowest"), ("bo", "highest"), ("cy", "heuristic")):
            own(store, who, bot)
            entered = sixnimmt(url, "competition", "enter", "cup", who, "--json")
            assert entered.returncode == 0 and json.loads(entered.stdout)["new"], entered.stderr
        ran = sixnimmt(url, "competition", "run", "cup", "--rounds", "1", "--processes", "2", "--json")
        assert ran.returncode == 0, ran.stderr
        assert json.loads(ran.stdout)["state"] == "season"
        status = json.loads(sixnimmt(url, "competition", "status", "cup", "--json").stdout)
        assert status["season"]["league"] == "cup-season" and len(status["entrants"]) == 3
        assert status["season"]["matches"] > 0 and status["seconds_left"] > 0
        closed = sixnimmt(url, "competition", "close", "cup", "--json")
        assert closed.returncode == 0 and json.loads(closed.stdout)["state"] == "final", closed.stderr
        assert len(json.loads(closed.stdout)["final"]) == 2
        ran = sixnimmt(url, "competition", "run", "cup", "--processes", "2", "--json")
        assert ran.returncode == 0 and json.loads(ran.stdout)["state"] == "finished", ran.stderr
        shown = json.loads(sixnimmt(url, "competition", "show", "cup", "--json").stdout)
        assert [row["rank"] for row in shown["final"]["standings"]] in ([1, 2], [1, 1])
        text = sixnimmt(url, "competition", "show", "cup")
        assert "final (league cup-final)" in text.stdout and "rank interval" in text.stdout
        listed = json.loads(sixnimmt(url, "competition", "list", "--json").stdout)
        assert [(c["name"], c["state"], c["entries"]) for c in listed] == [("cup", "finished", 3)]
    finally:
        store.dispose()
    for args, message in (
        (("competition", "show", "nope"), "sixnimmt: error: no competition 'nope'\n"),
        (
            ("competition", "create", "x", "--submissions-per-day", "1", "--active-per-account", "1",
             "--final-top", "2", "--final-until-confident", "0.9", "--ends", "soon"),
            "sixnimmt: error: --ends 'soon' is not an ISO 8601 time (e.g. 2027-03-01T18:00Z)\n",
        ),
    ):  # fmt: skip
        failed = sixnimmt(url, *args)
        assert (failed.returncode, failed.stderr) == (2, message)


def submit_valid(engine: Engine, account: str, name: str, reference: str, competition_id: int) -> str:
    """A submission for the competition, validated: its version is stored, owned by ``account``."""
    new = reference_version("classic", reference)
    sid = repo.add_submission(
        engine, aid(engine, account), "k1", name, "classic", sha256=new.sha256, entry_point=new.entry_point
    )
    repo.set_submission_competition(engine, sid, competition_id)
    made = repo.finish_submission(engine, sid, new=dataclasses.replace(new, bot=name), report={"ok": True})
    assert made["status"] == "valid", made
    return str(made["version"])


def test_a_valid_submission_for_a_competition_is_made_active_once(tmp_path: Path) -> None:
    with migrated_store("sqlite", tmp_path, "unused") as store:
        found = make(store, "sub", active_per_account=1)
        for who in ("ana", "bo"):
            accounts.create_account(store, who)
            entries.check_submission(store, "sub", aid(store, who), "classic")
        first = submit_valid(store, "ana", "ana-one", "lowest", found.id)
        submit_valid(store, "bo", "bo-one", "highest", found.id)
        competition.touch(store, "sub")
        assert repo.find_league(store, "sub-season"), "two active versions: the season starts"
        assert sorted(competition.status(store, "sub")["entrants"]) == [first, "bo-one@1"]
        # A second valid submission: ana has no room (one active version here); it stays inactive.
        second = submit_valid(store, "ana", "ana-two", "heuristic", found.id)
        competition.touch(store, "sub")
        assert second not in competition.status(store, "sub")["entrants"]
        # ana deactivates her first: it is not made active again at the next sync.
        activate(store, "ana", first, False)
        competition.touch(store, "sub")
        assert competition.status(store, "sub")["entrants"] == ["bo-one@1"]
