"""Properties of random Anniversary games over every option: they end, cards are conserved, scores
are the bull heads taken, views keep secrets, apply never mutates, the same seed replays."""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterable

import annkit
from hypothesis import example, given, settings
from hypothesis import strategies as st

from games.anniversary.rules.anniversary import (
    DEAL,
    DRAW,
    OVER,
    ROW,
    SPECIAL,
    TAKE,
    Anniversary,
    AnniversaryConfig,
    AnniversaryState,
    CardPlaced,
    CardsSetAside,
    RoundScored,
    Special,
    SpecialPlayed,
)
from games.anniversary.rules.anniversary_cards import set_aside
from games.classic.rules.classic import CardPlaced as ClassicPlaced
from games.classic.rules.classic import Classic, ClassicConfig
from referee.rules.cards import bull_heads
from referee.rules.core import CHANCE, DecisionKind, Termination, event_to_json


def cover(cards: Iterable[int], budget: int) -> int:
    """The most bull heads some of ``cards`` are worth together without exceeding ``budget``."""
    sums = {0}
    for card in cards:
        sums |= {total + bull_heads(card) for total in sums if total + bull_heads(card) <= budget}
    return max(sums)


def heads(cards: Iterable[int]) -> int:
    return sum(bull_heads(c) for c in cards)


def check_set_aside(
    chosen: int, taken: tuple[int, ...], earlier: tuple[int, ...], removed: tuple[int, ...], row_first: bool
) -> None:
    """Rule 5: ``chosen`` goes with cards worth at most its heads; row first, the other taken cards
    get the most heads the plus points cover among them and whatever is left goes to earlier cards."""
    plus = bull_heads(chosen)
    others = [c for c in taken if c != chosen]
    assert chosen in removed and set(removed) <= set(taken) | set(earlier)
    paid = [c for c in removed if c in others]
    before = [c for c in removed if c in earlier]
    if row_first:
        assert heads(paid) == cover(others, plus), "the row's other cards come first"
        assert heads(before) == cover(earlier, plus - heads(paid)), "what is left goes to earlier cards"
    else:
        assert heads(paid) + heads(before) == cover([*others, *earlier], plus)


@settings(max_examples=500)
@given(
    cards=st.lists(st.integers(1, 104), min_size=2, max_size=14, unique=True),
    split=st.integers(1, 6),
    pick=st.integers(0, 5),
    row_first=st.booleans(),
)
@example(cards=[75, 76, 83], split=2, pick=1, row_first=True)  # issue 31: the 83 was kept
def test_negative_equals_positive_spends_every_plus_point_it_can(
    cards: list[int], split: int, pick: int, row_first: bool
) -> None:
    taken, earlier = tuple(cards[:split]), tuple(cards[split:])
    chosen = taken[pick % len(taken)]
    removed = set_aside(chosen, taken, earlier, row_first=row_first)
    check_set_aside(chosen, taken, earlier, removed, row_first)
    assert removed == tuple(sorted(removed)) and len(set(removed)) == len(removed)


def in_flight(state: AnniversaryState) -> list[int]:
    """Revealed number cards not on the table yet (the one being placed included, until it is)."""
    if state.phase in (SPECIAL, ROW):
        return [state.playing, *(card for card, _ in state.revealed[state.placed + 1 :])]
    if state.phase in (TAKE, DRAW):
        return [card for card, _ in state.revealed[state.placed + 1 :]]
    return []


def check_cards(variant: Anniversary, state: AnniversaryState, dealt: set[int]) -> None:
    """Every dealt number card is in exactly one place; every special card too."""
    places = Counter(c for part in (*state.rows, *state.hands, *state.piles, state.set_aside) for c in part)
    places.update(in_flight(state))
    assert max(places.values(), default=1) == 1, f"a card is in two places: {places.most_common(3)}"
    assert set(places) == dealt
    specials = Counter(k for hand in state.specials for k in hand)
    specials.update(state.discard)
    specials.update({int(Special.SEVEN_NIMMT): sum(state.sevens), int(Special.BLOCK): sum(state.blocked)})
    for kind, count in zip(Special, state.deck, strict=True):
        specials[int(kind)] += count
    assert [specials[int(k)] for k in Special] == list(variant.config.special_counts)


VIEW_KEYS = {
    "seat", "players", "phase", "round_no", "turn", "hand", "specials", "special_counts", "rows",
    "blocked", "sevens", "piles", "set_aside", "discard", "deck_size", "scores", "revealed", "placing",
    "taken", "played", "decision",
}  # fmt: skip


def check_views(variant: Anniversary, state: AnniversaryState) -> None:
    """A seat sees its own hand and special cards, and no card of another hand (unless revealed)."""
    pending = {d.seat: d for d in variant.pending(state)}
    revealed = {card for card, _ in state.revealed}
    for seat in range(variant.players):
        view = variant.view(state, seat)
        data = view.to_json()
        assert set(data) == VIEW_KEYS, "a new view field must be checked for leaks here"
        json.dumps(data)
        assert view.hand == state.hands[seat] and view.specials == state.specials[seat]
        assert view.special_counts == tuple(len(s) for s in state.specials)
        assert view.decision == pending.get(seat)
        secret = set().union(*(set(h) for other, h in enumerate(state.hands) if other != seat)) - revealed
        shown = set(data["hand"]) | {c for row in data["rows"] for c in row} | set(data["set_aside"])
        shown |= {c for pile in data["piles"] for c in pile} | {card for card, _ in data["revealed"]}
        assert not shown & secret, f"seat {seat} sees {sorted(shown & secret)}"
        assert not set(view.unseen()) & (shown - secret)
        if state.phase != DEAL:
            assert set(view.unseen()) >= secret


def check_decisions(variant: Anniversary, state: AnniversaryState) -> None:
    pending = variant.pending(state)
    assert (state.phase == OVER) == (not pending) == (variant.outcome(state) is not None)
    for decision in pending:
        if decision.kind is DecisionKind.ACTION_CARD:
            assert decision.options[0] == () and len(decision.options) > 1, "asked only with a use"
            assert len(set(decision.options)) == len(decision.options)
        if decision.kind is DecisionKind.ROW:
            assert decision.options and not any(state.blocked[r] for r in decision.options)  # type: ignore[index]


@annkit.GAMES
@given(config=annkit.configs(), seed=annkit.seeds, policy_seed=st.integers(0, 2**32), eager=st.booleans())
def test_random_games_keep_every_invariant(
    config: AnniversaryConfig, seed: int, policy_seed: int, eager: bool
) -> None:
    variant = Anniversary(config)
    game, steps = annkit.play(variant, seed, annkit.random_policy(policy_seed, eager))
    dealt: set[int] = set()
    banked = [0] * config.players
    bulls = [0] * config.players
    for s in steps:
        if CHANCE in s.actions and s.before.phase == DEAL:
            deal = s.actions[CHANCE]
            assert isinstance(deal, tuple)
            dealt = set(deal[: config.rows + config.players * config.hand_size])
        check_cards(variant, s.after, dealt)
        check_views(variant, s.after)
        check_decisions(variant, s.after)
        assert all(len(row) <= config.row_capacity + 1 for row in s.after.rows)
        assert len(s.after.rows) <= config.max_rows
        assert all(rows == tuple(sorted(rows)) for rows in s.after.rows), "rows stay ascending"
        for seat in range(config.players):
            # The score is the bull heads of earlier rounds plus this round's pile.
            pile = sum(bull_heads(c) for c in s.after.piles[seat])
            if s.after.phase != DEAL or not any(isinstance(e, RoundScored) for e in s.events):
                assert s.after.scores[seat] == banked[seat] + pile
        for event in s.events:
            if isinstance(event, RoundScored):
                banked = list(event.totals)
                bulls = [b + e for b, e in zip(bulls, event.bulls, strict=True)]
            if isinstance(event, CardsSetAside):
                assert event.bulls <= bull_heads(event.card) + sum(
                    bull_heads(c) for c in event.cards if c != event.card
                )
                pile = s.before.piles[event.seat]
                taken = s.before.taken
                earlier = pile[: len(pile) - len(taken)]
                check_set_aside(event.card, taken, earlier, event.cards, config.positive_row_first)
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.HANDS_PLAYED
    assert list(outcome.scores) == bulls == banked
    assert steps[-1].after.round_no == config.rounds


@annkit.GAMES
@given(config=annkit.configs(), seed=annkit.seeds, policy_seed=st.integers(0, 2**32))
def test_the_same_seed_and_actions_give_the_same_game(
    config: AnniversaryConfig, seed: int, policy_seed: int
) -> None:
    first, first_steps = annkit.play(Anniversary(config), seed, annkit.random_policy(policy_seed))
    second, second_steps = annkit.play(Anniversary(config), seed, annkit.random_policy(policy_seed))
    assert first.transcript().digest() == second.transcript().digest()
    assert [list(map(event_to_json, s.events)) for s in first_steps] == [
        list(map(event_to_json, s.events)) for s in second_steps
    ]


def test_apply_does_not_change_its_input() -> None:
    variant = Anniversary(AnniversaryConfig(players=5, specials_per_turn=3, fifth_row_end="next_take"))
    _, steps = annkit.play(variant, 99, annkit.random_policy(3))
    kinds = {e.kind for s in steps for e in s.events if isinstance(e, SpecialPlayed)}
    assert kinds == set(Special), "the game covers every special card"
    for s in steps:
        kept = copy.deepcopy(s.before)
        variant.apply(s.before, s.actions)
        assert s.before == kept


def test_random_games_use_every_special_card_and_decision() -> None:
    """Guard for the properties above: eager random play reaches every kind, swaps and low cards."""
    seen_kinds: set[int] = set()
    phases: set[int] = set()
    for seed in range(20):
        variant = Anniversary(AnniversaryConfig(players=2 + seed % 7))
        _, steps = annkit.play(variant, seed, annkit.random_policy(seed))
        seen_kinds |= {e.kind for s in steps for e in s.events if isinstance(e, SpecialPlayed)}
        phases |= {s.before.phase for s in steps}
    assert seen_kinds == set(Special)
    assert {SPECIAL, ROW, TAKE, DRAW} <= phases


@annkit.GAMES
@given(
    players=st.integers(2, 8),
    rounds=st.integers(1, 2),
    seed=annkit.seeds,
    policy_seed=st.integers(0, 2**32),
)
def test_without_special_cards_the_game_is_classics(
    players: int, rounds: int, seed: int, policy_seed: int
) -> None:
    """The same deals and actions give the same placements, takes and scores as the classic engine."""
    variant = Anniversary(AnniversaryConfig(players=players, rounds=rounds, specials_each=0))
    classic = Classic(ClassicConfig(players=players, hand_size=12, target=None, hands=rounds))
    game, steps = annkit.play(variant, seed, annkit.random_policy(policy_seed))
    state = classic.initial_state()
    for s in steps:
        assert [(d.seat, d.kind) for d in classic.pending(state)] == [
            (d.seat, d.kind) for d in s.before.pending
        ]
        state, events = classic.apply(state, s.actions)
        theirs = [(e.seat, e.card, e.row, e.taken, e.bulls) for e in events if isinstance(e, ClassicPlaced)]
        ours = [(e.seat, e.card, e.row, e.taken, e.bulls) for e in s.events if isinstance(e, CardPlaced)]
        assert ours == theirs
        assert state.rows == s.after.rows and state.scores == s.after.scores
    assert classic.outcome(state) == game.outcome()
