"""Standing entrants: one bot connection, matches added to it over time, results as fresh bots'.

A standing token (``OpenStanding``) is presented in Hello once; every ``CreateMatches`` that maps
an entrant to it has that entrant's seats played over the same stream, each set's entrant name,
faults and results its own; ``CloseStanding`` says goodbye once its games are over.
"""

from __future__ import annotations

import time

import pytest
from refkit import ONE_HAND, Processes

from arena.matches import FinishedMatch, MatchPlan, RefereeClient, RefereeError

KEY = b"standing-test-key"


def _results(client: RefereeClient, ids: list[str]) -> list[FinishedMatch]:
    return [client.result(match_id, timeout=60) for match_id in ids]


def test_matches_added_over_time_play_over_one_connection(referee: RefereeClient, bots: Processes) -> None:
    token = referee.open_standing("random@1")
    standing = bots.sdk("warm", "random", token)
    digests = []
    for round_, name in enumerate(("entrant0", "entrant7", "somebody")):
        plans = [
            MatchPlan(seating, 100 + round_)
            for seating in ((name, "r1", "r2", "r3"), ("r1", name, "r2", "r3"))
        ]
        ids, tokens = referee.create_matches("classic", ONE_HAND, plans, seat_key=KEY, standing={name: token})
        assert tokens[name] == token  # the standing token, not one of this set
        fresh = {e: bots.sdk(f"{e}-{round_}", "random", tokens[e]) for e in ("r1", "r2", "r3")}
        matches = _results(referee, ids)
        for match in matches:
            assert match.status == "finished"
            assert [(s.faults, s.defaulted) for s in match.seats] == [({}, 0)] * 4
            # The set's own entrant name is the seat's, whatever the standing connection is called.
            assert name in [s.entrant for s in match.seats]
        digests.append([m.digest for m in matches])
        for process in fresh.values():
            assert process.wait(30) == 0  # the set's own tokens end with their games, as always
        assert standing.poll() is None  # the standing bot stays connected between sets
    # The same sets with every bot fresh give the same games: seat seeds come from the match.
    for round_, name in enumerate(("entrant0", "entrant7", "somebody")):
        plans = [
            MatchPlan(seating, 100 + round_)
            for seating in ((name, "r1", "r2", "r3"), ("r1", name, "r2", "r3"))
        ]
        ids, tokens = referee.create_matches("classic", ONE_HAND, plans, seat_key=KEY)
        for entrant, entrant_token in tokens.items():
            bots.sdk(f"fresh-{entrant}-{round_}", "random", entrant_token)
        assert [m.digest for m in _results(referee, ids)] == digests[round_]
    assert referee.close_standing([token], "done for today") == 1
    assert standing.wait(30) == 0
    assert referee.close_standing([token]) == 0  # closed already


def test_matches_created_before_the_bot_connects_wait_for_it(referee: RefereeClient, bots: Processes) -> None:
    token = referee.open_standing()
    ids, tokens = referee.create_matches(
        "classic", ONE_HAND, [MatchPlan(("s", "s", "r", "r"), 7)], standing={"s": token}
    )
    bots.sdk("r", "random", tokens["r"])
    time.sleep(0.3)
    standing = bots.sdk("s", "random", token)
    (match,) = _results(referee, ids)
    assert [(s.faults, s.defaulted) for s in match.seats] == [({}, 0)] * 4
    # Closed while idle: the goodbye comes at once, and the token is refused from then on.
    referee.close_standing([token])
    assert standing.wait(30) == 0
    assert bots.raw("late", "first", token).wait(30) == 5
    assert "UNAUTHENTICATED" in bots.stderr("late")


def test_closing_waits_for_the_games_of_the_connection(referee: RefereeClient, bots: Processes) -> None:
    token = referee.open_standing()
    standing = bots.sdk("s", ":SlowRandom", token)
    ids, tokens = referee.create_matches(
        "classic", {"hands": 2, "target": None}, [MatchPlan(("s", "r", "r", "r"), 8)], standing={"s": token}
    )
    bots.sdk("r", "random", tokens["r"])
    referee.close_standing([token])  # while its match plays: it finishes first
    (match,) = _results(referee, ids)
    assert match.status == "finished"
    assert [(s.faults, s.defaulted) for s in match.seats] == [({}, 0)] * 4
    assert standing.wait(30) == 0


def test_a_crashed_standing_bot_faults_only_its_seats(referee: RefereeClient, bots: Processes) -> None:
    token = referee.open_standing()
    standing = bots.sdk("s", ":Crasher", token)
    ids, tokens = referee.create_matches(
        "classic", ONE_HAND, [MatchPlan(("s", "r", "r", "r"), 9)], standing={"s": token}
    )
    bots.sdk("r", "random", tokens["r"])
    (match,) = _results(referee, ids)
    assert standing.wait(30) != 0
    seats = sorted(match.seats, key=lambda s: s.seat)
    assert "crash" in {kind.value for kind in seats[0].faults}
    assert [s.faults for s in seats[1:]] == [{}] * 3
    referee.close_standing([token])


def test_unknown_or_closed_standing_tokens_are_refused(referee: RefereeClient) -> None:
    plan = [MatchPlan(("s", "r", "r", "r"), 10)]
    with pytest.raises(RefereeError, match=r"INVALID_ARGUMENT.*standing token"):
        referee.create_matches("classic", ONE_HAND, plan, standing={"s": "made-up"})
    token = referee.open_standing()
    referee.close_standing([token])
    with pytest.raises(RefereeError, match=r"INVALID_ARGUMENT.*standing token"):
        referee.create_matches("classic", ONE_HAND, plan, standing={"s": token})
