"""Remote bots: a bot account's API key in Hello opens a standing connection from outside.

A bot on its author's machine (``sixnimmt bot connect``) presents an API key (``snk_…``) where a
bot started by the platform presents its entrant token. The referee keeps no store: the league
hands it the SHA-256 of every key that is not revoked, with its account and limits
(``SetRemoteKeys``, which replaces the whole set and closes the connections of keys no longer in
it; each set carries the store's generation, and a set older than the one held is ignored). A
key's connection is a standing entrant (:class:`referee.driver.StandingLink`): it stays open, and
``CreateMatches`` adds matches to it by naming the account (``remote``) instead of handing out a
token. Per key, the referee enforces how many connections may be open at once and how many
matches its connections may play at once. A connection that breaks leaves its games waiting as
for any bot; the same key connecting again takes them up.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.driver import StandingLink
from referee.server.state import RefereeState, UnknownTokenError

KEY_PREFIX = "snk_"
"""How an API key starts; an entrant token is hex and never does."""


class UnknownKeyError(UnknownTokenError):
    """A Hello presented an API key the referee does not know (never made, or revoked)."""


class RemoteError(Exception):
    """A remote bot cannot be admitted or seated now (the status code says why)."""


class KeysNotLoadedError(RemoteError):
    """The referee has not been handed its API keys yet (it just started): try again shortly."""


class KeyLimitError(RemoteError):
    """A key's limit on connections or concurrent matches would be passed."""


class RemoteOfflineError(RemoteError):
    """A remote entrant's account has no bot connected."""


@dataclass(frozen=True, slots=True)
class RemoteKey:
    """One API key as the referee knows it: never the key, only its hash."""

    key_id: str
    account: str
    sha256: str
    max_connections: int
    max_matches: int


KEY_FIELDS = ("key_id", "account", "sha256", "max_connections", "max_matches")
"""The fields of each key in a key file, as in ``SetRemoteKeys``."""


def read_keys_file(path: str | Path) -> tuple[list[RemoteKey], int]:
    """The keys and their generation from a key file (``referee serve --remote-keys FILE``).

    The file is what ``sixnimmt bot key export FILE`` writes from the store, the same set a
    ``SetRemoteKeys`` carries: ``{"generation": N, "keys": [{"key_id", "account", "sha256",
    "max_connections", "max_matches"}, …]}``. A referee started with it accepts those keys from
    its first moment instead of answering ``UNAVAILABLE`` until the league pushes them. Anything
    unreadable or malformed is a :class:`ValueError` naming the file (one line for the command).
    """
    try:
        data: Any = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ValueError(f"cannot read the key file {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ValueError(f"the key file {path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise ValueError(
            f"the key file {path} holds no \"keys\" list (write it with 'sixnimmt bot key export')"
        )
    generation = data.get("generation", 0)
    if not isinstance(generation, int) or generation < 0:
        raise ValueError(f'the key file {path}: "generation" must be a whole number >= 0')
    keys = []
    for at, item in enumerate(data["keys"]):
        if not isinstance(item, dict) or set(item) != set(KEY_FIELDS):
            raise ValueError(f"the key file {path}: key {at} must have exactly {', '.join(KEY_FIELDS)}")
        key = RemoteKey(**item)
        texts = (key.key_id, key.account, key.sha256)
        counts = (key.max_connections, key.max_matches)
        if not all(isinstance(t, str) and t for t in texts) or not all(
            isinstance(n, int) and n >= 0 for n in counts
        ):
            raise ValueError(f"the key file {path}: key {at} has a field of the wrong type")
        keys.append(RemoteKey(key.key_id, key.account, key.sha256.lower(), *counts))
    return keys, generation


def is_key(token: str) -> bool:
    """Whether a Hello's token is an API key (``snk_…``)."""
    return token.startswith(KEY_PREFIX)


def key_hash(key: str) -> str:
    """The SHA-256 of a key, hex, as the league stores it."""
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(slots=True)
class _Remote:
    """A standing connection of an account: its key (``None`` until a bot connects to it)."""

    standing: StandingLink
    account: str
    key_id: str | None
    reserved: bool = False
    """Seated by a CreateMatches still setting its matches up: not to be pruned yet."""

    @property
    def connected(self) -> bool:
        return self.standing.outbox is not None

    def matches(self) -> int:
        """Matches with a game left on this connection."""
        return len(
            {
                match_id
                for link in self.standing.joined
                for (match_id, _), stats in link.seats.items()
                if not stats.finished
            }
        )


class RemoteHub:
    """The referee's API keys and the standing connections they opened, by account."""

    def __init__(self, state: RefereeState) -> None:
        self.state = state
        self.keys: dict[str, RemoteKey] | None = None
        """SHA-256 → key; ``None`` until the league hands them over."""
        self.generation = 0
        """The store's generation of the keys held (0: none held, or a set given unordered)."""
        self.by_id: dict[str, RemoteKey] = {}
        self.remotes: dict[str, list[_Remote]] = {}
        """Account → its standing connections (open, broken with games left, or awaited)."""

    # -- the league's side (admin calls) ----------------------------------------------------

    def is_stale(self, generation: int) -> bool:
        """Whether a set read at ``generation`` is older than the one held (and must be ignored).

        Pushes come from several processes (a key made on the command line, every remote block's
        wait), each reading the store and then calling; nothing orders their arrival. A set read
        before a key was made, arriving after one read after, would drop the new key and close its
        connection as if it were revoked. The store's generation grows with every key made or
        revoked, so the later read always has the larger (or an equal, same-content) number.
        """
        return generation != 0 and generation < self.generation

    def set_keys(self, keys: Iterable[RemoteKey], generation: int = 0) -> int | None:
        """Replace the known keys; close the connections of keys no longer known. Returns how many.

        A set at a ``generation`` older than the one held changes nothing and returns ``None``
        (:meth:`is_stale`).
        """
        if self.is_stale(generation):
            return None
        self.generation = generation
        self.keys = {k.sha256: k for k in keys}
        self.by_id = {k.key_id: k for k in self.keys.values()}
        closed = 0
        for remotes in self.remotes.values():
            for remote in remotes:
                if remote.key_id is not None and remote.key_id not in self.by_id:
                    remote.key_id = None  # its games wait (the connect window) for another key
                    if remote.standing.outbox is not None:
                        remote.standing.outbox.close("the API key was revoked")
                        closed += 1
        return closed

    def status(self, accounts: Iterable[str]) -> list[dict[str, int | str]]:
        """Per account: open connections, matches being played, and room for more under the limits."""
        self._prune()
        out: list[dict[str, int | str]] = []
        for account in accounts:
            remotes = [r for r in self.remotes.get(account, []) if r.connected]
            keys = {r.key_id for r in remotes if r.key_id is not None}
            room = sum(max(0, self.by_id[k].max_matches - self._matches(k)) for k in keys if k in self.by_id)
            out.append(
                {
                    "account": account,
                    "connections": len(remotes),
                    "matches": sum(r.matches() for r in remotes),
                    "room": room,
                }
            )
        return out

    def place(self, remote: Mapping[str, str], needs: Mapping[str, int], wait: bool) -> dict[str, str]:
        """The standing token that plays each remote entrant's seats (entrant → account given).

        A connection of the account whose key has room for the entrant's ``needs`` matches, the
        least busy first. With no connection, ``wait`` seats it on a standing connection that
        waits for the account's bot (the matches' connect window, as for any entrant); without
        ``wait`` that is a :class:`RemoteOfflineError`. Over the limit: :class:`KeyLimitError`.
        """
        if not remote:
            return {}
        if self.keys is None:
            raise KeysNotLoadedError("the referee has no API keys yet: SetRemoteKeys first")
        self._prune()
        tokens: dict[str, str] = {}
        planned: dict[str, int] = {}
        for entrant, account in remote.items():
            need = needs.get(entrant, 0)
            connected = [r for r in self.remotes.get(account, []) if r.connected and r.key_id is not None]
            if not connected:
                if not wait:
                    raise RemoteOfflineError(f"remote bot {account!r} is not connected")
                awaited = _Remote(self.state.open_standing(f"remote:{account}"), account, None, True)
                self.remotes.setdefault(account, []).append(awaited)
                tokens[entrant] = awaited.standing.token
                continue
            best: _Remote | None = None
            for candidate in connected:
                assert candidate.key_id is not None
                key = self.by_id[candidate.key_id]
                room = key.max_matches - self._matches(key.key_id) - planned.get(key.key_id, 0)
                if room >= need and (best is None or candidate.matches() < best.matches()):
                    best = candidate
            if best is None or best.key_id is None:
                limits = ", ".join(
                    f"key {r.key_id}: {self.by_id[r.key_id].max_matches}" for r in connected if r.key_id
                )
                raise KeyLimitError(
                    f"remote bot {account!r} has no room for {need} more matches"
                    f" (matches at once per key: {limits})"
                )
            planned[best.key_id] = planned.get(best.key_id, 0) + need
            tokens[entrant] = best.standing.token
        return tokens

    def placed(self) -> None:
        """The CreateMatches that :meth:`place` seated is set up (or failed): prune as usual."""
        for remotes in self.remotes.values():
            for remote in remotes:
                remote.reserved = False

    # -- the bot's side (Hello with a key) ----------------------------------------------------

    def known(self, key: str) -> RemoteKey:
        """The key as the referee knows it; :class:`UnknownKeyError` (or not loaded) if none."""
        if self.keys is None:
            raise KeysNotLoadedError("the referee has not been given its API keys yet: try again shortly")
        found = self.keys.get(key_hash(key))
        if found is None:
            raise UnknownKeyError("unknown or revoked API key")
        return found

    def standings(self, key_id: str) -> list[StandingLink]:
        """The standing connections of a key (open, broken with games left)."""
        return [r.standing for remotes in self.remotes.values() for r in remotes if r.key_id == key_id]

    def admit(self, key: str) -> StandingLink:
        """The standing connection a Hello with this key attaches to (a new one, or one to resume)."""
        found = self.known(key)
        self._prune()
        remotes = self.remotes.setdefault(found.account, [])
        open_now = sum(1 for r in remotes if r.key_id == found.key_id and r.connected)
        if open_now >= found.max_connections:
            raise KeyLimitError(
                f"API key {found.key_id} allows {found.max_connections} connection(s) at once;"
                f" {open_now} open"
            )
        # Games left on a connection that broke (this key's), or seated while the bot was away.
        room = found.max_matches - self._matches(found.key_id)
        for remote in remotes:
            if remote.connected or not remote.standing.live or remote.key_id not in (found.key_id, None):
                continue
            if remote.key_id is None and remote.matches() > room:
                continue
            remote.key_id = found.key_id
            return remote.standing
        remote = _Remote(self.state.open_standing(f"remote:{found.account}"), found.account, found.key_id)
        remotes.append(remote)
        return remote.standing

    def released(self, standing: object) -> None:
        """A connection ended: its games left go to another open connection of the same key.

        A bot that reconnects before the referee notices its old connection broke is on a new
        standing connection already; without this its games would wait for a connection that
        never comes back. With no other connection they wait for the key's next one (:meth:`admit`).
        """
        for remotes in self.remotes.values():
            old = next((r for r in remotes if r.standing is standing), None)
            if old is None:
                continue
            if old.connected or not old.standing.live:
                return
            heir = next((r for r in remotes if r.connected and r.key_id == old.key_id), None)
            if heir is None:
                return
            for link in list(old.standing.joined):
                if link.live:
                    old.standing.joined.remove(link)
                    heir.standing.join(link)
            return

    # -- bookkeeping --------------------------------------------------------------------------

    def _matches(self, key_id: str) -> int:
        return sum(r.matches() for remotes in self.remotes.values() for r in remotes if r.key_id == key_id)

    def _prune(self) -> None:
        """Close and forget standing connections that are gone and have no game left."""
        for account, remotes in list(self.remotes.items()):
            keep = []
            for remote in remotes:
                if remote.connected or remote.standing.live or remote.reserved:
                    keep.append(remote)
                else:
                    self.state.close_standing([remote.standing.token], "no games left")
            if keep:
                self.remotes[account] = keep
            else:
                del self.remotes[account]
