"""The built-in games, one package each (``games/<name>/``): rules, codec, SDK base, bots, replay.

Each package's ``SPEC`` (a :class:`referee.rules.spec.GameSpec`) names its parts by lazy
reference; the ``sixnimmt.games`` entry points in ``pyproject.toml`` list the installed games.
"""
