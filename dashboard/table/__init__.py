"""A person at the table: their seat is a bot connection the web server holds for them.

:mod:`dashboard.table.seat` is the seat (a ``Play`` stream through the SDK's runner, whose bot
shows each decision to the page and waits for the person's choice); :mod:`dashboard.table.handlers`
turns page requests into responses without a web framework, so that the local server
(:mod:`dashboard.table.local`, ``sixnimmt play --human``) and the dashboard's app serve the same
pages. Nothing here imports Starlette, uvicorn, the store or the league: ``sixnimmt play --human``
needs Jinja2 and the base install alone.
"""
