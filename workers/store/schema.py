"""The league store's tables (SQLAlchemy Core). Alembic migrations create them; see migrations/."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)

from referee.faults import FaultKind

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def _created() -> Column[object]:
    return Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now())


store_identity = Table(
    "store_identity",
    metadata,
    Column("id", String(32), primary_key=True),
    _created(),
)
"""One row: the store's id, written at migration; every message to the workers names it."""

bots = Table(
    "bots",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(100), nullable=False, unique=True),
    _created(),
)

artifacts = Table(
    "artifacts",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("content", LargeBinary, nullable=False),
    Column("size", Integer, nullable=False),
    _created(),
)
"""Bot code, addressed by the SHA-256 of its content: stored once, however many versions use it."""

bot_versions = Table(
    "bot_versions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("bot_id", ForeignKey("bots.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("sha256", ForeignKey("artifacts.sha256"), nullable=False),
    # ``file.py`` or ``file.py:Class`` inside the artifact.
    Column("entry_point", String(300), nullable=False),
    Column("variant", String(40), nullable=False),
    _created(),
    # Retired (``sixnimmt bot retire``): enters no new league; stays in the leagues it played.
    Column("retired_at", DateTime(timezone=True)),
    UniqueConstraint("bot_id", "version"),
    UniqueConstraint("bot_id", "sha256"),
)

leagues = Table(
    "leagues",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(100), nullable=False, unique=True),
    Column("variant", String(40), nullable=False),
    Column("config", JSON, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("format", String(20), nullable=False),
    Column("table_size", Integer, nullable=False),
    Column("deals", Integer, nullable=False),
    # Secret key of the bots' seat seeds: bots replay exactly, and cannot search for the deal.
    Column("seat_key", LargeBinary, nullable=False),
    # Secret key of the deal seeds (NULL: a league made before it; its deals follow from its seed).
    # Published with the seed once the league is finished (docs/security.md, secret deals).
    Column("deal_key", LargeBinary),
    # JSON for leagues that add deals as they go (adaptive leagues, SPRT tests); NULL: a fixed plan.
    Column("stopping", JSON),
    # Every block starts its bots afresh instead of on a worker's warm processes (workers.play.warm).
    Column("fresh_processes", Boolean, nullable=False, server_default="0"),
    # Handed to the workers (``league start``): reconciliation keeps it going until it is finished.
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    _created(),
)

league_entrants = Table(
    "league_entrants",
    metadata,
    Column("league_id", ForeignKey("leagues.id"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("bot_version_id", ForeignKey("bot_versions.id"), nullable=False),
    # A bot's leagues (the dashboard's bot page).
    Index(None, "bot_version_id"),
)

blocks = Table(
    "blocks",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("league_id", ForeignKey("leagues.id"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    # Entrant positions in seat order of the first rotation.
    Column("entrants", JSON, nullable=False),
    # pending, running, done or failed.
    Column("status", String(10), nullable=False, server_default="pending"),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("claimed_by", String(200)),
    Column("claimed_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    Column("error", Text),
    # The claim's lease: the claiming worker renews it while it plays; once it is past, any
    # worker may claim the block again (``attempts`` is the claim's fencing number).
    Column("lease_until", DateTime(timezone=True)),
    # When a message for the block was last sent to the broker (``league start``, reconciliation).
    Column("queued_at", DateTime(timezone=True)),
    # What a claimed block waits for before its matches start (a remote bot to connect), for
    # ``league status``; NULL when it waits for nothing.
    Column("waiting", Text),
    UniqueConstraint("league_id", "number"),
    # A league's blocks by status, and its last pending ones in number order (migration 0009).
    Index(None, "league_id", "status", "number"),
    # The dashboard's live view: running blocks, and the latest finished ones.
    Index(None, "status", "finished_at"),
)

matches = Table(
    "matches",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("block_id", ForeignKey("blocks.id"), nullable=False),
    Column("rotation", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("digest", String(71), nullable=False),
    Column("termination", String(30), nullable=False),
    _created(),
    UniqueConstraint("block_id", "rotation"),
)
"""One row per played match; the unique (block, rotation) makes a second write of a block fail."""

seat_results = Table(
    "seat_results",
    metadata,
    Column("match_id", ForeignKey("matches.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("bot_version_id", ForeignKey("bot_versions.id"), nullable=False),
    Column("score", Integer, nullable=False),
    Column("rank", Integer, nullable=False),
    Column("timeouts", Integer, nullable=False, server_default="0"),
    Column("crashes", Integer, nullable=False, server_default="0"),
    Column("disconnects", Integer, nullable=False, server_default="0"),
    Column("illegal", Integer, nullable=False, server_default="0"),
    Column("protocol", Integer, nullable=False, server_default="0"),
    Column("defaulted", Integer, nullable=False, server_default="0"),
    Column("forfeited", Boolean, nullable=False, server_default="0"),
    Column("think_ms", Integer, nullable=False, server_default="0"),
    # A bot's own exception (the SDK reports it): a fault kind of its own, not "illegal".
    Column("exceptions", Integer, nullable=False, server_default="0"),
    # JSON: each fault's reason, the bot process's exit (status, signal, the limit that killed
    # it) and the tail of its stderr; NULL for a seat without faults.
    Column("fault_detail", Text),
    # A bot version's matches, newest first, straight from the index (the dashboard's match lists).
    Index(None, "bot_version_id", "match_id"),
)

transcripts = Table(
    "transcripts",
    metadata,
    Column("match_id", ForeignKey("matches.id"), primary_key=True),
    Column("body", Text, nullable=False),
)

ratings = Table(
    "ratings",
    metadata,
    Column("league_id", ForeignKey("leagues.id"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    # The conservative rating: mu - 3 sigma.
    Column("ordinal", Float, nullable=False),
    Column("games", Integer, nullable=False),
    Column("mean_score", Float, nullable=False),
    # NULL: too few blocks for an interval.
    Column("ci_low", Float),
    Column("ci_high", Float),
    Column("faults", Integer, nullable=False),
    # The batch fit that orders the table (workers.stats.ranking): its method, the entrant's fitted
    # score (the sort key) and JSON detail (intervals, rank interval, gap to the next entrant).
    Column("method", String(20)),
    Column("score", Float),
    Column("detail", JSON),
)

workers = Table(
    "workers",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("seen_at", DateTime(timezone=True), nullable=False),
)
"""Every worker that has run, and when its reconcile loop last wrote here (``league run`` warns
when none has been seen for a while)."""

bot_accounts = Table(
    "bot_accounts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(100), nullable=False, unique=True),
    # The bot the account plays as in leagues: ``remote/NAME`` (workers.bots.accounts).
    Column("bot_id", ForeignKey("bots.id"), nullable=False, unique=True),
    _created(),
    # The name the platform's pages show for a participant (NULL: its name); migration 0011.
    Column("display_name", String(100)),
)
"""A participant's account: its API keys, its bots (``bot_owners``) and its remote bot, the one it
plays as from its author's machine (``sixnimmt bot connect``)."""

bot_owners = Table(
    "bot_owners",
    metadata,
    Column("bot_id", ForeignKey("bots.id"), primary_key=True),
    Column("account_id", ForeignKey("bot_accounts.id"), nullable=False, index=True),
    _created(),
)
"""Which participant account owns a bot (and so every version of it). A bot without a row here is
the platform's: the operator's submissions and the reference bots (migration 0011)."""

active_versions = Table(
    "active_versions",
    metadata,
    Column("bot_version_id", ForeignKey("bot_versions.id"), primary_key=True),
    Column("account_id", ForeignKey("bot_accounts.id"), nullable=False, index=True),
    _created(),
)
"""A participant's versions that are active (at most ``SIXNIMMT_API_ACTIVE_PER_ACCOUNT`` per account):
the ones the account enters into competitions."""

submissions = Table(
    "submissions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("account_id", ForeignKey("bot_accounts.id"), nullable=False),
    # The key it came with (its public id), for the account's own audit.
    Column("key_id", String(16), nullable=False),
    Column("bot", String(100), nullable=False),
    Column("variant", String(40), nullable=False),
    # pending, valid, invalid (its check failed) or refused (the upload broke a limit: nothing kept).
    Column("status", String(10), nullable=False),
    Column("sha256", String(64)),
    Column("entry_point", String(300)),
    # Why it is invalid or refused, on one line.
    Column("reason", Text),
    # The validation game's report (workers.bots.submit: checks, faults with reasons, the process's
    # exit and the end of its stderr) and its transcript; private to the account.
    Column("report", JSON),
    Column("transcript", Text),
    # The version stored once valid.
    Column("bot_version_id", ForeignKey("bot_versions.id")),
    _created(),
    Column("finished_at", DateTime(timezone=True)),
    # The uploaded archive, kept while the submission is pending so that a worker can validate it;
    # NULL once it is decided (migration 0012).
    Column("archive", LargeBinary),
    # The competition it was made for (its quota and freeze apply); NULL: none (migration 0012).
    Column("competition_id", ForeignKey("competitions.id")),
    # An account's submissions, newest first, and its day's quota.
    Index(None, "account_id", "created_at"),
)
"""Every upload through the API, with its validation (a submission that passed names its version)."""

competitions = Table(
    "competitions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(100), nullable=False, unique=True),
    Column("variant", String(40), nullable=False),
    Column("config", JSON, nullable=False),
    Column("table_size", Integer, nullable=False),
    Column("submissions_per_day", Integer, nullable=False),
    Column("active_per_account", Integer, nullable=False),
    # When the season ends (submissions freeze, the final starts); NULL: at ``competition close``.
    Column("ends_at", DateTime(timezone=True)),
    # The final: an adaptive league among the season's top ``final_top`` that stops once the order
    # is settled at ``final_until_confident`` or after ``final_max_deals`` deals.
    Column("final_top", Integer, nullable=False),
    Column("final_until_confident", Float, nullable=False),
    Column("final_max_deals", Integer, nullable=False),
    # The season ladder's settings (workers.planning.ladder.LadderRule as JSON); NULL: its defaults.
    Column("season_rule", JSON),
    # season, final or finished.
    Column("state", String(10), nullable=False, server_default="season"),
    Column("season_league_id", ForeignKey("leagues.id")),
    Column("final_league_id", ForeignKey("leagues.id")),
    _created(),
    Column("closed_at", DateTime(timezone=True)),
    # When its season's entrants were last synced: valid submissions for it that finished since
    # are made active (within its limits) at the next sync.
    Column("synced_at", DateTime(timezone=True)),
)
"""A competition that participant accounts enter: a season ladder of their active versions, then a
final among its top entrants (workers.competition; migration 0012)."""

competition_entries = Table(
    "competition_entries",
    metadata,
    Column("competition_id", ForeignKey("competitions.id"), primary_key=True),
    Column("account_id", ForeignKey("bot_accounts.id"), primary_key=True, index=True),
    _created(),
)
"""The accounts that entered a competition (their active versions of its variant play its season)."""

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Integer, primary_key=True),
    # The key's public part (``snk_<key_id>_…``): names it in listings and ``bot key revoke``.
    Column("key_id", String(16), nullable=False, unique=True),
    Column("account_id", ForeignKey("bot_accounts.id"), nullable=False, index=True),
    # SHA-256 of the whole key, hex: the key itself is shown once at creation and never stored.
    Column("sha256", String(64), nullable=False, unique=True),
    Column("max_connections", Integer, nullable=False),
    Column("max_matches", Integer, nullable=False),
    _created(),
    Column("revoked_at", DateTime(timezone=True)),
)
"""A bot account's API keys; a revoked key stays listed, and the referee refuses it."""

human_matches = Table(
    "human_matches",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("variant", String(40), nullable=False),
    Column("config", JSON, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("digest", String(71), nullable=False),
    Column("termination", String(30), nullable=False),
    # Whether the person was the dashboard's signed-in operator (else an anonymous guest).
    Column("operator", Boolean, nullable=False, server_default="0"),
    _created(),
)
"""A game a person played on the dashboard's Play page against stored bot versions.

Kept apart from ``matches`` on purpose: no league, block, standings, rating or league match list
reads these tables, so a game against a person can never count in a bot league (migration 0010)."""

human_seats = Table(
    "human_seats",
    metadata,
    Column("match_id", ForeignKey("human_matches.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    # The bot version in the seat; NULL: the person's seat.
    Column("bot_version_id", ForeignKey("bot_versions.id")),
    # The person's seat name, as in the transcript: ``human:NAME``; NULL: a bot's seat.
    Column("person", String(40)),
    Column("score", Integer, nullable=False),
    Column("rank", Integer, nullable=False),
    Column("timeouts", Integer, nullable=False, server_default="0"),
    Column("crashes", Integer, nullable=False, server_default="0"),
    Column("disconnects", Integer, nullable=False, server_default="0"),
    Column("illegal", Integer, nullable=False, server_default="0"),
    Column("protocol", Integer, nullable=False, server_default="0"),
    Column("exceptions", Integer, nullable=False, server_default="0"),
    Column("defaulted", Integer, nullable=False, server_default="0"),
    Column("forfeited", Boolean, nullable=False, server_default="0"),
    Column("think_ms", Integer, nullable=False, server_default="0"),
    # As seat_results.fault_detail: the faults' reasons, the bot process's exit, its stderr's end.
    Column("fault_detail", Text),
    # A bot version's games against people, newest first (the bot page).
    Index(None, "bot_version_id", "match_id"),
)
"""Each seat of a game against a person: a bot version's, or the person's."""

human_transcripts = Table(
    "human_transcripts",
    metadata,
    Column("match_id", ForeignKey("human_matches.id"), primary_key=True),
    Column("body", Text, nullable=False),
)

FAULT_COLUMNS = {
    FaultKind.TIMEOUT: "timeouts",
    FaultKind.CRASH: "crashes",
    FaultKind.DISCONNECT: "disconnects",
    FaultKind.ILLEGAL: "illegal",
    FaultKind.PROTOCOL: "protocol",
    FaultKind.EXCEPTION: "exceptions",
}
"""Fault kind → its seat_results column (a kind is its name as a string: ``"timeout"``)."""
