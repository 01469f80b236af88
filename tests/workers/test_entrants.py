"""League entrants: reference bots of every game in one store, a bot entered twice on purpose
(``NAME*N``) or refused as a slip, and a ``league create`` that fails storing nothing at all,
not the bot files it was given either. The store tests run on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from testkit import default_store, sixnimmt

from workers import league as leagues
from workers.bots import entrants
from workers.bots.entrants import EntrantError, Wanted
from workers.bots.submit import reference_version
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import artifacts, blocks, bot_versions, bots, league_entrants
from workers.store.schema import leagues as leagues_table

LOW = """
from bot_sdk import ClassicBot


class Low(ClassicBot):
    def choose_card(self, view):
        return view.hand[0]
"""
CRASHES = LOW.replace("return view.hand[0]", "raise SystemExit(3)")
QUICK = ["-o", "hands=1", "-o", "target=None"]


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A migrated, empty store: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
        store = make_engine(url)
        upgrade(store)
    else:
        store = make_engine(request.getfixturevalue("pg_url"))
    try:
        yield store
    finally:
        store.dispose()


def stored(engine: Engine) -> dict[str, Any]:
    """How many rows each table holds, and the bots' names."""
    with engine.connect() as conn:
        counts = {
            t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
            for t in (bots, bot_versions, artifacts, leagues_table, league_entrants, blocks)
        }
        names = sorted(conn.execute(select(bots.c.name)).scalars())
    return {**counts, "names": names}


def labels(league: repo.League) -> list[str]:
    return leagues.entrant_names(league)


# -- NAME*N ------------------------------------------------------------------------------------


def test_name_star_n_enters_a_bot_n_times() -> None:
    assert entrants.parse(["heuristic*2", " mc ", "", "bots/low.py * 3", "random*1"]) == [
        Wanted("heuristic", 2),
        Wanted("mc"),
        Wanted("bots/low.py", 3),
        Wanted("random"),
    ]
    for bad in ["heuristic*", "heuristic*0", "heuristic*two", "*2", "heuristic*2*2", "heuristic*101"]:
        with pytest.raises(EntrantError, match=r"write NAME\*N"):
            entrants.parse([bad])


def test_repeated_labels_are_told_apart() -> None:
    assert repo.labels_apart(["a@1", "b@1", "a@1", "c@2", "a@1"]) == ["a@1#1", "b@1", "a@1#2", "c@2", "a@1#3"]
    assert repo.labels_apart(["a@1", "b@1"]) == ["a@1", "b@1"]


# -- reference bots of every game in one store ---------------------------------------------------


def test_reference_bots_of_every_game_share_one_store(engine: Engine) -> None:
    """A store with classic reference bots (every store after ``make run``) plays board and Junior
    leagues with theirs: each game's reference bots are stored as GAME/NAME and resolved per game."""
    classic = leagues.create(engine, "classic", ["random", "heuristic"], table_size=2, deals=1)
    assert labels(classic) == ["classic/random@1", "classic/heuristic@1"]
    board = leagues.create(engine, "board", ["random*2", "heuristic*2"], variant="board", deals=1)
    assert labels(board) == [
        "board/random@1#1",
        "board/random@1#2",
        "board/heuristic@1#1",
        "board/heuristic@1#2",
    ]
    assert [v.variant for v in board.entrants] == ["board"] * 4
    junior = leagues.create(engine, "junior", ["random", "heuristic*3"], variant="junior-basic", deals=1)
    assert labels(junior)[0] == "junior-basic/random@1"
    # GAME/NAME names the same bot explicitly, aliases of the game included; nothing new is stored.
    before = stored(engine)
    again = leagues.create(
        engine, "again", ["board/random", "brettspiel/heuristic"], variant="brettspiel", table_size=2, deals=1
    )
    assert [v.id for v in again.entrants] == [board.entrants[0].id, board.entrants[2].id]
    assert stored(engine)["bot_versions"] == before["bot_versions"] == 6
    assert stored(engine)["names"] == sorted(
        f"{game}/{bot}" for game in ("classic", "board", "junior-basic") for bot in ("random", "heuristic")
    )


def test_a_store_from_before_the_game_prefix_still_works(engine: Engine) -> None:
    """Older stores hold classic reference bots under their bare names: a board league's ``random``
    is the board game's all the same, and the old bot stays reachable as ``random@1``."""
    old = reference_version("classic", "random")
    legacy, _ = repo.add_bot_version(engine, "random", old.content, old.sha256, old.entry_point, "classic")
    board = leagues.create(engine, "b", ["random", "heuristic"], variant="board", table_size=2, deals=1)
    assert labels(board) == ["board/random@1", "board/heuristic@1"]
    classic = leagues.create(engine, "c", ["random@1", "heuristic"], table_size=2, deals=1)
    assert classic.entrants[0].id == legacy.id
    with pytest.raises(repo.ConflictError, match="random@1 is a classic bot, the league plays board"):
        leagues.create(engine, "x", ["random@1", "heuristic"], variant="board", table_size=2, deals=1)


def test_another_game_s_bot_is_refused(engine: Engine) -> None:
    with pytest.raises(
        repo.ConflictError, match="classic/heuristic is a classic reference bot, the league plays board"
    ):
        leagues.create(engine, "x", ["random", "classic/heuristic"], variant="board", table_size=2, deals=1)
    assert stored(engine)["bot_versions"] == 0


# -- one bot named twice -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "refs,message",
    [
        (["heuristic", "heuristic", "random"], r"heuristic is named 2 times .* write heuristic\*2$"),
        (["heuristic*2", "random", "heuristic"], r"write heuristic\*3$"),
        (
            ["heuristic", "classic/heuristic", "random"],
            r"are the same bot \(classic/heuristic\) .* heuristic\*2$",
        ),
    ],
)
def test_a_bot_named_twice_by_mistake_is_refused(engine: Engine, refs: list[str], message: str) -> None:
    with pytest.raises(EntrantError, match=message):
        leagues.create(engine, "slip", refs, table_size=2, deals=1)
    assert stored(engine)["bots"] == 0


def test_a_stored_bot_and_its_reference_name_are_one_bot(engine: Engine) -> None:
    leagues.create(engine, "first", ["heuristic", "random"], table_size=2, deals=1)
    before = stored(engine)
    with pytest.raises(
        EntrantError, match=r"heuristic, classic/heuristic@1 are the same bot \(classic/heuristic@1\)"
    ):
        leagues.create(engine, "slip", ["heuristic", "classic/heuristic@1", "random"], table_size=2, deals=1)
    assert stored(engine) == before
    twice = leagues.create(engine, "twice", ["classic/heuristic@1*2", "random"], table_size=3, deals=1)
    assert labels(twice) == ["classic/heuristic@1#1", "classic/heuristic@1#2", "classic/random@1"]


# -- nothing stored when a league fails ----------------------------------------------------------


def test_a_league_that_cannot_be_stored_stores_none_of_its_new_bots(engine: Engine, tmp_path: Path) -> None:
    """The new bot versions go in the league's own transaction: a league refused at its insert (a
    name another writer took in between) leaves no bot behind."""
    leagues.create(engine, "taken", ["random", "lowest"], table_size=2, deals=1)
    before = stored(engine)
    path = tmp_path / "low.py"
    path.write_text(LOW)
    new = entrants.resolve(engine, [str(path), "heuristic"], "classic", sandbox=False, games=2)
    assert all(isinstance(e, repo.NewVersion) for e in new)
    with pytest.raises(repo.ConflictError, match="exists already"):
        repo.create_league(
            engine, "taken", variant="classic", config={"players": 2}, seed=1, format="round-robin",
            table_size=2, deals=1, entrants=new, planned=[(0, 5, (0, 1))],
        )  # fmt: skip
    assert stored(engine) == before
    repo.create_league(
        engine, "free", variant="classic", config={"players": 2}, seed=1, format="round-robin",
        table_size=2, deals=1, entrants=new, planned=[(0, 5, (0, 1))],
    )  # fmt: skip
    assert labels(repo.find_league(engine, "free")) == ["low@1", "classic/heuristic@1"]


# -- the command line ----------------------------------------------------------------------------


def one_line_error(done: subprocess.CompletedProcess[str], text: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("sixnimmt: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert text in done.stderr, done.stderr


def test_board_and_junior_leagues_in_a_store_with_classic_bots(tmp_path: Path) -> None:
    """The issue's steps: a classic league first, then the board game and Junior with their reference
    bots, four seats out of two bots each (``*2``), played, the seats apart in the standings."""
    made = sixnimmt(tmp_path, "league", "create", "classic", "--bots", "random,heuristic", "--table", "2")
    assert made.returncode == 0, made.stderr
    board = sixnimmt(
        tmp_path, "league", "create", "board", "--variant", "board", "--bots", "random*2,heuristic*2",
        "--deals", "1", "--json",
    )  # fmt: skip
    assert board.returncode == 0, board.stderr
    seats = ["board/random@1#1", "board/random@1#2", "board/heuristic@1#1", "board/heuristic@1#2"]
    assert json.loads(board.stdout)["entrants"] == seats
    ran = sixnimmt(tmp_path, "league", "run", "board", "--processes", "2", "--json")
    assert ran.returncode == 0, ran.stderr
    assert sorted(row["bot"] for row in json.loads(ran.stdout)["standings"]) == sorted(seats)
    table = sixnimmt(tmp_path, "league", "standings", "board", "--h2h", "--json")
    assert json.loads(table.stdout)["head_to_head"]["entrants"] == seats
    text = sixnimmt(tmp_path, "league", "standings", "board").stdout
    assert all(seat in text for seat in seats), text
    junior = sixnimmt(
        tmp_path, "league", "create", "junior", "--variant", "junior-basic", "--bots", "heuristic,random*3",
        "--json",
    )  # fmt: skip
    assert junior.returncode == 0, junior.stderr
    assert json.loads(junior.stdout)["entrants"][0] == "junior-basic/heuristic@1"
    slip = sixnimmt(
        tmp_path, "league", "create", "slip", "--variant", "board", "--bots", "heuristic,heuristic"
    )
    one_line_error(slip, "write heuristic*2")
    listed = json.loads(sixnimmt(tmp_path, "bot", "list", "--json").stdout)
    assert sorted({row["name"] for row in listed}) == sorted(
        f"{game}/{bot}" for game in ("classic", "board", "junior-basic") for bot in ("random", "heuristic")
    )


FAILING_CREATES: list[tuple[list[str], str]] = [
    (["bad", "--bots", "low.py,random,nope", "--table", "2"], "no bot 'nope'"),
    (["bad", "--bots", "low.py,random", "--table", "2", "-o", "bogus=1"], "bogus"),
    (["bad", "--bots", "low.py,random", "--table", "3"], "table"),
    (["no spaces", "--bots", "low.py,random", "--table", "2"], "bad league name"),
    (["cup", "--bots", "low.py,random", "--table", "2"], "a league named 'cup' exists already"),
    (["bad", "--bots", "low.py,random,low.py", "--table", "2"], "write low.py*2"),
    (["bad", "--bots", "low.py,random*0", "--table", "2"], "write NAME*N"),
    (["bad", "--bots", "low.py,crashes.py", "--table", "2"], "failed its check"),
    (["bad", "--bots", "low.py,random", "--variant", "board", "--table", "2"], "failed its check"),
    (["bad", "--bots", "low.py,random", "--table", "2", "--until-confident", "0.9"], "--max-deals"),
]


@pytest.mark.parametrize(("argv", "message"), FAILING_CREATES, ids=[m for _, m in FAILING_CREATES])
def test_a_failed_league_create_stores_nothing_not_even_its_bot_files(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    (tmp_path / "low.py").write_text(LOW)
    (tmp_path / "crashes.py").write_text(CRASHES)
    made = sixnimmt(tmp_path, "league", "create", "cup", "--bots", "lowest,heuristic", "--table", "2")
    assert made.returncode == 0, made.stderr
    before = [
        sixnimmt(tmp_path, *command, "--json").stdout for command in (["bot", "list"], ["league", "list"])
    ]
    options = [] if "--variant" in argv else QUICK
    one_line_error(sixnimmt(tmp_path, "league", "create", *argv, *options), message)
    after = [
        sixnimmt(tmp_path, *command, "--json").stdout for command in (["bot", "list"], ["league", "list"])
    ]
    assert after == before
    assert "low" not in {row["name"] for row in json.loads(after[0])}


def test_a_failed_league_create_makes_no_store(tmp_path: Path) -> None:
    (tmp_path / "low.py").write_text(LOW)
    one_line_error(sixnimmt(tmp_path, "league", "create", "bad", "--bots", "low.py,nope"), "no bot 'nope'")
    one_line_error(
        sixnimmt(tmp_path, "league", "create", "bad", "--bots", "low.py,heuristic,heuristic"), "heuristic*2"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["low.py"]  # no store, no data directory
    made = sixnimmt(
        tmp_path, "league", "create", "good", "--bots", "low.py,heuristic", "--table", "2", "--json"
    )
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["entrants"] == ["low@1", "classic/heuristic@1"]
    assert default_store(tmp_path).is_file()


# -- bot test: the same entrants --------------------------------------------------------------


def test_bot_test_takes_the_game_s_reference_bots_and_refuses_slips_in_its_field(engine: Engine) -> None:
    from workers.cli import bottest

    assert bottest.default_field("classic") == "random,heuristic,mc"
    assert bottest.default_field("brettspiel") == "random,heuristic"
    board = bottest.create(
        engine, "heuristic", "random", bottest.default_field("board").split(","), variant="board"
    )
    assert [v.bot for v in board.entrants] == [
        "board/heuristic",
        "board/random",
        "board/random",
        "board/heuristic",
    ]
    classic = bottest.create(engine, "mc", "heuristic", ["random", "heuristic*2"], name="classic")
    heuristic = [f"classic/heuristic@1#{k}" for k in (1, 2, 3)]
    assert labels(classic) == ["classic/mc@1", heuristic[0], "classic/random@1", *heuristic[1:]]
    before = stored(engine)
    with pytest.raises(EntrantError, match=r"write random\*2$"):
        bottest.create(engine, "mc", "heuristic", ["random", "random"], name="slip")
    assert stored(engine) == before
