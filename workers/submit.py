"""Bot submission: pack, check in the sandbox, store as a new immutable version — or nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from arena.conformance import CheckReport, check
from arena.referee_thread import referee_in_thread
from bot_sdk.bots import REFERENCE_BOTS
from referee.rules.spec import game_of
from referee.settings import load as load_settings
from workers.artifacts import Artifact, SubmissionError, SubmissionLimits, bot_spec, pack, unpack
from workers.execute import sandbox_for
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
    try:
        repo.check_name("bot", name)  # before anything runs
    except repo.BadNameError as exc:
        raise SubmissionError(str(exc)) from None
    artifact = pack(path, entry=entry, limits=SubmissionLimits.from_settings(load_settings()))
    new = repo.NewVersion(name, artifact.content, artifact.sha256, artifact.entry_point, variant)
    return new, check_new(new, games=games, sandbox=sandbox)


def check_new(new: repo.NewVersion, *, games: int = 8, sandbox: bool = True) -> CheckReport:
    """Check a packed version in the sandbox; :class:`SubmissionError` (the bot's own error) if it fails."""
    artifact = Artifact(new.content, new.sha256, new.entry_point, ())
    report = check_artifact(artifact, variant=new.variant, games=games, sandbox=sandbox)
    if not report.ok:
        failed = ", ".join(check for check, passed in report.checks if not passed)
        # The bot's own error (its SyntaxError, its exception, how its process ended), not counts.
        raise SubmissionError(f"the bot failed its check ({failed}): {report.summary() or 'no reason given'}")
    return report


def check_artifact(artifact: Artifact, *, variant: str, games: int, sandbox: bool = True) -> CheckReport:
    """Run ``bot check`` on the unpacked artifact, the bot's code running only in its own process."""
    with tempfile.TemporaryDirectory(prefix="sixnimmt-submit-") as tmp:
        directory = Path(tmp) / "bot"
        unpack(artifact.content, directory)
        for item in [Path(tmp), directory, *directory.rglob("*")]:
            item.chmod(0o755 if item.is_dir() else 0o644)
        # The platform's referee in this process, as a league block's (no referee process to start).
        with referee_in_thread(Path(tmp)) as client:
            return check(
                bot_spec(directory, artifact.entry_point),
                variant=variant,
                config=_check_config(variant),
                games=games,
                launch=sandbox_for(Path(tmp)) if sandbox else None,
                preload=False,
                client=client,
            )


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
