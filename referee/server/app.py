"""Build and run the referee server: the Referee service, gRPC health and reflection."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import signal
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee import accel
from referee.server import metrics
from referee.server.remote import RemoteKey
from referee.server.service import RefereeService
from referee.server.state import RefereeState
from referee.settings import Settings, tune_gc
from sixnimmt.v1 import referee_pb2, referee_pb2_grpc

log = logging.getLogger(__name__)

SERVICE_NAME = referee_pb2.DESCRIPTOR.services_by_name["Referee"].full_name


@dataclass(slots=True)
class RunningReferee:
    """A started referee: the gRPC server, its state and the address it listens on."""

    server: grpc.aio.Server
    state: RefereeState
    address: str
    health: health.aio.HealthServicer
    admin_token: str
    """The bearer token the admin calls need."""

    async def stop(self, grace: float = 1.0) -> None:
        """Stop the matches and the server."""
        await self.health.enter_graceful_shutdown()
        await self.state.shutdown()
        await self.server.stop(grace)


def play_reply_bytes(message: referee_pb2.RefereeMessage | bytes) -> bytes:
    """What ``Play`` sends: its Updates come as the bytes of their message already
    (:class:`referee.server.connection.Connection`), the Welcome and the Goodbye as messages."""
    return message if isinstance(message, bytes) else message.SerializeToString()


class _Handlers:
    """Takes the generated registration's method handlers instead of a server."""

    def __init__(self) -> None:
        self.handlers: dict[str, grpc.RpcMethodHandler] = {}

    def add_generic_rpc_handlers(self, handlers: object) -> None:
        pass

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        self.handlers = dict(handlers)


def add_referee_service(service: RefereeService, server: grpc.aio.Server) -> None:
    """Register the Referee service as the generated code does, but with ``Play`` sending the
    bytes of its Updates as they are (:func:`play_reply_bytes`): the same bytes on the wire."""
    taken = _Handlers()
    referee_pb2_grpc.add_RefereeServicer_to_server(service, taken)
    handlers = taken.handlers
    handlers["Play"] = handlers["Play"]._replace(response_serializer=play_reply_bytes)  # type: ignore[attr-defined]
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)


def tls_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """The server credentials of ``SIXNIMMT_REFEREE_TLS_CERT`` and ``_KEY`` (``None``: plaintext).

    A missing half or an unreadable file is a :class:`ValueError` naming it (the command says it
    in one line).
    """
    cert, key = settings.referee_tls_cert, settings.referee_tls_key
    if not cert and not key:
        return None
    if not cert or not key:
        raise ValueError("TLS needs both a certificate and its key (--tls-cert and --tls-key)")
    try:
        pair = (Path(key).read_bytes(), Path(cert).read_bytes())
    except OSError as exc:
        raise ValueError(f"cannot read {exc.filename}: {exc.strerror}") from None
    return grpc.ssl_server_credentials([pair])


async def start_referee(
    address: str,
    settings: Settings,
    admin_token: str = "",
    also_listen: tuple[str, ...] = (),
    remote_keys: tuple[list[RemoteKey], int] | None = None,
) -> RunningReferee:
    """Start a referee listening on ``address`` (``host:0`` picks a free port).

    The admin token is ``admin_token``, else ``SIXNIMMT_ADMIN_TOKEN``, else a random one. With a
    TLS certificate in the settings, ``address`` serves TLS; ``also_listen`` are further
    plaintext addresses (a Unix socket for the league's admin calls and its sandboxed bots,
    beside a public TLS port for remote bots: docs/remote.md). ``remote_keys`` (the keys and
    their generation, :func:`referee.server.remote.read_keys_file`) are held before the first
    stream is served, as if the league had pushed them.
    """
    credentials = tls_credentials(settings)
    token = admin_token or settings.admin_token or secrets.token_hex(24)
    server = grpc.aio.server(
        options=[
            # The protocol's message limit is gRPC's receive limit: a bigger message is refused
            # from its length prefix, before the referee holds it (the stream then fails with
            # RESOURCE_EXHAUSTED, a protocol fault of the bot's seats).
            ("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.max_send_message_length", 64 << 20),
            ("grpc.so_reuseport", 0),
        ]
    )
    state = RefereeState(
        keep_results=settings.keep_results, keep_results_bytes=settings.keep_results_mb << 20
    )
    service = RefereeService(state, settings, token)
    if remote_keys is not None:
        service.remote.set_keys(*remote_keys)
    add_referee_service(service, server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    port = (
        server.add_insecure_port(address)
        if credentials is None
        else server.add_secure_port(address, credentials)
    )
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    for extra in also_listen:
        if server.add_insecure_port(extra) == 0:
            raise OSError(f"cannot listen on {extra}")
    await server.start()
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    bound = address if address.startswith("unix:") else f"{address.rsplit(':', 1)[0]}:{port}"
    return RunningReferee(server, state, bound, health_servicer, token)


def metrics_host(listen: str, settings: Settings) -> str:
    """Where the referee's /metrics binds: ``SIXNIMMT_REFEREE_METRICS_HOST``, else the gRPC host.

    A referee on a Unix socket or on loopback keeps its metrics on loopback too; one that listens
    on every interface (``0.0.0.0:50051``, ``[::]:50051``) serves them there as well.
    """
    if settings.referee_metrics_host:
        return settings.referee_metrics_host
    if listen.startswith("unix:") or ":" not in listen:
        return "127.0.0.1"
    host = listen.rsplit(":", 1)[0].removeprefix("ipv4:").removeprefix("ipv6:")
    return host.removeprefix("[").removesuffix("]") or "127.0.0.1"


async def serve(
    address: str,
    settings: Settings,
    ready_file: str | None = None,
    admin_token_file: str | None = None,
    also_listen: tuple[str, ...] = (),
    remote_keys: tuple[list[RemoteKey], int] | None = None,
) -> None:
    """Run a referee until SIGINT or SIGTERM, with its metrics on ``settings.referee_metrics_port``.

    The admin token is never logged: without ``SIXNIMMT_ADMIN_TOKEN`` it is a random one, which
    ``admin_token_file`` (created readable by this user only) receives.
    """
    running = await start_referee(address, settings, also_listen=also_listen, remote_keys=remote_keys)
    tune_gc(settings)  # the referee is up: what it built so far lives as long as it does
    log.info(
        "referee listening on %s%s%s; its hot path %s",
        running.address,
        " (TLS)" if settings.referee_tls_cert else "",
        "".join(f", {extra}" for extra in also_listen),
        "compiled (docs/architecture.md)" if accel.active() else "in pure Python",
    )
    if remote_keys is not None:
        log.info("holding %d API keys (generation %d) from the key file", len(remote_keys[0]), remote_keys[1])
    for extra in also_listen:
        if extra.startswith("unix:"):
            # Sandboxed bots run as other users and connect through it (workers.sandbox).
            os.chmod(extra.removeprefix("unix:").removeprefix("//"), 0o777)
    stop_metrics = metrics.start_exporter(
        settings.referee_metrics_port, address=metrics_host(address, settings)
    )
    if admin_token_file:
        fd = os.open(admin_token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(running.admin_token)
    if not settings.admin_token:
        log.warning(
            "SIXNIMMT_ADMIN_TOKEN is not set: admin calls need this referee's random token%s",
            f" (written to {admin_token_file})"
            if admin_token_file
            else "; set it, or pass --admin-token-file",
        )
    if ready_file:
        with open(ready_file, "w") as handle:
            handle.write(running.address)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await running.stop()
    if stop_metrics is not None:
        stop_metrics()
