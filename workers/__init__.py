"""The league: store, scheduling, Celery tasks, ratings, bot artifacts and sandbox (issue #4)."""
