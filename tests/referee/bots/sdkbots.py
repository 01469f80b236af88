"""SDK bots for the referee tests, run as ``python -m bot_sdk.run sdkbots.py:ClassName``.

They play the highest card and the last row, never what the referee's default action would
(the lowest card, the cheapest row), so a transcript shows which decisions were defaulted.
Each misbehaves as its name says; the ``BOT_*`` environment variables tune it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from games.classic.bots import RandomBot
from games.classic.rules.classic import ClassicView
from games.classic.sdk import ClassicBot


class Highest(ClassicBot):
    """The highest card and the last row; counts the card decisions of the process."""

    cards = 0

    def choose_card(self, view: ClassicView) -> int:
        Highest.cards += 1
        self.before(Highest.cards)
        return self.card(view)

    def choose_row(self, view: ClassicView) -> int:
        return len(view.rows) - 1

    def before(self, number: int) -> None:
        """Called before the ``number``-th card decision of the process."""

    def card(self, view: ClassicView) -> int:
        return max(view.hand)


class Sleeper(Highest):
    """Sleeps before its first card decisions: ``BOT_SLEEP`` seconds, comma-separated."""

    def before(self, number: int) -> None:
        plan = [float(s) for s in os.environ.get("BOT_SLEEP", "0").split(",")]
        if number <= len(plan):
            time.sleep(plan[number - 1])


class Crasher(Highest):
    """Dies without a word at its ``BOT_CRASH_AT``-th card decision."""

    def before(self, number: int) -> None:
        if number == int(os.environ.get("BOT_CRASH_AT", "3")):
            os._exit(7)


class Illegal(Highest):
    """Plays a card it does not hold in its first ``BOT_ILLEGAL`` card decisions."""

    def card(self, view: ClassicView) -> int:
        if Highest.cards <= int(os.environ.get("BOT_ILLEGAL", "2")):
            return view.top_card + 1
        return max(view.hand)


class Gated(Highest):
    """Touches the file ``BOT_ASKED`` at its first card decision, then waits for ``BOT_GO``."""

    def before(self, number: int) -> None:
        if number == 1:
            Path(os.environ["BOT_ASKED"]).touch()
            go = Path(os.environ["BOT_GO"])
            deadline = time.monotonic() + 30
            while not go.exists() and time.monotonic() < deadline:
                time.sleep(0.01)


class SlowRandom(RandomBot):
    """A well-behaved random bot that thinks ``BOT_THINK`` seconds per card (default 0.01); with
    ``BOT_CARDS`` set, it appends a line to that file for each card it plays."""

    def choose_card(self, view: ClassicView) -> int:
        time.sleep(float(os.environ.get("BOT_THINK", "0.01")))
        card = super().choose_card(view)
        cards = os.environ.get("BOT_CARDS")
        if cards:
            with open(cards, "a") as log:
                log.write(f"{card}\n")
        return card


class Raiser(Highest):
    """Raises in its first ``BOT_RAISE`` card decisions; writes every fault notice to ``BOT_NOTICES``."""

    def before(self, number: int) -> None:
        if number <= int(os.environ.get("BOT_RAISE", "2")):
            raise ValueError(f"boom at card decision {number}")

    def on_fault(self, notice: object) -> None:
        with open(os.environ["BOT_NOTICES"], "a") as log:
            log.write(f"{notice}\n")


class Watcher(Highest):
    """Overrides ``on_events`` (so the SDK subscribes): writes each game's event count to ``BOT_EVENTS``."""

    def on_start(self, seat: int, variant: str, config: dict[str, object]) -> None:
        self.events = 0

    def on_events(self, events: object) -> None:
        self.events += len(events)  # type: ignore[arg-type]

    def on_game_over(self, outcome: object) -> None:
        with open(os.environ["BOT_EVENTS"], "a") as log:
            log.write(f"{self.events}\n")


class Modules(Highest):
    """Writes the ``games`` modules its process imported to ``BOT_MODULES`` at each game over."""

    def on_game_over(self, outcome: object) -> None:
        import sys

        with open(os.environ["BOT_MODULES"], "w") as log:
            log.write("\n".join(sorted(name for name in sys.modules if name.startswith("games"))))
