"""Alembic environment: runs against the connection the caller passes, or the configured URL."""

from __future__ import annotations

from alembic import context

from workers.store.engine import make_engine
from workers.store.schema import metadata

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    with make_engine(config.get_main_option("sqlalchemy.url") or None).begin() as connection:
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
        context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    context.run_migrations()
