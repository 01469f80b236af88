"""Brettspiel reference bots: random, and a heuristic that simulates the round.

:class:`RandomBot` is the floor: random tiles, random luck options, random piles.
:class:`HeuristicBot` scores each of its tiles by simulating this round's attach a few times
with the other seats' tiles drawn from the tiles it has not seen, plays the best, and plays a
luck card when it gains enough (less and less as the game runs out).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot_sdk.board import BrettspielBot, BrettspielView, LuckCard, attach_points, attach_tile, tiles_due
from referee.rules.core import Action


class RandomBot(BrettspielBot):
    """Uniformly random tiles, luck options (passing included) and piles."""

    def choose_tiles(self, view: BrettspielView) -> Sequence[int]:
        return self.rng.sample(view.screen, tiles_due(view))

    def choose_luck(self, view: BrettspielView) -> Action:
        assert view.decision is not None
        return self.rng.choice(view.decision.options)

    def choose_pile(self, view: BrettspielView) -> int:
        assert view.decision is not None
        card = self.rng.choice(view.decision.options)
        assert isinstance(card, int)
        return card


class HeuristicBot(BrettspielBot):
    """The tiles with the best expected points this round; luck cards when they gain enough."""

    samples = 12
    """Simulated rounds per decision."""
    luck_gain = 8
    """Points a luck card must gain over passing early in the game (down to 1 at the end)."""

    def choose_tiles(self, view: BrettspielView) -> Sequence[int]:
        due = tiles_due(view)
        value = self.expected_points(view, due)
        # Ties go to the higher tile: low tiles can still be placed later by rule 3.
        ranked = sorted(view.screen, key=lambda t: (value[t], t), reverse=True)
        return ranked[:due]

    def expected_points(self, view: BrettspielView, due: int) -> dict[int, float]:
        """Each tile's mean points over rounds simulated with random tiles for the other seats.

        With two tiles due, the other tile of this seat is one of its own, drawn at random.
        """
        unseen = list(view.unseen())
        others = (view.players - 1) * due
        screen = view.screen
        total = dict.fromkeys(screen, 0.0)
        if len(unseen) < others:
            return {t: float(attach_points(view.board, view.oxen, view.rows, t)) for t in screen}
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

    @staticmethod
    def _simulate(view: BrettspielView, plays: list[tuple[int, int]]) -> int:
        rows = list(view.rows)
        mine = 0
        for tile, who in sorted(plays):
            points = attach_tile(view.board, view.oxen, rows, tile)
            if who == 0:
                mine = points
        return mine

    def choose_luck(self, view: BrettspielView) -> Action:
        assert view.decision is not None and view.attaching is not None
        tile = view.attaching[0]
        passing = attach_points(view.board, view.oxen, view.rows, tile)
        best: Action = ()
        best_gain = 0
        for option in view.decision.options:
            if not isinstance(option, tuple) or not option:
                continue
            if option[0] == LuckCard.PLUS_POINTS:
                gain = 5 - passing
            else:
                # Positive Oxen turns the chosen tiles' minus into plus: twice their oxen.
                gain = 2 * sum(view.oxen[t] for t in option[1:])
            if gain > best_gain:
                best, best_gain = option, gain
        rounds_left = len(view.screen) + (view.tile_sets - view.tile_set) * view.tiles_each + 1
        threshold = max(1, min(self.luck_gain, rounds_left))
        return best if best_gain >= threshold else ()
