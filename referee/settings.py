"""Every ``SIXNIMMT_*`` setting, its default and meaning, read from the environment in one place.

Each part of the project (referee, SDK runner, league, dashboard) calls :func:`load` and reads
what it needs; ``sixnimmt settings`` prints them all with their current values.
"""

from __future__ import annotations

import dataclasses
import gc
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class SettingsError(ValueError):
    """A ``SIXNIMMT_*`` variable holds a value of the wrong type or out of range."""


def _setting(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True, slots=True)
class Settings:
    """The settings; field ``x`` is read from ``SIXNIMMT_X``."""

    referee: str = _setting("", "address of the referee a bot connects to (host:port or unix:/path)")
    token: str = _setting("", "the entrant token a bot presents in its Hello")
    api_key: str = _setting("", "a bot account's API key, which `sixnimmt bot connect` presents")
    remote_referee: str = _setting(
        "",
        "admin address (unix:/path) of the referee remote bots connect to; the league plays blocks with"
        " remote entrants there and hands it the API keys' hashes",
    )
    remote_wait_s: int = _setting(
        600, "seconds a block waits for its remote bots to be online (and have room) before it is played"
    )
    referee_tls_cert: str = _setting("", "PEM certificate (chain) for `referee serve`'s TLS; empty: none")
    referee_tls_key: str = _setting("", "PEM private key of that certificate")
    referee_listen: str = _setting("127.0.0.1:50051", "address `sixnimmt referee serve` listens on")
    compiled: str = _setting(
        "auto",
        "the referee's hot path compiled with mypyc (make compiled): auto (used while it is current),"
        " off, or require (stop if it cannot be used); docs/architecture.md",
    )
    compiled_dir: str = _setting(
        "", "the compiled hot path's directory; empty: sixnimmt-compiled in the interpreter's prefix"
    )
    decision_ms: int = _setting(2000, "time a bot has for one decision before its time bank is used")
    bank_ms: int = _setting(10_000, "time bank per seat and match, used up by late answers")
    connect_ms: int = _setting(15_000, "how long a match waits for a bot to connect before defaulting it")
    human_decision_ms: int = _setting(
        60_000,
        "time a person has for one decision in `sixnimmt play --human` (and the dashboard's Play page)"
        " before the time bank is used; the bots at that table get the same time control",
    )
    human_bank_ms: int = _setting(120_000, "a person's time bank per game, used up by late answers")
    human_grace_s: int = _setting(
        20,
        "seconds a person's seat waits for its page to come back (a reload, a lost connection) before"
        " it ends its stream: a disconnect fault, like any bot's",
    )
    admin_token: str = _setting(
        "", "bearer token for the referee's admin calls; empty: a random one per referee process"
    )
    dashboard_operator_token: str = _setting(
        "",
        "the dashboard operator's token (at least 16 characters): sign in with it, or send it as"
        " `Authorization: Bearer`, to read seats' fault reasons and stderr; empty: nobody reads them there",
    )
    play: str = _setting(
        "off",
        "on: the dashboard serves its Play page, where a visitor plays against stored bot versions (the"
        " dashboard then runs a referee and the bots' sandboxed processes, and writes the games to the"
        " store); off: no Play page and none of its routes",
    )
    play_max_tables: int = _setting(
        4, "tables the dashboard's Play page runs at once (each a referee's match and its bots' processes)"
    )
    max_faults: int = _setting(25, "a seat with more faults than this forfeits the rest of the match")
    max_message_bytes: int = _setting(
        1 << 20, "largest message the referee receives (gRPC's receive limit: a bigger one is refused unread)"
    )
    hello_ms: int = _setting(10_000, "time a new bot stream has to send its Hello before it is closed")
    max_hello_bytes: int = _setting(4096, "largest Hello the referee accepts")
    max_hello_streams: int = _setting(
        64,
        "bot streams without a token in their metadata that may wait for their Hello at once, per"
        " transport (the Unix socket, TCP); a new one closes the one that waited longest",
    )
    max_hello_streams_per_peer: int = _setting(
        8,
        "bot streams without a token in their metadata that one TCP address (IPv6: its /64) may keep"
        " waiting for their Hello at once; a new one closes that address's oldest",
    )
    peer_streams_per_s: int = _setting(
        10,
        "new bot streams without a token in their metadata one TCP address may open a second (twice"
        " that at once); more get RESOURCE_EXHAUSTED (0: no limit)",
    )
    max_hello_streams_per_token: int = _setting(
        4,
        "bot streams naming one token in their metadata that may wait for their Hello at once; more"
        " get RESOURCE_EXHAUSTED and a protocol fault of that token's seats",
    )
    token_streams_per_s: int = _setting(
        5,
        "new bot streams naming one token in their metadata a second (twice that at once); more get"
        " RESOURCE_EXHAUSTED and a protocol fault of that token's seats (0: no limit)",
    )
    max_streams: int = _setting(1024, "bot streams the referee serves at once; more get RESOURCE_EXHAUSTED")
    keep_results: int = _setting(10_000, "finished matches the referee keeps for GetResult and WatchMatch")
    keep_results_mb: int = _setting(
        256, "megabytes of finished results (kept serialized) the referee keeps; the oldest go first"
    )
    gc_threshold: int = _setting(
        50_000,
        "the referee's and a bot process's first garbage-collector threshold, with their start-up"
        " objects frozen out of collections (gc.freeze); 0: Python's defaults",
    )
    bot_events: str = _setting(
        "auto",
        "public events a bot process asks for: auto (when its class overrides on_events), all, none",
    )
    referee_metrics_port: int = _setting(
        9464, "port of `sixnimmt referee serve`'s Prometheus /metrics endpoint (0: no endpoint)"
    )
    referee_metrics_host: str = _setting(
        "",
        "host of the referee's /metrics; empty: the referee's listen host (127.0.0.1 for a Unix socket)",
    )
    database_url: str = _setting(
        "",
        "league store: sqlite:///PATH or postgresql://USER@HOST/DB (production); empty: sixnimmt.db in"
        " the per-user data directory ($XDG_DATA_HOME/sixnimmt, else the platform's, e.g."
        " ~/.local/share/sixnimmt), created only by `league create`, `bot submit`, `bot test` and"
        " `league migrate`",
    )
    db_pool_size: int = _setting(
        5,
        "PostgreSQL connections each process of the league (a worker's pool process, its main process,"
        " the dashboard) keeps open to the store (SQLAlchemy's pool); see docs/capacity.md",
    )
    db_max_overflow: int = _setting(
        10,
        "PostgreSQL connections a process may open beyond SIXNIMMT_DB_POOL_SIZE at once, closed when"
        " given back; a process never holds more than the two together",
    )
    broker_url: str = _setting(
        "",
        "Celery broker, e.g. redis://127.0.0.1:6379/0; empty: `league run` plays on a local pool, and"
        " `sixnimmt worker` does not start",
    )
    visibility_timeout_s: int = _setting(
        3600, "seconds before Redis hands a block whose worker died (unacknowledged) to another worker"
    )
    lease_s: int = _setting(
        60, "seconds a claimed block's lease lasts; past it, any worker may claim the block again"
    )
    lease_renew_s: int = _setting(15, "seconds between lease renewals of the worker playing a block")
    reconcile_s: int = _setting(
        15,
        "seconds between a worker's reconciliation passes: re-queue started leagues' blocks that have no"
        " message or whose lease expired, add the next round, heartbeat",
    )
    shutdown_grace_s: int = _setting(
        540,
        "seconds a worker told to stop (SIGTERM) lets its blocks finish before it releases them"
        " (keep it under Kubernetes' terminationGracePeriodSeconds)",
    )
    workers: int = _setting(0, "local pool size for `league run` without a broker (0: one per core)")
    worker_metrics_port: int = _setting(
        9465, "port of `sixnimmt worker`'s Prometheus /metrics endpoint, for all its pool processes (0: none)"
    )
    bot_max_bytes: int = _setting(5 << 20, "largest bot submission (a file, or a directory's files together)")
    submit_max_files: int = _setting(256, "most files a bot submission may hold (checked again at unpacking)")
    submit_max_path: int = _setting(160, "longest path inside a bot submission, in characters")
    api_rate_per_s: int = _setting(
        10, "requests per second an API key may make on average (`sixnimmt api serve`; a token bucket)"
    )
    api_burst: int = _setting(30, "requests an API key may make at once before its rate applies")
    api_auth_failures_burst: int = _setting(
        10,
        "requests with a wrong or revoked key one client address may make (refilled one a second)"
        " before the API answers it 429 instead of 401",
    )
    api_submissions_per_day: int = _setting(5, "uploads an account may make through the API per UTC day")
    api_active_per_account: int = _setting(3, "bot versions an account may have active at once")
    api_max_upload_bytes: int = _setting(
        0,
        "largest upload body the API reads (413 past it, before it is read); 0: what"
        " SIXNIMMT_BOT_MAX_BYTES and SIXNIMMT_SUBMIT_MAX_FILES allow, with the archive's headers",
    )
    api_validation_workers: int = _setting(
        1, "validations the API runs at once in its own background threads (the local defaults)"
    )
    api_session_secret: str = _setting(
        "",
        "the secret that signs participants' web sessions (/account), the same for every API replica;"
        " empty: a random one per API process (its sessions end with it)",
    )
    redis_url: str = _setting(
        "",
        "Redis the API keeps its rate limits' counters in, shared by its replicas (e.g."
        " redis://127.0.0.1:6379/1); empty: the broker's if SIXNIMMT_BROKER_URL is a Redis, else per process",
    )
    sandbox_cpu_s: int = _setting(600, "CPU seconds a bot process may use in one block")
    sandbox_memory_mb: int = _setting(
        1024, "address space a bot process may use, and its memory cgroup's limit where it has one"
    )
    sandbox_file_mb: int = _setting(16, "largest file a bot process may write")
    sandbox_processes: int = _setting(64, "processes/threads a bot's user may run (root: per sandbox user)")
    warm_bots: int = _setting(
        32,
        "bot processes a league worker process keeps live between blocks (0: fresh processes per block);"
        " each entrant of a table of N plays on N of them (its lanes)",
    )
    warm_memory_mb: int = _setting(
        2048, "resident memory of a worker process's warm bots together; beyond it the least recently used go"
    )
    blocks_at_once: int = _setting(
        16,
        "blocks of one league a local pool process or a Celery worker plays as one set of matches"
        " on its warm bots, while they answer fast enough (1: one block at a time); each lane of"
        " an entrant plays one game of each",
    )
    standings_every_s: int = _setting(
        10,
        "seconds a process that stores blocks waits between recomputations of a league's stored table"
        " (0: after every block that leaves it behind); a round's last block always recomputes it",
    )
    warm_route_s: int = _setting(
        0,
        "seconds a Celery worker's list of warm bots stays valid for routing unless renewed"
        " (0: twice SIXNIMMT_RECONCILE_S and a second)",
    )


def load(environ: Mapping[str, str] | None = None) -> Settings:
    """Read the settings from the environment (or ``environ``), with clear errors."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for f in dataclasses.fields(Settings):
        name = f"SIXNIMMT_{f.name.upper()}"
        raw = env.get(name)
        if raw is None or raw == "":
            continue
        if isinstance(f.default, int):
            try:
                value = int(raw)
            except ValueError:
                raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
            if value < 0:
                raise SettingsError(f"{name} must not be negative, got {value}")
            values[f.name] = value
        else:
            values[f.name] = raw
    settings = Settings(**values)
    if not 1 <= settings.lease_renew_s < settings.lease_s:
        raise SettingsError(
            f"SIXNIMMT_LEASE_RENEW_S ({settings.lease_renew_s}) must be at least 1 and less than"
            f" SIXNIMMT_LEASE_S ({settings.lease_s})"
        )
    if settings.reconcile_s < 1:
        raise SettingsError("SIXNIMMT_RECONCILE_S must be at least 1")
    if settings.blocks_at_once < 1:
        raise SettingsError("SIXNIMMT_BLOCKS_AT_ONCE must be at least 1")
    if settings.human_decision_ms < 1 or settings.human_grace_s < 1:
        raise SettingsError("SIXNIMMT_HUMAN_DECISION_MS and SIXNIMMT_HUMAN_GRACE_S must be at least 1")
    for name in (
        "max_hello_streams_per_peer",
        "max_hello_streams_per_token",
        "db_pool_size",
        "api_rate_per_s",
        "api_burst",
        "api_auth_failures_burst",
        "api_active_per_account",
        "api_validation_workers",
    ):
        if getattr(settings, name) < 1:
            raise SettingsError(f"SIXNIMMT_{name.upper()} must be at least 1")
    if settings.api_session_secret and len(settings.api_session_secret) < 16:
        raise SettingsError(
            "SIXNIMMT_API_SESSION_SECRET must be at least 16 characters (e.g. openssl rand -hex 24)"
        )
    if settings.play not in ("on", "off"):
        raise SettingsError(f"SIXNIMMT_PLAY must be on or off, got {settings.play!r}")
    if settings.compiled not in ("auto", "off", "require"):
        raise SettingsError(f"SIXNIMMT_COMPILED must be auto, off or require, got {settings.compiled!r}")
    if settings.bot_events not in ("auto", "all", "none"):
        raise SettingsError(f"SIXNIMMT_BOT_EVENTS must be auto, all or none, got {settings.bot_events!r}")
    return settings


def tune_gc(settings: Settings) -> None:
    """Tune the garbage collector of a long-running process once its start-up is done.

    What was imported and built so far lives as long as the process: ``gc.freeze()`` moves it out
    of every later collection, and a higher first threshold makes the young collections, which a
    referee or bot triggers by the thousand per second, rarer (measured in docs/bench.md). With
    ``SIXNIMMT_GC_THRESHOLD=0`` Python's defaults stay.
    """
    if settings.gc_threshold <= 0:
        return
    gc.collect()
    gc.freeze()
    _, second, third = gc.get_threshold()
    gc.set_threshold(settings.gc_threshold, second, third)


def default_database_url(environ: Mapping[str, str] | None = None) -> str:
    """The store when ``SIXNIMMT_DATABASE_URL`` is unset: ``sixnimmt.db`` in the per-user data directory.

    ``$XDG_DATA_HOME/sixnimmt`` when that variable holds an absolute path (on every platform), else
    platformdirs' user data directory (``~/.local/share/sixnimmt`` on Linux). Nothing is created here.
    """
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        directory = os.path.join(xdg, "sixnimmt")
    else:
        import platformdirs  # only here: a bot process never needs it

        directory = platformdirs.user_data_dir("sixnimmt", appauthor=False)
    return f"sqlite:///{os.path.join(directory, 'sixnimmt.db')}"


def describe() -> list[dict[str, Any]]:
    """Each setting's variable name, default and meaning (for docs and the CLI)."""
    return [
        {
            "variable": f"SIXNIMMT_{f.name.upper()}",
            "default": default_database_url() if f.name == "database_url" else f.default,
            "doc": f.metadata["doc"],
        }
        for f in dataclasses.fields(Settings)
    ]
