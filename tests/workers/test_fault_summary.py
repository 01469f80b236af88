"""``league status``'s fault rows: one row per cause, with its count and one reason as example."""

from __future__ import annotations

from workers.play.faults import summarise


def test_reasons_that_differ_only_in_their_numbers_are_one_row() -> None:
    details = [
        {"faults": [{"kind": "illegal", "reason": "played 105, not in hand (options: 3, 17)", "count": 2}]},
        {"faults": [{"kind": "illegal", "reason": "played 98, not in hand (options: 4, 40)", "count": 3}]},
        {"faults": [{"kind": "timeout", "reason": "no answer within 2000 ms", "count": 1}]},
        None,
    ]
    faults = summarise(details)["faults"]
    assert [(f["kind"], f["count"]) for f in faults] == [("illegal", 5), ("timeout", 1)]
    examples = {"played 105, not in hand (options: 3, 17)", "played 98, not in hand (options: 4, 40)"}
    assert faults[0]["reason"] in examples


def test_different_causes_stay_apart() -> None:
    details = [
        {"faults": [{"kind": "illegal", "reason": "played 105, not in hand", "count": 1}]},
        {"faults": [{"kind": "illegal", "reason": "chose row 7 of 4", "count": 1}]},
    ]
    assert len(summarise(details)["faults"]) == 2
