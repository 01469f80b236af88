"""The dashboard's Play page (dashboard/hosted.py) through its routes, on SQLite and on PostgreSQL.

A real store holds a small played league (sandboxed bots over gRPC, ``run_local``), a retired
version and a bot of another variant. With ``SIXNIMMT_PLAY=on`` a guest sits down against two
stored versions, plays a whole game through the seat's routes (the page's long poll and its
choices), and the game is stored as a game against people: its transcript verifies, its replay
and its API answer, the bots' pages count it, and no league's standings or match lists do. Off,
no Play route exists. Forged forms, bad input and the table limit are refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, func, select
from starlette.testclient import TestClient
from testkit import migrated_store, wait_for

from bot_sdk.bots import reference_bot
from bot_sdk.play import play_match
from dashboard.app import create_app
from referee.rules.registry import make_variant
from referee.rules.spec import installed_variants
from referee.rules.transcript import Transcript, verify
from referee.settings import Settings, load
from workers import league as leagues
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import human_matches, human_seats, matches, seat_results

BOTS = ["random", "lowest", "heuristic"]
SMALL = {"o.hands": "1", "o.hand_size": "3", "o.target": "none"}
"""A one-hand classic game of three cards each: a few decisions."""


@dataclass(frozen=True)
class Stored:
    engine: Engine
    league: repo.League
    versions: dict[str, repo.BotVersion]
    """Reference bot name → its stored version (``classic/NAME``)."""
    retired: repo.BotVersion
    junior: repo.BotVersion


def fill(engine: Engine) -> Stored:
    """A played classic league of three reference bots, a retired version and a Junior bot."""
    league = leagues.create(
        engine, "people-apart", BOTS, table_size=3, deals=1, seed=3, config={"hands": 1, "target": None}
    )
    assert leagues.run_local(engine, league, processes=1) == {"stored": 1}
    leagues.standings(engine, league)
    versions = {name: repo.find_version(engine, f"classic/{name}") for name in BOTS}
    code = b"print('never played')\n"
    retired, _ = repo.add_bot_version(
        engine, "old-timer", code, hashlib.sha256(code).hexdigest(), "bot.py", "classic"
    )
    repo.set_retired(engine, "old-timer@1", True)
    kid, _ = repo.add_bot_version(
        engine, "kid", code, hashlib.sha256(code).hexdigest(), "bot.py", "junior-basic"
    )
    return Stored(engine, repo.league_by_id(engine, league.id), versions, retired, kid)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def stored(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stored]:
    with migrated_store(request.param, tmp_path_factory.mktemp("play"), "sixnimmt_play") as engine:
        yield fill(engine)


def play_settings(**more: str) -> Settings:
    return load({"SIXNIMMT_PLAY": "on", **{f"SIXNIMMT_{k.upper()}": v for k, v in more.items()}})


def lobby_form(client: TestClient, variant: str = "classic") -> tuple[str, list[str]]:
    """The Play page's anti-forgery value and its first opponent slot's choices (version ids)."""
    page = client.get(f"/play?variant={variant}")
    assert page.status_code == 200
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    slot = re.search(r'<select name="opponent1".*?</select>', page.text, re.S)
    assert slot is not None
    return csrf.group(1), re.findall(r'<option value="(\d+)"', slot.group(0))


def sit(client: TestClient, versions: list[repo.BotVersion], name: str = "Ada", **extra: str) -> Any:
    csrf, _ = lobby_form(client)
    form = {"csrf": csrf, "variant": "classic", "name": name, **SMALL, **extra}
    form |= {f"opponent{i}": str(v.id) for i, v in enumerate(versions, 1)}
    return client.post("/play", data=form, follow_redirects=False)


def play_through(
    client: TestClient, table: str, pick: Callable[[dict[str, Any]], int] = lambda d: 0
) -> dict[str, Any]:
    """Follow the table's state (the page's long poll) and answer each decision with ``pick``,
    until the game is stored (the state names its replay); the last state."""
    after = None
    for _ in range(500):
        query = "" if after is None else f"?after={after}&wait=10"
        state = client.get(f"{table}/state{query}").json()["state"]
        after = state["version"]
        assert state["status"] != "ended", f"the person's seat left the game: {state['notices']}"
        if state.get("replay"):
            return state
        decision = state["decision"]
        if decision and decision["chosen"] is None:
            answer = client.post(
                f"{table}/choose", json={"request_id": decision["request_id"], "index": pick(decision)}
            )
            assert answer.status_code == 200, answer.text
    raise AssertionError("the game did not end")


def counts(engine: Engine) -> tuple[int, int, int]:
    with engine.connect() as conn:
        return (
            conn.execute(select(func.count()).select_from(matches)).scalar_one(),
            conn.execute(select(func.count()).select_from(seat_results)).scalar_one(),
            conn.execute(select(func.count()).select_from(human_matches)).scalar_one(),
        )


def test_a_guest_plays_a_whole_game_stored_apart_from_every_league(stored: Stored) -> None:
    heuristic, lowest = stored.versions["heuristic"], stored.versions["lowest"]
    before = counts(stored.engine)
    app = create_app(stored.engine, "", play_settings())
    with TestClient(app) as client:
        league_before = client.get(f"/api/leagues/{stored.league.id}").json()
        _, offered = lobby_form(client)
        # Opponents: the stored classic versions not retired; not the retired one, not Junior's.
        assert set(offered) == {str(v.id) for v in stored.versions.values()}
        assert str(stored.retired.id) not in offered and str(stored.junior.id) not in offered

        sat = sit(client, [heuristic, lowest], name="Ada <b>Lovelace</b>")
        assert sat.status_code == 303
        table = sat.headers["location"]
        assert re.fullmatch(r"/play/tables/[\w-]{20,}", table)
        page = client.get(table)
        assert page.status_code == 200
        assert "human:Ada &lt;b&gt;Lovelace&lt;/b&gt;" in page.text and "<b>Lovelace" not in page.text
        chosen: list[int] = []

        def last_option(decision: dict[str, Any]) -> int:
            chosen.append(len(decision["options"]) - 1)
            return chosen[-1]

        state = play_through(client, table, last_option)
        match_id = state["match_id"]
        assert state["replay"] == f"/human-matches/{match_id}"
        assert chosen, "the person was never asked"

        info = client.get(f"/api/human-matches/{match_id}").json()["match"]
        names = {
            "human:Ada <b>Lovelace</b>": None,
            "classic/heuristic@1": heuristic,
            "classic/lowest@1": lowest,
        }
        assert sorted(info["names"]) == sorted(names)  # seated in a random order
        me = info["names"].index("human:Ada <b>Lovelace</b>")
        by_seat = {s["seat"]: s for s in info["seats"]}
        for seat, name in enumerate(info["names"]):
            version = names[name]
            assert by_seat[seat]["bot_version_id"] == (None if version is None else version.id)
        assert by_seat[me]["person"] == "human:Ada <b>Lovelace</b>"
        assert info["config"] == {"hands": 1, "hand_size": 3, "target": None, "players": 3}
        body = client.get(f"/api/human-matches/{match_id}/transcript").json()
        transcript = Transcript.from_json(body)
        outcome = verify(transcript)
        assert transcript.digest() == info["digest"]
        assert list(outcome.scores) == [by_seat[seat]["score"] for seat in range(3)]
        assert body["meta"]["seats"] == info["names"]
        # The person's actions are the options picked, in order.
        mine = [action for step in transcript.steps for seat, action in step if seat == me]
        assert len(mine) == len(chosen)

        replay = client.get(f"/human-matches/{match_id}")
        assert replay.status_code == 200 and "Lovelace</b>" not in replay.text
        for step in range(info["steps"] + 1):
            assert client.get(f"/human-matches/{match_id}?step={step}&seat={me}").status_code == 200
        frames = client.get(f"/api/human-matches/{match_id}/replay?seat={(me + 1) % 3}").json()["frames"]
        assert len(frames) == info["steps"] + 1

        # The bots' pages count it, with a link to its replay; no league sees it: its table, its
        # match lists, the bots' league match lists.
        assert client.get(f"/api/leagues/{stored.league.id}").json() == league_before
        for seat in by_seat.values():
            if seat["bot_id"] is None:
                continue
            bot = client.get(f"/api/bots/{seat['bot_id']}").json()
            (row,) = bot["against_people"]
            assert (row["games"], row["mean_score"], row["ci_low"]) == (
                1,
                seat["score"],
                None,
            )  # one game: no interval
            assert row["people_mean_score"] == by_seat[me]["score"]
            assert [g["id"] for g in bot["people_games"]] == [match_id]
            assert f'href="/human-matches/{match_id}"' in client.get(f"/bots/{seat['bot_id']}").text
            listed = client.get(f"/api/bots/{seat['bot_id']}/matches").json()["matches"]
            assert listed and all(m["league_id"] == stored.league.id for m in listed)
    after = counts(stored.engine)
    assert after[:2] == before[:2] and after[2] == before[2] + 1


def test_the_play_page_is_off_unless_switched_on(stored: Stored) -> None:
    app = create_app(stored.engine, "", load({}))
    with TestClient(app) as client:
        for path in (
            "/play",
            "/play?variant=classic",
            "/api/play",
            "/play/tables/abc",
            "/play/tables/abc/state",
        ):
            assert client.get(path).status_code == 404, path
        assert client.post("/play", data={"variant": "classic"}).status_code in (404, 405)
        assert client.post("/play/tables/abc/choose", json={"request_id": 1, "index": 0}).status_code in (
            404,
            405,
        )
        assert 'id="nav-play"' not in client.get("/").text
    assert not any("/play" in getattr(route, "path", "") for route in app.routes)
    with TestClient(create_app(stored.engine, "", play_settings())) as client:
        assert 'id="nav-play"' in client.get("/").text


def test_a_form_from_elsewhere_is_refused_and_starts_nothing(stored: Stored) -> None:
    version = stored.versions["random"]
    before = counts(stored.engine)
    app = create_app(stored.engine, "", play_settings())
    with TestClient(app) as client:
        csrf, _ = lobby_form(client)
        form = {"variant": "classic", "name": "Eve", "opponent1": str(version.id), **SMALL}
        assert client.post("/play", data=form, follow_redirects=False).status_code == 403  # no value
        wrong = client.post("/play", data=form | {"csrf": csrf + "x"}, follow_redirects=False)
        assert wrong.status_code == 403 and "Play page" in wrong.text
        other_site = client.post(
            "/play",
            data=form | {"csrf": csrf},
            headers={"origin": "https://evil.example"},
            follow_redirects=False,
        )
        assert other_site.status_code == 403
        client.cookies.clear()  # a page of another site: the browser sends no SameSite=Strict cookie
        assert client.post("/play", data=form | {"csrf": csrf}, follow_redirects=False).status_code == 403
        assert client.get("/api/play").json()["tables"]["playing"] == 0
    assert counts(stored.engine) == before


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"variant": "no-such-game"}, "unsupported variant"),
        ({"opponent1": ""}, "at least one opponent"),
        ({"name": "   "}, "name"),
        ({"name": "a, b"}, "name"),
        ({"o.hand_size": "0"}, "hand_size"),
        ({"o.players": "5"}, "no option"),
        ({"o.colour": "red"}, "no option"),
        ({"opponent1": "999999"}, "no such bot version"),
    ],
)
def test_bad_choices_are_a_400_saying_why(stored: Stored, change: dict[str, str], says: str) -> None:
    version = stored.versions["random"]
    app = create_app(stored.engine, "", play_settings())
    with TestClient(app) as client:
        csrf, _ = lobby_form(client)
        form = {
            "csrf": csrf,
            "variant": "classic",
            "name": "Bob",
            "opponent1": str(version.id),
            **SMALL,
        } | change
        answer = client.post("/play", data=form, follow_redirects=False)
        assert answer.status_code == 400
        assert says in answer.text
        assert client.get("/api/play").json()["tables"]["playing"] == 0


def test_retired_and_other_variants_versions_are_refused(stored: Stored) -> None:
    app = create_app(stored.engine, "", play_settings())
    with TestClient(app) as client:
        for version, says in ((stored.retired, "no such bot version"), (stored.junior, "plays junior-basic")):
            answer = sit(client, [version])
            assert answer.status_code == 400 and says in answer.text


def test_over_the_limit_of_tables_a_clear_429(stored: Stored) -> None:
    version = stored.versions["lowest"]
    app = create_app(stored.engine, "", play_settings(play_max_tables="1"))
    with TestClient(app) as client:
        first = sit(client, [version])
        assert first.status_code == 303
        second = sit(client, [version], name="Bob")
        assert second.status_code == 429
        assert second.headers["retry-after"] == "60"
        assert "tables" in second.text and "try again" in second.text
        assert client.get("/api/play").json()["tables"] == {"playing": 1, "max": 1}
        play_through(client, first.headers["location"])
        again = sit(client, [version], name="Bob")
        assert again.status_code == 303
        play_through(client, again.headers["location"])


PEOPLE_TABLES = ("human_matches", "human_seats", "human_transcripts")


def test_the_pages_of_games_against_people_are_index_backed(tmp_path: Path) -> None:
    """A bot's page and a game's page read games against people through their indexes: SQLite's
    plan never scans their tables, however many games are stored."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    writer = make_engine(url)
    upgrade(writer)
    code = b"x = 1\n"
    versions = [
        repo.add_bot_version(
            writer,
            name,
            code + name.encode(),
            hashlib.sha256(code + name.encode()).hexdigest(),
            "bot.py",
            "classic",
        )[0]
        for name in ("alpha", "beta", "gamma")
    ]
    variant = make_variant("classic", {"players": 3, "hands": 1, "hand_size": 3, "target": None})
    game = play_match(
        variant, [reference_bot("classic", "random")] * 3, 5, names=["human:x", "alpha@1", "beta@1"]
    )
    transcript, digest = game.transcript.json_and_digest()
    scores, ranks = game.outcome.scores, game.outcome.ranks
    for number in range(300):
        a, b = versions[number % 3], versions[(number + 1) % 3]
        seats = [
            repo.HumanSeat(0, None, "human:x", scores[0], ranks[0], {}),
            repo.HumanSeat(1, a.id, None, scores[1], ranks[1], {}),
            repo.HumanSeat(2, b.id, None, scores[2], ranks[2], {}),
        ]
        repo.record_human_match(
            writer,
            repo.HumanMatch("classic", variant.config_json(), 5, digest, "hands_played", seats, transcript),
        )
    writer.dispose()
    engine = make_engine(url, read_only=True)
    statements: list[tuple[str, Any]] = []

    @event.listens_for(engine, "before_cursor_execute")
    def record(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        statements.append((statement, parameters))

    bot_id = versions[1].id  # one version a bot: the version's id is its bot's
    with TestClient(create_app(engine)) as client:
        shown = client.get(f"/api/bots/{bot_id}").json()
        assert shown["against_people"][0]["games"] == 200
        assert len(shown["people_games"]) == 20
        assert client.get("/human-matches/123?step=2&seat=0").status_code == 200
        assert client.get("/api/human-matches/123").json()["match"]["digest"] == digest
    raw = engine.raw_connection()
    try:
        plans = [
            (
                statement,
                [
                    row[-1]
                    for row in raw.cursor().execute("EXPLAIN QUERY PLAN " + statement, parameters or ())
                ],
            )
            for statement, parameters in statements
            if statement.lstrip().upper().startswith("SELECT") and "human_" in statement
        ]
    finally:
        raw.close()
        engine.dispose()
    assert len(plans) >= 3
    for statement, details in plans:
        for detail in details:
            found = re.match(r"SCAN (\w+)", detail)
            assert not (found and found.group(1) in PEOPLE_TABLES), (detail, statement)


def test_a_table_that_cannot_be_played_says_so_and_stores_nothing(stored: Stored, tmp_path: Path) -> None:
    """A stored version whose code does not unpack (not an archive the store would make): the table
    fails, the person's page says the seat left, the error is the operator's, nothing is stored."""
    code = b"not a bot archive\n"
    broken, _ = repo.add_bot_version(
        stored.engine, "broken", code, hashlib.sha256(code).hexdigest(), "bot.py", "classic"
    )
    before = counts(stored.engine)
    app = create_app(stored.engine, "operator-token-0123456789", play_settings())
    with TestClient(app) as client, retired_after(stored.engine, "broken@1"):
        sat = sit(client, [broken])
        assert sat.status_code == 303
        table = sat.headers["location"]
        state = client.get(f"{table}/state").json()["state"]
        while state["status"] != "ended":
            state = client.get(f"{table}/state?after={state['version']}&wait=10").json()["state"]
        assert any("could not be played" in notice for notice in state["notices"])
        api = "/api" + table
        shown = client.get(api).json()["table"]
        assert (shown["status"], shown["error"], shown["error_hidden"]) == ("failed", None, True)
        operator = client.get(api, headers={"authorization": "Bearer operator-token-0123456789"}).json()
        assert "artifact" in operator["table"]["error"]
        assert client.get("/api/play").json()["tables"]["playing"] == 0
    assert counts(stored.engine) == before


@contextlib.contextmanager
def retired_after(engine: Engine, ref: str) -> Iterator[None]:
    """Retire ``ref`` when done: the other tests of the module offer only the league's versions."""
    try:
        yield
    finally:
        repo.set_retired(engine, ref, True)


def test_stopping_the_dashboard_ends_a_table_in_play_and_stores_it(stored: Stored) -> None:
    """The person's seat leaves (a disconnect fault, as any bot that leaves); the referee plays its
    default actions to the end, and the game is stored."""
    version = stored.versions["random"]
    before = counts(stored.engine)
    with TestClient(create_app(stored.engine, "", play_settings())) as client:
        table = sit(client, [version], name="Quitter").headers["location"]
        state = client.get(f"{table}/state").json()["state"]
        while state["decision"] is None:  # the seat is at the table, asked to decide
            state = client.get(f"{table}/state?after={state['version']}&wait=10").json()["state"]
    assert counts(stored.engine)[2] == before[2] + 1
    with stored.engine.connect() as conn:
        person = conn.execute(
            select(human_seats)
            .where(human_seats.c.person == "human:Quitter")
            .order_by(human_seats.c.match_id.desc())
        ).first()
    assert person is not None and person.disconnects >= 1 and person.defaulted >= 1


def over(state: dict[str, Any]) -> dict[str, Any] | None:
    """``state`` if it shows a stored game (its replay's link), else None."""
    return state if state.get("replay") else None


def stored_table(table: dict[str, Any]) -> dict[str, Any] | None:
    """``table`` (its API's) once its game is stored, else None: asking does not touch its seat."""
    return table if table["status"] == "stored" else None


def test_a_guest_who_never_opens_the_table_leaves_it_after_the_grace_period(stored: Stored) -> None:
    """The table does not wait through every time-out for a page that never comes: after
    SIXNIMMT_HUMAN_GRACE_S the seat leaves (a disconnect fault) and the game is stored."""
    version = stored.versions["lowest"]
    with TestClient(create_app(stored.engine, "", play_settings(human_grace_s="1"))) as client:
        table = sit(client, [version], name="Ghost").headers["location"]
        stored_yet = wait_for(
            lambda: stored_table(client.get("/api" + table).json()["table"]), 60, "the table stored"
        )
        # Its page, opened at last, shows the result and the replay.
        state = wait_for(lambda: over(client.get(f"{table}/state").json()["state"]), 30, "the result")
        shown = client.get("/api" + table).json()["table"]
        assert shown == stored_yet
        assert (shown["status"], state["status"]) == ("stored", "over") and state["result"]["scores"]
        assert state["replay"] == f"/human-matches/{shown['match_id']}"
    with stored.engine.connect() as conn:
        person = conn.execute(
            select(human_seats).where(
                human_seats.c.match_id == shown["match_id"], human_seats.c.person.is_not(None)
            )
        ).one()
    assert person.person == "human:Ghost" and person.disconnects >= 1


def test_the_signed_in_operator_plays_as_the_operator(stored: Stored) -> None:
    token = "operator-token-0123456789"
    version = stored.versions["lowest"]
    with TestClient(create_app(stored.engine, token, play_settings())) as client:
        assert "you play as a guest" in client.get("/play?variant=classic").text
        assert (
            client.post("/signin", data={"token": token, "next": "/play"}, follow_redirects=False).status_code
            == 303
        )
        lobby = client.get("/play?variant=classic").text
        assert "you play as the signed-in operator" in lobby and 'value="operator"' in lobby
        state = play_through(client, sit(client, [version], name="operator").headers["location"])
    with stored.engine.connect() as conn:
        played = conn.execute(select(human_matches.c.operator).where(human_matches.c.id == state["match_id"]))
        assert played.scalar_one() is True


VARIANTS = [cls.name for cls in installed_variants()]


@pytest.fixture(scope="module")
def every_game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """A store with each installed variant's random reference bot (stored by creating a league)."""
    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('every-variant') / 'store.db'}")
    upgrade(engine)
    for name in VARIANTS:
        leagues.create(engine, f"of-{name}", ["random*2"], variant=name, table_size=2, deals=1, seed=1)
    yield engine
    engine.dispose()


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_plays_a_whole_game_at_a_table(every_game: Engine, variant: str) -> None:
    """Each variant the registry lists, with its default options, against a stored bot: a whole game
    answered through the table's routes (each decision's options in turn), verified and stored."""
    (version,) = repo.playable_versions(every_game, variant)
    with TestClient(create_app(every_game, "", play_settings())) as client:
        csrf, offered = lobby_form(client, variant)
        assert offered == [str(version.id)]
        form = {"csrf": csrf, "variant": variant, "name": "Vera", "opponent1": str(version.id)}
        sat = client.post("/play", data=form, follow_redirects=False)
        assert sat.status_code == 303, sat.text
        turns = iter(range(10**6))
        state = play_through(client, sat.headers["location"], lambda d: next(turns) % len(d["options"]))
        body = client.get(f"/api/human-matches/{state['match_id']}/transcript").json()
    transcript = Transcript.from_json(body)
    verify(transcript)
    assert transcript.variant == variant and "human:Vera" in body["meta"]["seats"]
