"""Language-neutral: bots that use only the generated stubs play whole games, as a bot in any
language would (``bots/rawbot.py`` imports no ``bot_sdk`` and no ``referee`` module)."""

from __future__ import annotations

from pathlib import Path

from refkit import Processes, read_log, seat_decisions

from arena.matches import MatchPlan, RefereeClient

PLANS = [
    MatchPlan(("x", "y", "x", "y"), 51),
    MatchPlan(("y", "x", "y", "x"), 52),
    MatchPlan(("x", "y", "y"), 53),
]


def test_raw_stub_bots_play_whole_games(referee: RefereeClient, bots: Processes, tmp_path: Path) -> None:
    ids: list[str] = []
    tokens: dict[str, list[str]] = {"x": [], "y": []}
    # Two sets: a four-player and a three-player config; each entrant holds one token per set.
    for config, plans in (({}, PLANS[:2]), ({"players": 3}, PLANS[2:])):
        set_ids, set_tokens = referee.create_matches("classic", config, plans)
        ids += set_ids
        for entrant, token in set_tokens.items():
            tokens[entrant].append(token)
    for entrant, entrant_tokens in tokens.items():
        for number, token in enumerate(entrant_tokens):
            bots.raw(f"{entrant}{number}", "first", token, "--log", str(tmp_path / f"{entrant}{number}.log"))

    matches = {match_id: referee.result(match_id, timeout=60) for match_id in ids}
    for name in bots.started:
        assert bots.wait(name) == 0, bots.stderr(name)  # 4 would mean an SDK module was imported
    for match in matches.values():
        assert match.status == "finished"
        assert match.transcript["outcome"] is not None
        for seat in match.seats:
            assert (seat.faults, seat.defaulted) == ({}, 0)
            decisions = seat_decisions(match, seat.seat)
            assert seat.decisions == len(decisions) > 10  # whole games: more than one hand
            assert all(d.action == d.options[0] for d in decisions)  # the first legal option

    # Each bot heard of every one of its games' ends, with the referee's scores.
    overs = {}
    for log in tmp_path.glob("*.log"):
        for message in read_log(log):
            for over in message.update.overs:
                overs[(over.match_id, over.seat)] = list(over.scores)
    expected = {(m.match_id, s.seat): [t.score for t in m.seats] for m in matches.values() for s in m.seats}
    assert overs == expected
