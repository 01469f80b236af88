"""Hidden information: over whole games, no message to a bot holds what its seat may not know.

A raw-stub bot records every message it receives; the transcripts say what was secret when:
each deal's cards (the rows' first cards, then every seat's hand in seat order), and the turn
in which each hand card was revealed. A seat may see its own hand, the rows, the taken cards
and the revealed cards, and another seat's card only once it is revealed; an undealt card never.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from refkit import Processes, read_log, seat_decisions, transcript_of

from arena.matches import FinishedMatch, MatchPlan, RefereeClient
from games.classic.rules.classic import CardsRevealed
from referee.rules.chance import seat_seed
from referee.rules.core import CHANCE
from referee.rules.registry import make_variant
from referee.rules.transcript import replay
from sixnimmt.v1 import game_pb2

SEEDS = (41, 42, 43, 44)
NEVER = 1 << 30


@dataclass
class Deal:
    """One hand of a match as the transcript knows it."""

    rows: frozenset[int]
    hands: tuple[frozenset[int], ...]
    turn_of: dict[int, int] = field(default_factory=dict)
    """The turn in which each hand card was revealed."""
    reveals: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    """The (card, seat) pairs revealed in each turn."""


def deals_of(match: FinishedMatch) -> list[Deal]:
    transcript = transcript_of(match)
    config = make_variant(transcript.variant, transcript.config).config
    first, size = config.rows, config.hand_size
    _, events = replay(transcript)
    deals: list[Deal] = []
    for step, step_events in zip(transcript.steps, events, strict=True):
        for seat, cards in step:
            if seat == CHANCE:
                assert isinstance(cards, tuple)
                hands = tuple(
                    frozenset(cards[first + s * size : first + (s + 1) * size]) for s in range(config.players)
                )
                deals.append(Deal(frozenset(cards[:first]), hands))
        for event in step_events:
            if isinstance(event, CardsRevealed):
                deal = deals[event.hand - 1]
                deal.reveals[event.turn] = event.plays
                deal.turn_of.update((card, event.turn) for card, _ in event.plays)
    return deals


class SeatWatch:
    """Checks every card one seat of one match is shown against what it may know by then."""

    def __init__(self, deals: list[Deal], seat: int) -> None:
        self.deals = deals
        self.seat = seat
        self.hand = 0
        self.revealed = 0
        """The last turn of the current hand whose cards were revealed (from the events)."""
        self.asked: set[tuple[int, int]] = set()
        """(hand, completed turns) of every card request: the seat has played that turn's card."""
        self.requests = 0
        self.reveals_seen = 0

    def may_know(self, card: int, hand: int, turn: int) -> bool:
        """Whether the seat may know ``card`` once ``turn`` turns of ``hand`` are revealed."""
        deal = self.deals[hand - 1]
        if card in deal.rows or card in deal.hands[self.seat]:
            return True
        return deal.turn_of.get(card, NEVER) <= turn

    def cards(self, cards: Iterable[int], hand: int, turn: int, where: str) -> None:
        for card in cards:
            assert self.may_know(card, hand, turn), (
                f"seat {self.seat} saw card {card} in {where} of hand {hand} after turn {turn}"
            )

    def request(self, request: game_pb2.DecisionRequest) -> None:
        self.requests += 1
        view = request.classic
        assert view.seat == self.seat
        hand, deal = view.hand_no, self.deals[view.hand_no - 1]
        choosing_row = view.phase == "row"
        # While a low card's row is chosen, the turn's cards are face up.
        turn = view.turn + choosing_row
        mine = sorted(c for c in deal.hands[self.seat] if deal.turn_of.get(c, NEVER) > turn)
        assert list(view.hand) == mine
        self.cards((c for row in view.rows for c in row.cards), hand, turn, "the rows")
        self.cards((c for pile in view.piles for c in pile.cards), hand, turn, "the piles")
        self.cards((p.card for p in view.revealed), hand, turn, "the revealed cards")
        if choosing_row:
            assert [(p.card, p.seat) for p in view.revealed] == list(deal.reveals[turn])
        else:
            assert not view.revealed
        if request.kind == game_pb2.DECISION_KIND_CARD:
            assert list(request.options) == mine
            self.asked.add((hand, view.turn))

    def event(self, message: game_pb2.MatchEvent) -> None:
        event = message.classic
        which = event.WhichOneof("event")
        if which == "hand_dealt":
            self.hand, self.revealed = event.hand_dealt.hand, 0
            rows = [c for row in event.hand_dealt.rows for c in row.cards]
            assert frozenset(rows) == self.deals[self.hand - 1].rows
        elif which == "cards_revealed":
            shown = event.cards_revealed
            assert shown.hand == self.hand
            assert (shown.hand, shown.turn - 1) in self.asked, "cards revealed before the seat played"
            plays = [(p.card, p.seat) for p in shown.plays]
            assert plays == list(self.deals[self.hand - 1].reveals[shown.turn])
            self.revealed = shown.turn
            self.reveals_seen += 1
        elif which == "row_chosen":
            self.cards([event.row_chosen.card], self.hand, self.revealed, "a row choice")
        elif which == "card_placed":
            placed = event.card_placed
            self.cards([placed.card, *placed.taken], self.hand, self.revealed, "a placement")


@pytest.mark.parametrize("send_events", [True, False], ids=["with events", "views only"])
def test_no_message_holds_what_the_seat_may_not_know(
    send_events: bool, referee: RefereeClient, bots: Processes, tmp_path: Path
) -> None:
    # The spy sits in a different seat of each match; full games, so several deals each.
    entrants = [tuple("spy" if seat == i else "r" for seat in range(4)) for i in range(len(SEEDS))]
    plans = [MatchPlan(e, seed) for e, seed in zip(entrants, SEEDS, strict=True)]
    ids, tokens = referee.create_matches("classic", {}, plans, send_events=send_events)
    log = tmp_path / "spy.log"
    bots.raw("spy", "first", tokens["spy"], "--log", str(log))
    bots.sdk("r", "random", tokens["r"])
    matches = {match_id: referee.result(match_id, timeout=60) for match_id in ids}
    assert bots.wait("spy") == 0 and bots.wait("r") == 0

    seats = {match_id: seat for seat, match_id in enumerate(ids)}
    seeds = dict(zip(ids, SEEDS, strict=True))
    watches = {m: SeatWatch(deals_of(matches[m]), seat) for m, seat in seats.items()}
    messages = list(read_log(log))
    assert messages[0].WhichOneof("kind") == "welcome"
    assert {(s.match_id, s.seat) for s in messages[0].welcome.seats} == set(seats.items())
    assert messages[-1].WhichOneof("kind") == "goodbye"
    for message in messages[1:-1]:
        update = message.update
        for start in update.starts:
            assert seats[start.match_id] == start.seat
            # Keyed by the referee's secret: not the hash of the match seed a bot could recompute.
            assert start.seat_seed != seat_seed(seeds[start.match_id], start.seat)
            assert start.seat_seed != seeds[start.match_id]
            assert "seed" not in json.loads(start.config_json)
        for event in update.events:
            watches[event.match_id].event(event)
        for request in update.requests:
            assert seats[request.match_id] == request.seat
            watches[request.match_id].request(request)
        for over in update.overs:
            assert seats[over.match_id] == over.seat

    for match_id, watch in watches.items():
        match = matches[match_id]
        assert match.status == "finished"
        assert [(s.faults, s.defaulted) for s in match.seats] == [({}, 0)] * 4
        assert len(watch.deals) > 1, "a whole game has several deals"
        assert watch.requests == len(seat_decisions(match, watch.seat))
        reveals = sum(len(deal.reveals) for deal in watch.deals)
        assert watch.reveals_seen == (reveals if send_events else 0)


def test_a_seat_seed_does_not_give_away_the_match_seed() -> None:
    """Searching small match seeds finds nothing: the referee keys seat seeds with a secret."""
    match_seed = 4242
    shown = seat_seed(match_seed, 2, key=os.urandom(32))
    assert [s for s in range(50_000) if seat_seed(s, 2) == shown] == []
