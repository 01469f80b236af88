"""The platform between the SDK and the league: what plays bots against each other, not what a bot is.

- :mod:`arena.tournament`: the planner (duplicate blocks over every table) and a local round-robin;
- :mod:`arena.matches`: the referee's admin client (``CreateMatches``, ``GetResult`` with the admin
  token), a local referee in its own process, and the one launcher of bot processes;
- :mod:`arena.referee_thread`: a referee inside this process, on a thread (a league worker's);
- :mod:`arena.conformance`: ``sixnimmt bot check``;
- :mod:`arena.evaluate`: bull heads per hand of a bot against reference opponents;
- :mod:`arena.cli`: the ``arena``, ``bot play`` and ``bot check`` commands (an entry-point plugin).

It is part of the base install, like the SDK (:mod:`bot_sdk`) and the referee below it; the league
(:mod:`workers`) and the dashboard sit above it. See docs/architecture.md for the layers.
"""
