"""Brettspiel reference bots: random, and a heuristic that simulates the round.

:class:`RandomBot` is the floor: random tiles, random luck and action card options, random
rows and piles. :class:`HeuristicBot` scores each of its tiles by simulating this round's
attach a few times with the other seats' tiles drawn from the tiles it has not seen, plays the
best, and plays a luck or action card when it gains enough over passing.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.board.rules.board import TAKE_KINDS, SpaceKind
from games.board.rules.brettspiel_attach import free_rows, next_free_row, shift_to_front
from games.board.sdk import (
    FORCED,
    ActionCard,
    BrettspielBot,
    BrettspielView,
    LuckCard,
    Plan,
    attach_tile,
    first_space_value,
    plan_of,
    plan_target,
    space_value,
    tiles_due,
)
from referee.rules.core import Action


class RandomBot(BrettspielBot):
    """Uniformly random tiles, luck and action card options (passing included), rows and piles."""

    def choose_tiles(self, view: BrettspielView) -> Sequence[int]:
        return self.rng.sample(view.screen, tiles_due(view))

    def choose_luck(self, view: BrettspielView) -> Action:
        assert view.decision is not None
        return self.rng.choice(view.decision.options)

    def choose_action_card(self, view: BrettspielView) -> Action:
        assert view.decision is not None
        return self.rng.choice(view.decision.options)

    def choose_row(self, view: BrettspielView) -> int:
        return self._choice(view)

    def choose_pile(self, view: BrettspielView) -> int:
        return self._choice(view)

    def _choice(self, view: BrettspielView) -> int:
        assert view.decision is not None
        choice = self.rng.choice(view.decision.options)
        assert isinstance(choice, int)
        return choice


class HeuristicBot(BrettspielBot):
    """The tiles with the best expected value this round; cards when they gain enough."""

    samples = 12
    """Simulated rounds per decision."""
    luck_gain = 8
    """Points a luck card must gain over passing early in the game (down to 1 at the end)."""
    action_gain = 3.0
    """Points an action card must gain over passing (a card kept is worth a point at the end)."""
    screen_cost = 0.6
    """Pro version: what an ox taken behind the screen costs, as a share of a minus point (it
    costs only if the tile is still there at the end)."""

    def choose_tiles(self, view: BrettspielView) -> Sequence[int]:
        due = tiles_due(view)
        value = self.expected_value(view, due)
        # Ties go to the higher tile: low tiles can still be placed later by rule 3.
        ranked = sorted(view.screen, key=lambda t: (value[t], t), reverse=True)
        return ranked[:due]

    def expected_value(self, view: BrettspielView, due: int) -> dict[int, float]:
        """Each tile's mean value over rounds simulated with random tiles for the other seats.

        With two tiles due, the other tile of this seat is one of its own, drawn at random.
        """
        unseen = list(view.unseen())
        others = (view.players - 1) * due
        screen = view.screen
        total = dict.fromkeys(screen, 0.0)
        if len(unseen) < others:
            return {t: self.landing_value(view, view.rows, t, stops=view.stops) for t in screen}
        rng = self.rng
        for _ in range(self.samples):
            theirs = [(t, 1) for t in rng.sample(unseen, others)]
            for tile in screen:
                plays = [*theirs, (tile, 0)]
                if due == 2 and len(screen) > 1:
                    partner = rng.choice([t for t in screen if t != tile])
                    plays.append((partner, 2))
                total[tile] += self._simulate(view, plays)
        return {t: v / self.samples for t, v in total.items()}

    def _simulate(self, view: BrettspielView, plays: list[tuple[int, int]]) -> float:
        rows = list(view.rows)
        mine = 0.0
        for tile, who in sorted(plays):
            if who == 0:
                mine = self.landing_value(view, rows, tile, stops=view.stops)
            attach_tile(view.board, view.oxen, rows, tile, FORCED, view.stops)
        return mine

    def landing_value(
        self,
        view: BrettspielView,
        rows: Sequence[tuple[int, ...]],
        tile: int,
        plan: Plan = FORCED,
        stops: Sequence[int] = (),
    ) -> float:
        """What attaching ``tile`` under ``plan`` is worth to this seat: its points, with the pro
        version's tiles behind the screen and draws valued as estimates."""
        oxen = view.oxen
        row, space = plan_target(rows, tile, plan, stops)
        landing = tile
        work = list(rows)
        if plan.front:
            shifted, space = shift_to_front(rows[row], tile)
            landing = shifted[space]
            work[row] = (*shifted[:space], 0, *shifted[space + 1 :])
        kind = view.board.rows[row].spaces[space].kind
        if kind not in TAKE_KINDS:
            return space_value(view, landing, row, space)
        taken = sum(oxen[t] for t in work[row] if t)
        value = -taken * (self.screen_cost if kind is SpaceKind.TAKE_TILES else 1.0)
        work[row] = ()
        if view.pro:
            return value + max(first_space_value(view, landing, r) for r in free_rows(work, row))
        return value + first_space_value(view, landing, next_free_row(work, row))

    def choose_action_card(self, view: BrettspielView) -> Action:
        assert view.decision is not None and view.attaching is not None
        tile = view.attaching[0]
        plan = plan_of(view)
        passing = self.landing_value(view, view.rows, tile, plan, view.stops)
        best: Action = ()
        best_gain = self.action_gain
        for option in view.decision.options:
            if not isinstance(option, tuple) or not option:
                continue
            gain = self._card_value(view, tile, plan, option) - passing
            if gain > best_gain:
                best, best_gain = option, gain
        return best

    def _card_value(self, view: BrettspielView, tile: int, plan: Plan, option: tuple[int, ...]) -> float:
        """The value of this tile's attach (or the swapped-in tile's) after playing ``option``."""
        card, *target = option
        rows, stops = view.rows, view.stops
        if card == ActionCard.STOP:
            return self.landing_value(view, rows, tile, plan, (*stops, target[0]))
        if card == ActionCard.SKIP:
            return self.landing_value(view, rows, tile, plan._replace(skips=plan.skips + 1), stops)
        if card == ActionCard.MOVE_TO_FRONT:
            return self.landing_value(view, rows, tile, Plan(target[0], front=True), stops)
        if card == ActionCard.ATTACH_ASCENDING:
            return self.landing_value(view, rows, tile, Plan(target[0]), stops)
        if card == ActionCard.TILE_SWAP:
            return self.landing_value(view, rows, target[0], FORCED, stops)
        # One More Tile: both tiles go now; the extra one leaves the screen (no minus at the end).
        extra = (
            self.landing_value(view, rows, target[0], FORCED, stops) + self.screen_cost * view.oxen[target[0]]
        )
        return self.landing_value(view, rows, tile, plan, stops) + extra

    def choose_luck(self, view: BrettspielView) -> Action:
        assert view.decision is not None and view.attaching is not None
        tile = view.attaching[0]
        passing = self.landing_value(view, view.rows, tile, plan_of(view), view.stops)
        row, space = view.attaching[1:]
        to_screen = view.board.rows[row].spaces[space].kind is SpaceKind.TAKE_TILES
        best: Action = ()
        best_gain = 0.0
        for option in view.decision.options:
            if not isinstance(option, tuple) or not option:
                continue
            if option[0] == LuckCard.PLUS_POINTS:
                gain = 5 - passing
            elif to_screen:
                # On "Take Row (Tiles)" the chosen tiles score plus and still go behind the screen.
                gain = float(sum(view.oxen[t] for t in option[1:]))
            else:
                # Positive Oxen turns the chosen tiles' minus into plus: twice their oxen.
                gain = 2.0 * sum(view.oxen[t] for t in option[1:])
            if gain > best_gain:
                best, best_gain = option, gain
        rounds_left = len(view.screen) + (view.tile_sets - view.tile_set) * view.tiles_each + 1
        threshold = max(1, min(self.luck_gain, rounds_left))
        return best if best_gain >= threshold else ()
