"""A link knows whether it is live from a count of its seats still playing, kept as matches are
registered and finished, not from a scan of every seat (finishing a link's matches one after
another scanned the finished ones each time: quadratic in the matches of a CreateMatches)."""

from __future__ import annotations

from referee.driver.links import EntrantLink, GameInfo, SeatStats
from referee.rules.core import Outcome, Termination

OVER = Outcome((0, 0), (1, 1), Termination.HANDS_PLAYED)


def _info(match: int, seat: int) -> GameInfo:
    return GameInfo(f"m{match}", seat, "classic", {}, 0, ("a", "a"))


def test_a_link_is_live_until_its_last_seat_finishes() -> None:
    link = EntrantLink("a", "token", 0.0)
    assert not link.live
    for match in range(300):
        for seat in (0, 1):
            link.register(_info(match, seat), SeatStats("a"))
    assert link.live and link.playing == 600
    for match in range(300):
        for seat in (0, 1):
            assert link.live
            link.finish(f"m{match}", seat, OVER)
            link.finish(f"m{match}", seat, OVER)  # twice counts once
    assert not link.live and link.playing == 0
    assert all(stats.finished for stats in link.seats.values())


def test_a_seat_registered_again_or_finished_already_counts_once() -> None:
    link = EntrantLink("a", "token", 0.0)
    link.register(_info(1, 0), SeatStats("a"))
    link.register(_info(1, 0), SeatStats("a"))  # the same seat again: replaces it
    assert link.playing == 1
    link.register(_info(2, 0), SeatStats("a", finished=True))
    assert link.playing == 1
    link.finish("m1", 0, OVER)
    assert not link.live
