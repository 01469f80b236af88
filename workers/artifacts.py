"""Bot artifacts: a submission packed into one deterministic archive, addressed by its SHA-256.

A submission is one ``.py`` file, or a directory whose entry point is declared in a
``sixnimmt.json`` file (``{"entry": "main.py:MyBot"}``) or given with ``--entry``, or a directory
with a ``bot.toml`` naming the command of a bot in any language (:mod:`bot_sdk.command`): its
entry point is ``bot.toml``. ``node_modules`` is never packed (bundle a Node bot into one file,
as ``examples/node_bot`` does). The archive is
a tar with sorted names, zeroed owners and times and fixed modes, so the same files always have
the same address.

Both ends are checked against :class:`SubmissionLimits` (``SIXNIMMT_BOT_MAX_BYTES``,
``SIXNIMMT_SUBMIT_MAX_FILES``, ``SIXNIMMT_SUBMIT_MAX_PATH``): packing refuses links, devices and
unsafe names, and unpacking refuses an archive that does not look exactly like one packing makes
(a stored artifact is untrusted too), before it writes anything.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import shutil
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from bot_sdk.command import BOT_TOML, CommandError, read_manifest

if TYPE_CHECKING:
    from referee.settings import Settings

MANIFEST = "sixnimmt.json"
SKIPPED = {"__pycache__", ".git", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", "node_modules"}
SAFE_PART = re.compile(r"[A-Za-z0-9_.+\-]+")
"""The characters of each part of a path inside a submission (and no ``.`` or ``..`` part)."""


class SubmissionError(ValueError):
    """A submission that cannot be stored: too big, no entry point, unsafe paths."""


@dataclass(frozen=True, slots=True)
class SubmissionLimits:
    """What one submission may hold, checked when it is packed and again when it is unpacked."""

    max_bytes: int = 5 << 20
    """The files' sizes together."""
    max_files: int = 256
    max_path: int = 160
    """Characters of a path inside the submission (``dir/file.py``)."""

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> SubmissionLimits:
        """The limits from ``SIXNIMMT_BOT_MAX_BYTES`` and ``SIXNIMMT_SUBMIT_MAX_*``."""
        if settings is None:
            from referee.settings import load

            settings = load()
        return cls(settings.bot_max_bytes, settings.submit_max_files, settings.submit_max_path)

    def check_name(self, name: str) -> None:
        """Refuse a path that is absolute, climbs out, is too long or has unsafe characters."""
        parts = name.split("/")
        if len(name) > self.max_path:
            raise SubmissionError(
                f"the path {name[:60]!r}… is {len(name)} characters; at most {self.max_path}"
            )
        if name.startswith("/") or any(p in ("", ".", "..") or not SAFE_PART.fullmatch(p) for p in parts):
            raise SubmissionError(
                f"unsafe path {name[:60]!r}: relative, with letters, digits and _ . + - in each part only"
            )


@dataclass(frozen=True, slots=True)
class Artifact:
    """A packed bot: its archive, address and entry point."""

    content: bytes
    sha256: str
    entry_point: str
    """``file.py`` or ``file.py:Class`` inside the archive."""
    files: tuple[str, ...]


def pack(
    path: Path,
    *,
    entry: str | None = None,
    max_bytes: int | None = None,
    limits: SubmissionLimits | None = None,
) -> Artifact:
    """Pack a bot file or directory; refuses what cannot run or breaks ``limits`` (default: the settings).

    ``max_bytes`` overrides the limits' total size.
    """
    limits = limits or SubmissionLimits.from_settings()
    if max_bytes is not None:
        limits = dataclasses.replace(limits, max_bytes=max_bytes)
    if not path.exists() and not path.is_symlink():
        raise SubmissionError(f"nothing at {path}")
    if path.is_symlink():
        raise SubmissionError(f"{path} is a symbolic link; submit regular files only")
    if path.is_file():
        if path.suffix != ".py":
            raise SubmissionError(f"{path} is not a .py file (a directory needs a {MANIFEST} entry point)")
        root, names = path.parent, [path.name]
        _check_file(path, path.name)
        entry = entry or path.name
    else:
        root = path
        names = sorted(_files(path, limits))
        if entry is None and not (path / MANIFEST).is_file() and (path / BOT_TOML).is_file():
            try:
                read_manifest(path / BOT_TOML)  # a malformed one is refused before anything runs
            except CommandError as exc:
                raise SubmissionError(str(exc)) from None
            entry = BOT_TOML
        if entry is None:
            manifest = path / MANIFEST
            if not manifest.is_file():
                raise SubmissionError(
                    f"{path} declares no entry point: add {MANIFEST} (a Python bot), {BOT_TOML}"
                    " (a command bot) or pass --entry"
                )
            try:
                entry = str(json.loads(manifest.read_text())["entry"])
            except (ValueError, KeyError, TypeError) as exc:
                raise SubmissionError(
                    f"{manifest} must be JSON with an 'entry' like \"main.py:MyBot\""
                ) from exc
    for name in names:
        limits.check_name(name)
    entry_file = entry.partition(":")[0]
    if entry_file not in names:
        raise SubmissionError(f"entry point {entry!r}: {entry_file} is not among the submitted files")
    total = sum((root / name).stat().st_size for name in names)
    if total > limits.max_bytes:
        raise SubmissionError(f"the submission is {total} bytes; the limit is {limits.max_bytes}")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in names:
            data = (root / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    content = buffer.getvalue()
    return Artifact(content, hashlib.sha256(content).hexdigest(), entry, tuple(names))


def contents(content: bytes) -> tuple[int, int] | None:
    """An archive's number of files and their sizes together (the bot's code, not the tar's padding).

    ``None`` for content that is not a readable tar (a stored artifact is untrusted).
    """
    try:
        with tarfile.open(fileobj=io.BytesIO(content), mode="r:") as tar:
            files = [member for member in tar.getmembers() if member.isfile()]
    except (tarfile.TarError, EOFError):
        return None
    return len(files), sum(member.size for member in files)


def _check_file(item: Path, relative: str) -> None:
    """Refuse anything but a regular file with one name: links, devices, pipes, sockets."""
    info = item.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise SubmissionError(f"{relative} is a symbolic link; submit regular files only")
    if not stat.S_ISREG(info.st_mode):
        raise SubmissionError(
            f"{relative} is not a regular file (a device, pipe or socket); submit files only"
        )
    if info.st_nlink > 1:
        raise SubmissionError(f"{relative} is a hard link ({info.st_nlink} names); submit plain copies only")


def _files(root: Path, limits: SubmissionLimits) -> list[str]:
    out: list[str] = []
    for directory, subdirs, names in os.walk(root):
        base = Path(directory)
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED)
        for name in [*subdirs, *names]:
            item = base / name
            relative = item.relative_to(root).as_posix()
            if item.is_symlink():
                raise SubmissionError(f"{relative} is a symbolic link; submit regular files only")
            if name in subdirs:
                continue
            _check_file(item, relative)
            out.append(relative)
            if len(out) > limits.max_files:
                raise SubmissionError(
                    f"{root} holds more than {limits.max_files} files; the limit is {limits.max_files}"
                )
    if not out:
        raise SubmissionError(f"{root} holds no files")
    return out


def unpack(content: bytes, dest: Path, *, limits: SubmissionLimits | None = None) -> None:
    """Extract an artifact into ``dest``, or refuse it whole before writing anything.

    Only what :func:`pack` makes is accepted: an uncompressed tar of regular files with safe,
    distinct relative names, within ``limits`` (default: the settings).
    """
    limits = limits or SubmissionLimits.from_settings()
    created = not dest.exists()
    try:
        with tarfile.open(fileobj=io.BytesIO(content), mode="r:") as tar:
            members = _members(tar, limits)
            dest.mkdir(parents=True, exist_ok=True)
            tar.extractall(dest, members=members, filter="data")
    except tarfile.TarError as exc:
        if created:
            shutil.rmtree(dest, ignore_errors=True)
        raise SubmissionError(f"the artifact is not a bot archive: {exc}") from None
    except BaseException:
        if created:
            shutil.rmtree(dest, ignore_errors=True)
        raise


def _members(tar: tarfile.TarFile, limits: SubmissionLimits) -> list[tarfile.TarInfo]:
    """The archive's entries, all checked; reads headers one at a time and stops at the first bad one."""
    members: list[tarfile.TarInfo] = []
    total, seen = 0, set()
    for member in tar:
        members.append(member)
        if len(members) > limits.max_files:
            raise SubmissionError(f"the artifact holds more than {limits.max_files} files")
        name = PurePosixPath(member.name)
        if name.is_absolute() or ".." in name.parts:
            raise SubmissionError(f"unsafe entry {member.name!r} in artifact")
        if not member.isfile() or member.issparse():
            raise SubmissionError(f"unsafe entry {member.name!r} in artifact: not a regular file")
        limits.check_name(member.name)
        if member.name in seen:
            raise SubmissionError(f"the artifact holds {member.name!r} twice")
        seen.add(member.name)
        total += member.size
        if total > limits.max_bytes:
            raise SubmissionError(f"the artifact unpacks to more than {limits.max_bytes} bytes")
    return members


def bot_spec(directory: Path, entry_point: str) -> str:
    """The bot spec of an unpacked artifact: ``path.py[:Class]`` for ``python -m bot_sdk.run``, or
    ``DIR/bot.toml`` for a command bot (``arena.remote.spawn_bot`` runs its command in DIR)."""
    file, sep, cls = entry_point.partition(":")
    return f"{directory / file}{sep}{cls}"
