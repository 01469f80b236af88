"""``sixnimmt settings`` shows no secret: tokens and keys as ``***``, every URL's password masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from testkit import sixnimmt

from bot_sdk.cli import masked

SECRETS = {
    "SIXNIMMT_DATABASE_URL": "postgresql+psycopg://arena:db-s3cret@127.0.0.1:5432/test?sslmode=disable",
    "SIXNIMMT_BROKER_URL": "redis://:broker-s3cret@127.0.0.1:6379/0",
    "SIXNIMMT_REMOTE_REFEREE": "https://ref:remote-s3cret@referee.example/admin?password=query-s3cret",
    "SIXNIMMT_ADMIN_TOKEN": "admin-s3cret",
    "SIXNIMMT_API_KEY": "key-s3cret",
    "SIXNIMMT_TOKEN": "token-s3cret",
}


def test_settings_mask_every_password_and_token(tmp_path: Path) -> None:
    text = sixnimmt(tmp_path, "settings", env=SECRETS)
    data = sixnimmt(tmp_path, "settings", "--json", env=SECRETS)
    assert text.returncode == data.returncode == 0, text.stderr + data.stderr
    for output in (text.stdout, data.stdout):
        assert "s3cret" not in output
    values = {row["variable"]: row["value"] for row in json.loads(data.stdout)}
    assert (
        values["SIXNIMMT_DATABASE_URL"]
        == "postgresql+psycopg://arena:***@127.0.0.1:5432/test?sslmode=disable"
    )
    assert values["SIXNIMMT_BROKER_URL"] == "redis://:***@127.0.0.1:6379/0"
    assert values["SIXNIMMT_REMOTE_REFEREE"] == "https://ref:***@referee.example/admin?password=***"
    assert values["SIXNIMMT_ADMIN_TOKEN"] == values["SIXNIMMT_API_KEY"] == values["SIXNIMMT_TOKEN"] == "***"
    # Counts named after tokens are not secrets.
    assert values["SIXNIMMT_MAX_HELLO_STREAMS_PER_TOKEN"] == 4
    # Control: the settings were in force (only their showing is masked).
    assert "postgresql+psycopg://arena:" in text.stdout and "redis://:***@127.0.0.1:6379/0" in text.stdout


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("postgresql://user:pw@host/db", "postgresql://user:***@host/db"),
        ("postgresql://user:p@ss@host/db", "postgresql://user:***@host/db"),  # an unquoted @ in it
        ("amqp://u:a@h1;amqp://v:b@h2/vh", "amqp://u:***@h1;amqp://v:***@h2/vh"),
        ("db+postgresql://u:p@h/d?user=x&pwd=y", "db+postgresql://u:***@h/d?user=x&pwd=***"),
        ("postgresql://user@host/db", "postgresql://user@host/db"),
        ("sqlite:////var/lib/sixnimmt.db", "sqlite:////var/lib/sixnimmt.db"),
    ],
)
def test_masked_urls(value: str, shown: str) -> None:
    assert masked("SIXNIMMT_DATABASE_URL", value) == shown
