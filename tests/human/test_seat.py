"""A person's seat without a browser: a real referee, real bot processes, and the person playing
through the seat's handler functions (the same the page calls); the transcripts are verified."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from humankit import checked, local_table, play_through_handlers, seat_actions
from testkit import wait_for

from arena.matches import MatchPlan, spawn_bot, stop_bot
from arena.referee_thread import referee_in_thread
from bot_sdk.bot import Bot
from bot_sdk.runner import NO_REPLY, run
from dashboard.table import handlers
from dashboard.table.seat import Seat, SeatError, human_name
from referee.rules.core import Action, View


def test_a_whole_game_through_the_handlers_is_a_verified_transcript_with_the_choices_made(
    tmp_path: Path,
) -> None:
    with local_table(("random", "heuristic"), transcripts=tmp_path) as table:
        chosen = play_through_handlers(table.seats[0], random.Random(1))
        (played,) = table.played()
    transcript = checked(played)
    assert transcript.meta["seats"] == ["human:ann", "random0", "heuristic1"]
    assert seat_actions(transcript, 0) == chosen
    assert len(chosen) >= 4  # four cards, and any row it had to take
    assert all(not faults for faults in transcript.meta["faults"])
    state = table.seats[0].state()
    assert state["status"] == "over" and state["result"]["scores"] == list(transcript.outcome.scores)


def test_the_state_is_the_seats_view_with_labelled_options_and_a_clock() -> None:
    with local_table(("random", "random")) as table:
        seat = table.seats[0]
        answer = json.loads(handlers.state(seat, {})[2])
        while answer["state"]["decision"] is None:
            answer = json.loads(handlers.state(seat, {"after": [str(answer["state"]["version"])]})[2])
        state = answer["state"]
        decision, view = state["decision"], state["view"]
        assert state["status"] == "deciding" and state["variant"] == "classic" and state["seat"] == 0
        assert decision["kind"] == "card" and decision["options"] == sorted(view["hand"])
        assert decision["labels"] == [f"Play {card}" for card in decision["options"]]
        assert state["clock"]["decision_ms"] == 60_000 and state["clock"]["bank_ms"] == 120_000
        assert 0 < state["clock"]["decision_left_ms"] <= 60_000
        assert [len(row) for row in state["board"]["rows"]] == [1, 1, 1, 1]
        assert state["board"]["costs"] == [sum(state["bulls"][card] for card in row) for row in view["rows"]]
        assert state["names"] == ["human:ann", "random0", "random1"]
        html = answer["html"]
        assert html.count('class="option') == len(decision["options"])
        # A choice that is not one on offer is refused, and nothing is chosen.
        wrong = [
            ({"request_id": decision["request_id"] + 1, "index": 0}, 409, "is not pending"),
            ({"request_id": decision["request_id"], "index": len(decision["options"])}, 409, "no option"),
            ({"request_id": decision["request_id"], "index": -1}, 409, "no option"),
            ({"request_id": decision["request_id"], "index": "0"}, 400, "whole numbers"),
            ({"request_id": decision["request_id"]}, 400, "whole numbers"),
        ]
        for body_json, code, words in wrong:
            answer = handlers.choose(seat, json.dumps(body_json).encode(), "application/json")
            assert answer[0] == code and words in json.loads(answer[2])["error"], body_json
        assert handlers.choose(seat, b"not json", "application/json")[0] == 400
        assert handlers.choose(seat, b'{"request_id": 1, "index": 0}', "text/plain")[0] == 415
        assert seat.state()["decision"]["chosen"] is None
        assert handlers.state(seat, {"after": ["x"]})[0] == 400


def test_a_seat_whose_page_is_gone_leaves_with_a_disconnect_fault(tmp_path: Path) -> None:
    with local_table(("random", "random"), transcripts=tmp_path, human_grace_s=1) as table:
        seat = table.seats[0]
        state = seat.wait(None, 0)
        while state["decision"] is None:  # the page comes once, sees its first decision, and goes
            state = seat.wait(state["version"], 0.5)
        (played,) = table.played()
    transcript = checked(played)
    assert transcript.meta["faults"][0] == {"disconnect": 1}
    assert seat_actions(transcript, 0)  # its decisions were played: the referee's defaults
    state = seat.state()
    assert "your seat left the game" in " ".join(state["notices"])
    # A page that comes back still finds the result and the replay: the table told the seat.
    assert state["status"] == "over" and state["result"]["scores"] == list(transcript.outcome.scores)
    assert state["replay"] == "/games/0"


def _noticed(seat: Seat, words: str) -> bool:
    return words in " ".join(seat.state()["notices"])


def _play_all(seats: Sequence[Seat]) -> list[list[Any]]:
    """Each seat played to its game's end through the handlers, all at once."""
    chosen: list[list[Any]] = [[] for _ in seats]

    def play(i: int) -> None:
        chosen[i] = play_through_handlers(seats[i], random.Random(i))

    players = [threading.Thread(target=play, args=(i,)) for i in range(len(seats))]
    for player in players:
        player.start()
    for player in players:
        player.join(240)
    return chosen


def test_a_seat_whose_page_comes_back_joins_the_game_again(tmp_path: Path) -> None:
    people = ("human:ann", "human:bob")
    with local_table(("random",), people=people, transcripts=tmp_path, human_grace_s=1) as table:
        ann, bob = table.seats
        for seat in (ann, bob):  # both pages see their first decision
            state = seat.wait(None, 0)
            while state["decision"] is None:
                state = seat.wait(state["version"], 0.5)
        # Ann's page goes; Bob's stays and keeps the turn waiting for his card.
        wait_for(lambda: bob.seen() or _noticed(ann, "your seat left the game"), 60, "ann's seat to leave")
        # Ann's page comes back: the seat connects again, and the referee replays the start to it.
        wait_for(
            lambda: ann.seen() or bob.seen() or _noticed(ann, "joined the game again"),
            60,
            "ann to join again",
        )
        chosen = _play_all((ann, bob))
        (played,) = table.played()
    transcript = checked(played)
    assert transcript.meta["faults"] == [{"disconnect": 1}, {}, {}]
    assert transcript.meta["defaulted"][0] == 1  # the decision pending when the page went, no other
    assert seat_actions(transcript, 0)[1:] == chosen[0] and len(chosen[0]) >= 3
    assert seat_actions(transcript, 1) == chosen[1]
    assert ann.state()["status"] == "over"


def test_a_seat_whose_clock_runs_out_times_out_and_answers_nothing_late(tmp_path: Path) -> None:
    config = {"players": 3, "hand_size": 2, "hands": 1}
    with local_table(
        ("random", "random"), transcripts=tmp_path, config=config, human_decision_ms=300, human_bank_ms=0
    ) as table:
        seat = table.seats[0]
        seat.seen()  # a page is there, and never chooses
        (played,) = table.played()
    transcript = checked(played)
    decisions = len(seat_actions(transcript, 0))
    # Every decision was the referee's default after a time-out; no late empty answer was sent
    # (the referee would have faulted that as illegal).
    assert transcript.meta["faults"][0] == {"timeout": decisions}
    assert transcript.meta["defaulted"][0] == decisions >= 2
    assert "your time ran out" in " ".join(seat.state()["notices"])


def test_two_people_at_one_table_each_play_their_own_seat(tmp_path: Path) -> None:
    with local_table(("random",), people=("human:ann", "human:bob"), transcripts=tmp_path) as table:
        chosen = _play_all(table.seats)
        (played,) = table.played()
    transcript = checked(played)
    assert transcript.meta["seats"] == ["human:ann", "human:bob", "random0"]
    assert seat_actions(transcript, 0) == chosen[0] and seat_actions(transcript, 1) == chosen[1]


def test_a_seat_shut_before_its_game_connects_leaves_it_at_once(tmp_path: Path) -> None:
    """A table closed while it was starting a game (its bots spawning) shuts the seat before the
    seat connects: the seat still connects, says goodbye at once, and the referee plays its
    defaults; it does not wait out a person's whole clock at each decision (three minutes each)."""
    config = {"players": 3, "hand_size": 3, "hands": 1}
    seat = Seat("human:ann", grace_s=60)
    seat.shut()
    with referee_in_thread(tmp_path) as client:
        (match_id,), tokens = client.create_matches(
            "classic",
            config,
            [MatchPlan(("human:ann", "random0", "random1"), 1)],
            decision_ms=60_000,
            bank_ms=120_000,
        )
        bots = [
            spawn_bot("random", referee=client.address, token=tokens[name], variant="classic", name=name)
            for name in ("random0", "random1")
        ]
        try:
            runner = seat.play(client.address, tokens["human:ann"])
            (match,) = client.results([match_id], timeout=120)  # the clock would take 9 minutes
            runner.join(30)
        finally:
            for bot in bots:
                stop_bot(bot, 10, None)
    assert not runner.is_alive()
    person = match.seats[0]
    assert {kind.value: count for kind, count in person.faults.items()} == {"disconnect": 1}
    assert person.defaulted >= 3  # its three cards (and any row it took), each the referee's default


def test_a_table_closed_between_games_starts_no_other(tmp_path: Path) -> None:
    config = {"players": 3, "hand_size": 2, "hands": 1}
    with local_table(("random", "random"), transcripts=tmp_path, config=config, games=3) as table:
        seat = table.seats[0]
        wait_for(lambda: seat.state()["decision"] is not None, 120, "the first game's first decision")
        table.table.close()  # the person's seat leaves the first game: it ends by defaults
        played = table.played()
    assert [game.number for game in played] == [0]
    assert checked(played[0]).meta["faults"][0] == {"disconnect": 1}


@pytest.mark.parametrize("name", ["", " ", "a,b", "x" * 33, "tab\there"])
def test_a_bad_name_is_refused(name: str) -> None:
    with pytest.raises(SeatError, match="printable characters"):
        human_name(name)


class _Silent(Bot):
    """Answers nothing at all, at once."""

    def decide(self, view: View) -> Action:
        return NO_REPLY  # type: ignore[no-any-return]


def test_a_bot_that_returns_no_reply_is_timed_out_not_faulted_as_illegal(tmp_path: Path) -> None:
    with referee_in_thread(tmp_path) as client:
        (match_id,), tokens = client.create_matches(
            "classic",
            {"players": 2, "hand_size": 2, "hands": 1},
            [MatchPlan(("silent", "random"), 1)],
            decision_ms=200,
            bank_ms=0,
        )
        bot = spawn_bot(
            "random", referee=client.address, token=tokens["random"], variant="classic", name="random"
        )
        try:
            summary = run(_Silent, referee=client.address, token=tokens["silent"], name="silent")
            match = client.result(match_id)
        finally:
            stop_bot(bot, 10, None)
    silent = match.seats[0]
    assert summary.games == 1 and summary.errors == 0
    assert {kind.value: count for kind, count in silent.faults.items()} == {"timeout": silent.defaulted}
    assert silent.defaulted >= 2
