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
from referee.settings import load

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
    single = path.is_file()
    if single and path.suffix != ".py":
        raise SubmissionError(f"{path} is not a .py file (a directory needs a {MANIFEST} entry point)")
    # Listed and read through one descriptor of the directory, which links cannot redirect.
    root = _open_root(path.parent if single else path, follow=single)
    try:
        if single:
            found = os.stat(path.name, dir_fd=root, follow_symlinks=False)
            listed = [_Listed.of(_check_file(found, path.name), path.name)]
        else:
            listed = sorted(_files(root, path, limits), key=lambda item: item.name)
        for item in listed:
            limits.check_name(item.name)
        total = sum(item.size for item in listed)
        if total > limits.max_bytes:
            raise SubmissionError(f"the submission is {total} bytes; the limit is {limits.max_bytes}")
        # Read once, each the very file listed; everything below (the entry point too) uses these bytes.
        files = {item.name: _read_listed(root, item) for item in listed}
    finally:
        os.close(root)
    if single:
        entry = entry or path.name
    elif entry is None:
        entry = _entry_point(path, files)
    entry_file = entry.partition(":")[0]
    if entry_file not in files:
        raise SubmissionError(f"entry point {entry!r}: {entry_file} is not among the submitted files")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    content = buffer.getvalue()
    return Artifact(content, hashlib.sha256(content).hexdigest(), entry, tuple(files))


def _entry_point(path: Path, files: dict[str, bytes]) -> str:
    """A directory's entry point: its ``sixnimmt.json``'s, else ``bot.toml`` (a command bot)."""
    if MANIFEST not in files and BOT_TOML in files:
        try:
            read_manifest(path / BOT_TOML)  # a malformed one is refused before anything runs
        except CommandError as exc:
            raise SubmissionError(str(exc)) from None
        return BOT_TOML
    if MANIFEST not in files:
        raise SubmissionError(
            f"{path} declares no entry point: add {MANIFEST} (a Python bot), {BOT_TOML}"
            " (a command bot) or pass --entry"
        )
    try:
        return str(json.loads(files[MANIFEST])["entry"])
    except (ValueError, KeyError, TypeError) as exc:
        raise SubmissionError(
            f"{path / MANIFEST} must be JSON with an 'entry' like \"main.py:MyBot\""
        ) from exc


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


@dataclass(frozen=True, slots=True)
class _Listed:
    """A file as it was listed: its path in the submission and which file it was then."""

    name: str
    device: int
    inode: int
    size: int

    @classmethod
    def of(cls, info: os.stat_result, name: str) -> _Listed:
        return cls(name, info.st_dev, info.st_ino, info.st_size)


def _open_root(directory: Path, *, follow: bool) -> int:
    """A descriptor of the submitted directory (``follow``: of a single file's directory, reached
    through links as the caller named it)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        return os.open(directory, flags)
    except OSError as exc:
        raise SubmissionError(f"cannot open {directory}: {exc.strerror} (a link, or no directory)") from None


def _read_listed(root: int, item: _Listed) -> bytes:
    """The content of the file ``item`` lists under the directory ``root``, read only if it is
    still that very file.

    Every part of its path is opened without following links (a directory or the file swapped for
    a symbolic link after the listing is refused, not followed), and the file opened must be the
    regular file listed: same device, inode and size, one name.
    """
    changed = SubmissionError(
        f"{item.name} changed while the submission was packed (a link, or another file now); submit again"
    )
    *directories, file = item.name.split("/")
    fds: list[int] = []
    try:
        for part in directories:
            try:
                fds.append(os.open(part, _NOFOLLOW | os.O_DIRECTORY, dir_fd=fds[-1] if fds else root))
            except OSError:
                raise changed from None
        try:  # O_NONBLOCK: a FIFO swapped in must not block the open
            fds.append(os.open(file, _NOFOLLOW | os.O_NONBLOCK, dir_fd=fds[-1] if fds else root))
        except OSError:
            raise changed from None
        info = os.fstat(fds[-1])
        same = (info.st_dev, info.st_ino, info.st_size) == (item.device, item.inode, item.size)
        if not stat.S_ISREG(info.st_mode) or not same or info.st_nlink != 1:
            raise changed
        chunks, left = [], item.size + 1  # one byte more than listed shows a file that grew
        while left > 0 and (chunk := os.read(fds[-1], left)):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) != item.size:
            raise changed
        return data
    finally:
        for fd in reversed(fds):
            os.close(fd)


_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def _check_file(info: os.stat_result, relative: str) -> os.stat_result:
    """Refuse anything but a regular file with one name (its ``lstat``): links, devices, pipes, sockets."""
    if stat.S_ISLNK(info.st_mode):
        raise SubmissionError(f"{relative} is a symbolic link; submit regular files only")
    if not stat.S_ISREG(info.st_mode):
        raise SubmissionError(
            f"{relative} is not a regular file (a device, pipe or socket); submit files only"
        )
    if info.st_nlink > 1:
        raise SubmissionError(f"{relative} is a hard link ({info.st_nlink} names); submit plain copies only")
    return info


def _files(root: int, path: Path, limits: SubmissionLimits) -> list[_Listed]:
    """Every file to pack under the directory ``root`` (``path``, for messages), each as it is now
    (read later by :func:`_read_listed`); the walk follows no link."""
    out: list[_Listed] = []
    for directory, subdirs, names, fd in os.fwalk(".", dir_fd=root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED)
        for name in [*subdirs, *names]:
            relative = PurePosixPath(directory, name).as_posix()
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                raise SubmissionError(f"{relative} is a symbolic link; submit regular files only")
            if name in subdirs:
                continue
            out.append(_Listed.of(_check_file(info, relative), relative))
            if len(out) > limits.max_files:
                raise SubmissionError(
                    f"{path} holds more than {limits.max_files} files; the limit is {limits.max_files}"
                )
    if not out:
        raise SubmissionError(f"{path} holds no files")
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


def unpack_readable(content: bytes, dest: Path) -> None:
    """:func:`unpack`, then let a bot's sandbox user read the files (its root is 0700: only the
    process that plays the bot enters it; the bot's own directory is bound into its sandbox)."""
    unpack(content, dest)
    for path in [dest, *dest.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


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
    ``DIR/bot.toml`` for a command bot (``arena.matches.spawn_bot`` runs its command in DIR)."""
    file, sep, cls = entry_point.partition(":")
    return f"{directory / file}{sep}{cls}"
