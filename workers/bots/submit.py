"""Bot submission: pack, check in the sandbox, store as a new immutable version — or nothing."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from arena.conformance import CheckReport, check
from arena.referee_thread import referee_in_thread
from bot_sdk.bots import REFERENCE_BOTS
from bot_sdk.command import BOT_TOML
from referee.rules.errors import RulesError
from referee.rules.registry import make_variant
from referee.rules.spec import game_of, installed_games, installed_variants
from referee.settings import load as load_settings
from workers.bots import accounts
from workers.bots.artifacts import (
    MANIFEST,
    Artifact,
    SubmissionError,
    SubmissionLimits,
    bot_spec,
    pack,
    unpack,
)
from workers.sandbox import sandbox_for
from workers.store import repo


def submit(
    engine: Engine,
    path: Path,
    name: str,
    *,
    variant: str = "classic",
    entry: str | None = None,
    games: int = 8,
    sandbox: bool = True,
) -> tuple[repo.BotVersion, bool, CheckReport]:
    """Validate and store a bot; raises :class:`SubmissionError` and stores nothing if it fails."""
    new, report = checked(path, name, variant=variant, entry=entry, games=games, sandbox=sandbox)
    version, created = repo.add_bot_version(
        engine, new.bot, new.content, new.sha256, new.entry_point, new.variant
    )
    return version, created, report


def checked(
    path: Path,
    name: str,
    *,
    variant: str = "classic",
    entry: str | None = None,
    games: int = 8,
    sandbox: bool = True,
) -> tuple[repo.NewVersion, CheckReport]:
    """Pack and check a bot, storing nothing: the version to store once everything else is right.

    Raises :class:`SubmissionError` when the name, the files or the check are refused.
    """
    check_submitted_name(name)  # before anything runs
    artifact = pack(path, entry=entry, limits=SubmissionLimits.from_settings(load_settings()))
    new = repo.NewVersion(name, artifact.content, artifact.sha256, artifact.entry_point, variant)
    return new, check_new(new, games=games, sandbox=sandbox)


def checked_archive(
    content: bytes,
    name: str,
    *,
    variant: str = "classic",
    entry: str | None = None,
    limits: SubmissionLimits | None = None,
) -> repo.NewVersion:
    """An uploaded archive (``sixnimmt bot submit --server``'s: a tar as :func:`pack` makes) checked
    as ``bot submit`` checks a directory, and packed again; nothing runs.

    Every limit (:class:`SubmissionLimits`: size, files, path length and characters, regular files
    only, no link, no ``..``, no absolute path, no compression) is checked on the archive's headers
    before anything is unpacked (:func:`unpack` refuses the archive whole before writing a file).
    The files are then packed as ``bot submit`` packs a directory, so the stored artifact and its
    sha256 are the ones the same files give there. :class:`SubmissionError` says what was refused.
    ``limits``: the settings' by default.
    """
    check_submitted_name(name)
    try:
        make_variant(variant)
    except RulesError as exc:
        raise SubmissionError(f"variant {variant!r}: {exc} ('sixnimmt variants' lists them)") from None
    limits = limits or SubmissionLimits.from_settings(load_settings())
    with tempfile.TemporaryDirectory(prefix="sixnimmt-upload-") as tmp:
        directory = Path(tmp) / "bot"
        unpack(content, directory, limits=limits)
        files = sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())
        if entry is None and not {MANIFEST, BOT_TOML} & set(files):
            python = [f for f in files if f.endswith(".py")]
            if len(python) != 1:
                raise SubmissionError(
                    f"the archive declares no entry point: add {MANIFEST} (a Python bot), {BOT_TOML}"
                    " (a command bot) or pass --entry"
                )
            entry = python[0]
        artifact = pack(directory, entry=entry, limits=limits)
    return repo.NewVersion(name, artifact.content, artifact.sha256, artifact.entry_point, variant)


def validate(new: repo.NewVersion, *, games: int = 8, sandbox: bool = True) -> tuple[CheckReport, str | None]:
    """Run a packed version's check game in the sandbox: its report, and why it failed (``None``:
    it passed)."""
    artifact = Artifact(new.content, new.sha256, new.entry_point, ())
    report = check_artifact(artifact, variant=new.variant, games=games, sandbox=sandbox)
    if report.ok:
        return report, None
    failed = ", ".join(check for check, passed in report.checks if not passed)
    return report, f"the bot failed its check ({failed}): {report.summary() or 'no reason given'}"


def check_submitted_name(name: str) -> str:
    """Return ``name`` if a submitted bot may be stored under it, else raise :class:`SubmissionError`.

    A safe name (:func:`repo.check_name`) that is not reserved (:func:`reserved_because`).
    """
    try:
        repo.check_name("bot", name)
    except repo.BadNameError as exc:
        raise SubmissionError(str(exc)) from None
    why = reserved_because(name)
    if why is not None:
        raise SubmissionError(f"the bot name {name!r} is reserved: {why}; choose another")
    return name


def reserved_because(name: str) -> str | None:
    """Why no submitted bot may take ``name``, or ``None`` if one may.

    Taken by what the platform itself stores or resolves: ``remote/NAME`` (a bot account's bot),
    ``GAME/…`` for every installed game, variant and alias (``classic/heuristic`` is a reference
    bot), and a reference bot's bare name (``--bots heuristic`` names it). Letter case does not
    make a name apart from these.
    """
    folded = name.lower()
    if folded.startswith(accounts.REMOTE_BOT_PREFIX):
        return f"{accounts.REMOTE_BOT_PREFIX}… names are bot accounts' ('sixnimmt bot account create')"
    first, slash, _ = folded.partition("/")
    if slash and first in game_names():
        return f"{first}/… names are kept for the {first} game's reference bots"
    if folded in {bot.lower() for bots in REFERENCE_BOTS.values() for bot in bots}:
        return f"{name} names a reference bot"
    return None


def game_names() -> frozenset[str]:
    """Every installed game's name, and every name and alias of its variants, in lower case."""
    names = {variant.lower() for variant in REFERENCE_BOTS}
    for game in installed_games():
        names.add(game.name.lower())
        names.update(n.lower() for n in game.names)
    for cls in installed_variants():
        names.add(cls.name.lower())
        names.update(alias.lower() for alias in cls.aliases)
    return frozenset(names)


def check_new(new: repo.NewVersion, *, games: int = 8, sandbox: bool = True) -> CheckReport:
    """Check a packed version in the sandbox; :class:`SubmissionError` (the bot's own error) if it fails."""
    artifact = Artifact(new.content, new.sha256, new.entry_point, ())
    report = check_artifact(artifact, variant=new.variant, games=games, sandbox=sandbox)
    if not report.ok:
        failed = ", ".join(check for check, passed in report.checks if not passed)
        # The bot's own error (its SyntaxError, its exception, how its process ended), not counts;
        # its most frequent fault by cause, with an example.
        raise SubmissionError(
            f"the bot failed its check ({failed}; {report.time_control_line()}):"
            f" {report.summary() or 'no reason given'}"
        )
    return report


def check_artifact(artifact: Artifact, *, variant: str, games: int, sandbox: bool = True) -> CheckReport:
    """Run ``bot check`` on the unpacked artifact, the bot's code running only in its own process,
    under the league's time control (:func:`arena.matches.default_time_control`)."""
    with tempfile.TemporaryDirectory(prefix="sixnimmt-submit-") as tmp:
        directory = Path(tmp) / "bot"
        unpack(artifact.content, directory)
        for item in [Path(tmp), directory, *directory.rglob("*")]:
            item.chmod(0o755 if item.is_dir() else 0o644)
        # The platform's referee in this process, as a league block's (no referee process to start).
        with referee_in_thread(Path(tmp)) as client:
            recording = _Recording(client)
            report = check(
                bot_spec(directory, artifact.entry_point),
                variant=variant,
                config=_check_config(variant),
                games=games,
                launch=sandbox_for(Path(tmp)) if sandbox else None,
                preload=False,
                client=recording,  # type: ignore[arg-type]
            )
    # The check games' transcripts (the API shows a submission's first to its owner).
    report.details["transcripts"] = recording.transcripts
    return report


class _Recording:
    """A referee client that keeps the transcript of every finished match it hands on."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.transcripts: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def results(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for match in self._client.results(*args, **kwargs):
            self._keep(match)
            yield match

    def result(self, *args: Any, **kwargs: Any) -> Any:
        return self._keep(self._client.result(*args, **kwargs))

    def _keep(self, match: Any) -> Any:
        if getattr(match, "transcript", None):
            self.transcripts.append(json.dumps(match.transcript))
        return match


def reference_source(variant: str, name: str) -> str:
    """A one-line bot file that runs a reference bot (how reference bots enter a league)."""
    target = REFERENCE_BOTS.get(variant, {}).get(name)
    if target is None:
        raise SubmissionError(f"no reference bot {name!r} for {variant}")
    module, _, cls = target.partition(":")
    return (
        f'"""The reference bot {name!r} of {variant}."""\n\nfrom {module} import {cls} as BOT  # noqa: F401\n'
    )


def reference_name(variant: str, name: str) -> str:
    """The stored name of a reference bot: its game, then its name (``classic/heuristic``, ``board/random``).

    Every game has a ``random`` and a ``heuristic``; the game in the name keeps them apart in one store.
    """
    return f"{variant}/{name}"


def reference_version(variant: str, name: str) -> repo.NewVersion:
    """A reference bot as a version to store (trusted code of this project: no check needed)."""
    source = reference_source(variant, name)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.py"
        path.write_text(source)
        artifact = pack(path, max_bytes=1 << 16)
    return repo.NewVersion(
        reference_name(variant, name), artifact.content, artifact.sha256, artifact.entry_point, variant
    )


def store_reference(engine: Engine, variant: str, name: str) -> repo.BotVersion:
    """Store a reference bot (or find it stored already) under :func:`reference_name`."""
    new = reference_version(variant, name)
    version, _ = repo.add_bot_version(engine, new.bot, new.content, new.sha256, new.entry_point, variant)
    return version


def _check_config(variant: str) -> dict[str, Any] | None:
    """The short game a submitted bot is checked with: its game's ``check_config``, else the defaults."""
    game = game_of(variant)
    return dict(game.check_config) if game is not None and game.check_config else None
