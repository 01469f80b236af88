"""The entrants ``--bots`` names: stored bots, the reference bots of the league's game, bot files.

Resolving stores nothing: stored bots are looked up, reference bots and bot files become
:class:`~workers.store.repo.NewVersion` values that the league stores in its own transaction,
so a league that fails stores no bot either (and no store is needed to resolve them when none
exists yet: then only reference bots and files can be named).

- ``NAME`` or ``NAME@N``: a stored bot (the newest version, or version N), of the league's game.
- A reference bot's name (``random``, ``heuristic``, …) means that bot *of the league's game*,
  stored on first use as ``GAME/NAME`` (``classic/heuristic``, ``board/random``); ``GAME/NAME``
  says the same explicitly. A stored bot that has a reference bot's name is ``NAME@N``.
- A ``.py`` file or a directory: submitted, with the same checks as ``bot submit``. A directory
  with a ``bot.toml`` (or the ``bot.toml`` itself) is a command bot in any language
  (:mod:`bot_sdk.command`), stored under the directory's name with ``bot.toml`` as its entry
  point; a bare ``cmd:COMMAND`` is refused, since a league stores its entrants' files.
- ``remote:NAME``: the bot account NAME (docs/remote.md), stored as ``remote/NAME``; its bot
  plays from its author's machine over ``sixnimmt bot connect``.
- ``ENTRANT*N``: the same entrant N times on purpose (each entry labelled apart in the standings,
  ``…#1``, ``…#2``). Naming one bot twice otherwise is taken for a slip and refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from bot_sdk.bots import REFERENCE_BOTS
from bot_sdk.command import BOT_TOML, manifest_of
from bot_sdk.command import PREFIX as COMMAND_PREFIX
from referee.rules.errors import UnknownVariantError
from referee.rules.registry import find_variant
from workers.bots import accounts
from workers.bots.artifacts import SubmissionError, SubmissionLimits, pack
from workers.bots.submit import check_new, check_submitted_name, reference_version
from workers.store import repo

Entrant = repo.BotVersion | repo.NewVersion
"""A league entrant: stored already, or to store with the league."""

MAX_REPEAT = 100


class EntrantError(repo.ConflictError):
    """An entrant list that cannot be meant: a bad ``*N``, or one bot named twice by mistake."""


@dataclass(frozen=True, slots=True)
class Wanted:
    """One ``--bots`` item: what it names, and how many times it enters."""

    ref: str
    count: int = 1

    @property
    def text(self) -> str:
        return self.ref if self.count == 1 else f"{self.ref}*{self.count}"


def parse(items: Sequence[str]) -> list[Wanted]:
    """``["heuristic*2", "mc"]`` → ``[Wanted("heuristic", 2), Wanted("mc")]``; a bad ``*N`` fails."""
    wanted = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        if "*" not in item:
            wanted.append(Wanted(item))
            continue
        ref, _, count = (part.strip() for part in item.partition("*"))
        if not ref or not count.isdigit() or not 1 <= int(count) <= MAX_REPEAT:
            raise EntrantError(
                f"bad entrant {item!r}: write NAME*N to enter one bot N times (N from 1 to {MAX_REPEAT})"
            )
        wanted.append(Wanted(ref, int(count)))
    return wanted


def is_path(ref: str) -> bool:
    """Whether an entrant names a bot file or directory (not a stored or reference bot)."""
    return ref.endswith(".py") or Path(ref).is_dir() or manifest_of(ref) is not None


def reference_of(ref: str, variant: str, what: str = "league") -> str | None:
    """The reference bot of ``variant`` that ``ref`` names (``NAME`` or ``GAME/NAME``), if any."""
    if ref in REFERENCE_BOTS.get(variant, {}):
        return ref
    game, slash, name = ref.partition("/")
    if not slash or "@" in ref:
        return None
    try:
        named = find_variant(game).name
    except UnknownVariantError:
        return None
    if name not in REFERENCE_BOTS.get(named, {}):
        return None
    if named != variant:
        raise repo.ConflictError(f"{ref} is a {named} reference bot, the {what} plays {variant}")
    return name


@dataclass(frozen=True, slots=True)
class Found:
    """The entrants, in order and repeated as ``NAME*N`` says, and the bot files still to check."""

    entrants: tuple[Entrant, ...]
    unchecked: tuple[repo.NewVersion, ...]


def resolve(
    engine: Engine | None,
    items: Sequence[str],
    variant: str,
    *,
    what: str = "league",
    games: int = 8,
    sandbox: bool = True,
) -> list[Entrant]:
    """Every entrant ``items`` names, in order (``NAME*N`` N times), bot files checked; nothing stored.

    :func:`find`, then :func:`check`.
    """
    found = find(engine, items, variant, what=what)
    check(found, games=games, sandbox=sandbox)
    return list(found.entrants)


def find(
    engine: Engine | None, items: Sequence[str], variant: str, *, what: str = "league", slips: bool = True
) -> Found:
    """The entrants ``items`` name, looked up and packed but not checked; nothing stored.

    ``engine`` is ``None`` when there is no store yet. Fails when an entrant does not play
    ``variant`` or (``slips``) when one bot is named twice without ``*N``.
    """
    wanted = parse(items)
    found = [_find(engine, w.ref, variant, what) for w in wanted]
    if slips:
        _refuse_slips(wanted, found)
    unchecked: dict[repo.NewVersion, None] = {}
    for w, entrant in zip(wanted, found, strict=True):
        if isinstance(entrant, repo.NewVersion) and is_path(w.ref):
            unchecked[entrant] = None
    return Found(
        tuple(entrant for w, entrant in zip(wanted, found, strict=True) for _ in range(w.count)),
        tuple(unchecked),
    )


def check(found: Found, *, games: int = 8, sandbox: bool = True) -> None:
    """Check every new bot file in the sandbox, as ``bot submit`` does (the slow part: call it last)."""
    for new in found.unchecked:
        check_new(new, games=games, sandbox=sandbox)


def _find(engine: Engine | None, ref: str, variant: str, what: str) -> Entrant:
    """One entrant, looked up or packed (bot files are not checked yet)."""
    if accounts.is_remote_ref(ref):  # ``remote:NAME``: a bot account, playing from its author's machine
        return accounts.remote_entrant(engine, ref, variant)
    if ref.startswith(COMMAND_PREFIX):
        raise SubmissionError(
            f"{ref}: a {what} stores its entrants' files, and a bare command names none: put the"
            f" command in a {BOT_TOML} in the bot's directory and name that directory"
        )
    if is_path(ref):
        path = Path(ref)
        if path.name == BOT_TOML and path.is_file():
            path = path.parent
        if not path.exists():
            raise repo.NotFoundError(f"no bot file or directory {ref!r}")
        name = path.stem if path.is_file() else path.name
        try:
            check_submitted_name(name)  # a file named heuristic.py is no reference bot
        except SubmissionError as exc:
            raise SubmissionError(f"{ref}: {exc}") from None
        artifact = pack(path, limits=SubmissionLimits.from_settings())
        new = repo.NewVersion(name, artifact.content, artifact.sha256, artifact.entry_point, variant)
        return _stored_or_new(engine, new, ref, what)
    reference = reference_of(ref, variant, what)
    if reference is not None:
        return _stored_or_new(engine, reference_version(variant, reference), ref, what)
    try:
        if engine is None:
            raise repo.NotFoundError(ref)
        version = repo.find_version(engine, ref)
    except repo.NotFoundError:
        known = ", ".join(REFERENCE_BOTS.get(variant, {})) or "none"
        raise repo.NotFoundError(
            f"no bot {ref!r}: not in the store, not a reference bot of {variant} ({known}), not a .py file"
        ) from None
    _same_game(version, ref, variant, what)
    return version


def _stored_or_new(engine: Engine | None, new: repo.NewVersion, ref: str, what: str) -> Entrant:
    """The stored version with exactly this code under this name, else the new one."""
    stored = repo.find_content(engine, new.bot, new.sha256) if engine is not None else None
    if stored is None:
        return new
    _same_game(stored, ref, new.variant, what)
    return stored


def _same_game(version: repo.BotVersion, ref: str, variant: str, what: str) -> None:
    if version.variant != variant:
        raise repo.ConflictError(f"{ref} is a {version.variant} bot, the {what} plays {variant}")


def same(a: Entrant, b: Entrant) -> bool:
    """Whether two resolved entrants are one bot version (stored or to be)."""
    return _key(a) == _key(b)


def _key(entrant: Entrant) -> tuple[object, ...]:
    if isinstance(entrant, repo.NewVersion):
        return ("new", entrant.bot, entrant.sha256)
    return ("stored", entrant.id)


def _refuse_slips(wanted: Sequence[Wanted], found: Sequence[Entrant]) -> None:
    """Refuse one bot named more than once: ``NAME*N`` says it on purpose."""
    groups: dict[tuple[object, ...], list[Wanted]] = {}
    for w, entrant in zip(wanted, found, strict=True):
        groups.setdefault(_key(entrant), []).append(w)
    for key, same in groups.items():
        if len(same) < 2:
            continue
        total = sum(w.count for w in same)
        entrant = found[[_key(e) for e in found].index(key)]
        label = entrant.bot if isinstance(entrant, repo.NewVersion) else f"{entrant.bot}@{entrant.version}"
        named = {w.ref for w in same}
        said = (
            f"{same[0].ref} is named {len(same)} times"
            if len(named) == 1
            else f"{', '.join(w.text for w in same)} are the same bot ({label})"
        )
        raise EntrantError(
            f"{said} in the entrants; to enter one bot {total} times on purpose, write {same[0].ref}*{total}"
        )


def labels(entrants: Sequence[repo.BotVersion]) -> list[str]:
    """Each entrant's label by position: ``bot@version``, with ``#k`` where one version enters k times."""
    return repo.labels_apart([f"{v.bot}@{v.version}" for v in entrants])
