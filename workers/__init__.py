"""The league: its planning and statistics, the store, bot versions, the sandbox, playing a block,
leagues on a local pool, the Celery queue and the command line (docs/architecture.md, "The
league package")."""
