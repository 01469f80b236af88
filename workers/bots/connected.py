"""The league's side of remote bots: hand the referee the keys, wait for the bots, seat them.

A block with remote entrants (``remote:NAME`` in ``--bots``) is played on the referee remote
bots connect to (``SIXNIMMT_REMOTE_REFEREE``, its admin address: a Unix socket, through which
the block's sandboxed bots connect too) rather than on a referee of the block's own. Before the
matches are created, the block hands the referee every key that is not revoked
(``SetRemoteKeys``: the referee keeps no store, and one restarted gets them back at the next
block) and waits, with ``league status`` saying so, until each remote bot is connected with room
for the block's matches under its key's limit. After ``SIXNIMMT_REMOTE_WAIT_S`` the block is
played anyway: a bot still offline gets the connect window of any bot and is then defaulted
with a ``disconnect`` fault on every seat (the bot's fault, so the league finishes); a bot that
is online but stays at its limit of matches fails the block, which is retried like any failed
block (it is playing, just busy).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import grpc
from sqlalchemy import Engine

from arena.matches import MatchPlan, RefereeClient, RefereeError
from referee.settings import load as load_settings
from sixnimmt.v1 import referee_pb2
from workers.bots import accounts
from workers.store import repo

POLL_S = 1.0


class RemoteBlockError(RefereeError):
    """A block's remote entrants cannot be seated (no remote referee, or a bot stays busy)."""


def remote_entrants(
    league: repo.League, positions: Sequence[int], name: Callable[[int], str]
) -> dict[str, str]:
    """The block's remote entrants: entrant name → bot account."""
    found = {}
    for position in positions:
        account = accounts.remote_account(league.entrants[position])
        if account is not None:
            found[name(position)] = account
    return found


def client() -> RefereeClient:
    """The admin client of the remote referee (``SIXNIMMT_REMOTE_REFEREE``, ``SIXNIMMT_ADMIN_TOKEN``)."""
    settings = load_settings()
    if not settings.remote_referee:
        raise RemoteBlockError(
            "the league has remote entrants: set SIXNIMMT_REMOTE_REFEREE to the admin address of the"
            " referee they connect to (docs/remote.md)"
        )
    return RefereeClient(settings.remote_referee, admin_token=settings.admin_token)


@contextmanager
def remote_referee() -> Iterator[RefereeClient]:
    """:func:`client`, closed after the block."""
    referee = client()
    try:
        yield referee
    finally:
        referee.close()


def push_keys(engine: Engine, referee: RefereeClient) -> int:
    """Hand the referee every key that is not revoked (the whole set); returns connections it closed.

    The set carries the store's generation, so that a push that read the store earlier but
    arrives later (another process's) is ignored rather than dropping newer keys.
    """
    keys, generation = accounts.referee_key_set(engine)
    return int(send_keys(referee, keys, generation).closed)


def send_keys(
    referee: RefereeClient, keys: Sequence[Mapping[str, Any]], generation: int
) -> referee_pb2.SetRemoteKeysResponse:
    """``SetRemoteKeys`` with these keys (``referee_key_set``'s) at ``generation``."""
    request = referee_pb2.SetRemoteKeysRequest(generation=generation)
    for key in keys:
        request.keys.add(**key)
    try:
        reply: referee_pb2.SetRemoteKeysResponse = referee.stub.SetRemoteKeys(
            request, timeout=referee.timeout, metadata=referee.metadata
        )
    except grpc.RpcError as exc:
        raise RefereeError(f"SetRemoteKeys at {referee.address} failed: {_describe(exc)}") from exc
    return reply


def push_keys_if_configured(engine: Engine) -> str | None:
    """After a key is made or revoked: tell the remote referee, if one is configured (one line back)."""
    settings = load_settings()
    if not settings.remote_referee:
        return None
    referee = RefereeClient(settings.remote_referee, timeout=5.0, admin_token=settings.admin_token)
    try:
        closed = push_keys(engine, referee)
    except RefereeError as exc:
        return f"the referee was not told ({exc}); it gets the keys with the next remote block"
    finally:
        referee.close()
    return f"the referee at {settings.remote_referee} has the keys" + (
        f"; {closed} connections of revoked keys closed" if closed else ""
    )


def status(referee: RefereeClient, names: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per account: connections, matches and room, as the referee sees them."""
    try:
        reply = referee.stub.GetRemoteStatus(
            referee_pb2.GetRemoteStatusRequest(accounts=list(names)),
            timeout=referee.timeout,
            metadata=referee.metadata,
        )
    except grpc.RpcError as exc:
        raise RefereeError(f"GetRemoteStatus at {referee.address} failed: {_describe(exc)}") from exc
    return {
        a.account: {"connections": a.connections, "matches": a.matches, "room": a.room}
        for a in reply.accounts
    }


def await_remote(
    engine: Engine,
    block_id: int,
    referee: RefereeClient,
    remote: Mapping[str, str],
    plans: Sequence[MatchPlan],
    *,
    timeout_s: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Wait until every remote entrant's bot is online with room; the arguments for CreateMatches.

    Returns ``{"remote": entrant → account, "remote_wait": …}``: ``remote_wait`` is set when the
    wait ran out with a bot still offline (its seats then wait the connect window, then default).
    Raises :class:`RemoteBlockError` when it ran out with a bot online but at its limit.
    """
    timeout_s = load_settings().remote_wait_s if timeout_s is None else timeout_s
    deadline = time.monotonic() + timeout_s
    accounts_needed: dict[str, int] = {}
    for entrant, account in remote.items():
        needs = sum(entrant in plan.entrants for plan in plans)
        accounts_needed[account] = accounts_needed.get(account, 0) + needs
    try:
        while True:
            push_keys(engine, referee)
            seen = status(referee, sorted(accounts_needed))
            offline = [a for a in accounts_needed if not seen.get(a, {}).get("connections")]
            busy = [a for a in accounts_needed if a not in offline and seen[a]["room"] < accounts_needed[a]]
            if not offline and not busy:
                return {"remote": dict(remote), "remote_wait": False}
            left = deadline - time.monotonic()
            if left <= 0:
                if busy:
                    raise RemoteBlockError(
                        "; ".join(
                            f"remote bot {a} stayed at its keys' limit of matches at once"
                            f" ({seen[a]['matches']} playing, {accounts_needed[a]} more needed)"
                            for a in busy
                        )
                        + f" for {timeout_s:g} s: the block is retried"
                    )
                return {"remote": dict(remote), "remote_wait": True}
            why = [f"waiting for remote bot {a} to connect" for a in offline] + [
                f"waiting for remote bot {a} to have room for {accounts_needed[a]} matches"
                f" ({seen[a]['matches']} playing)"
                for a in busy
            ]
            accounts.set_waiting(engine, block_id, "; ".join(why) + f" (gives up in {left:.0f} s)")
            sleep(min(POLL_S, max(left, 0.01)))
    finally:
        accounts.set_waiting(engine, block_id, None)


def _describe(exc: grpc.RpcError) -> str:
    if isinstance(exc, grpc.Call):
        return f"{exc.code().name}: {exc.details()}"
    return str(exc)
