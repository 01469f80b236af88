"""The platform's HTTP API (``sixnimmt api serve``, docs/api.md): participants submit bots, follow
their validation, choose their active versions and read their own bots' logs with an API key.

A layer of its own beside the dashboard, above the league (``workers``): it reads and writes the
store through :mod:`workers.store.repo`, checks uploads with :mod:`workers.bots.submit` and runs
their check games in the sandbox. Nothing below imports it.
"""
