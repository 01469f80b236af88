"""Fault reasons grouped by cause: one bug is one group, with its count and a concrete example."""

from __future__ import annotations

from referee.faults import (
    MAX_REASONS,
    OTHER_REASONS,
    FaultKind,
    add_reason,
    cause_of,
    group_reasons,
)

TRACEBACK = """Traceback (most recent call last):
  File "/tmp/bots/illegal.py", line 7, in choose_card
    raise ValueError(f"played {card}, not in hand")
ValueError: played {card}, not in hand"""


def test_reasons_that_differ_only_in_numbers_have_one_cause() -> None:
    assert cause_of("105 is not a legal card decision (options: 3, 17, 22, …)") == cause_of(
        "1000 is not a legal card decision (options: 4, 8)"
    )
    assert cause_of("no answer within 2000 ms and the 10000 ms left in the time bank") == cause_of(
        "no answer within 2000 ms and the 0 ms left in the time bank"
    )
    assert cause_of(TRACEBACK.format(card=105)) == cause_of(TRACEBACK.format(card=12))
    # Where it was raised is part of the cause: another line is another bug.
    assert cause_of(TRACEBACK.format(card=105)) != cause_of(
        TRACEBACK.format(card=105).replace("line 7", "line 9")
    )
    assert cause_of("a second answer to the same request") != cause_of("flood: more messages than requests")


def test_a_seat_tally_keeps_one_entry_per_cause_with_its_first_example() -> None:
    tally: dict[tuple[FaultKind, str], int] = {}
    for card in range(100, 100 + 3 * MAX_REASONS):
        add_reason(tally, FaultKind.ILLEGAL, f"{card} is not a legal card decision (options: 1, 2, 3)")
    add_reason(tally, FaultKind.TIMEOUT, "no answer within 2000 ms and the 10000 ms left in the time bank")
    add_reason(tally, FaultKind.TIMEOUT, "no answer within 2000 ms and the 0 ms left in the time bank")
    assert tally == {
        (FaultKind.ILLEGAL, "100 is not a legal card decision (options: 1, 2, 3)"): 3 * MAX_REASONS,
        (FaultKind.TIMEOUT, "no answer within 2000 ms and the 10000 ms left in the time bank"): 2,
    }


def test_a_full_tally_counts_new_causes_as_other_reasons() -> None:
    tally: dict[tuple[FaultKind, str], int] = {}
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    for word in words:
        add_reason(tally, FaultKind.EXCEPTION, f"ValueError: {word}")
    assert len(tally) == MAX_REASONS + 1
    assert tally[(FaultKind.EXCEPTION, OTHER_REASONS)] == len(words) - MAX_REASONS


def test_grouping_over_seats_sums_counts_and_keeps_a_concrete_example() -> None:
    seats = [
        (FaultKind.ILLEGAL, TRACEBACK.format(card=105), 3),
        ("illegal", TRACEBACK.format(card=7), 5),
        (FaultKind.TIMEOUT, "no answer within 2000 ms and the 0 ms left in the time bank", 1),
        (FaultKind.ILLEGAL, OTHER_REASONS, 2),
        (FaultKind.ILLEGAL, "1000 is not a legal card decision (options: 4, 8)", 4),
    ]
    groups = group_reasons(seats)
    assert [(g.kind, g.count) for g in groups] == [
        (FaultKind.ILLEGAL, 8),
        (FaultKind.ILLEGAL, 4),
        (FaultKind.ILLEGAL, 2),
        (FaultKind.TIMEOUT, 1),
    ]
    assert groups[0].example == TRACEBACK.format(card=7)  # the most frequent reason of the group
    assert "played 7, not in hand" in groups[0].example
    assert groups[2].example == OTHER_REASONS
    assert groups[0].to_json() == {
        "kind": "illegal",
        "count": 8,
        "reason": TRACEBACK.format(card=7),
        "cause": "ValueError: played #, not in hand (at illegal.py:7, in choose_card)",
        "distinct": 2,
    }
    assert groups[0].label() == "illegal ×8, for example"
    assert groups[3].label() == "timeout ×1"
