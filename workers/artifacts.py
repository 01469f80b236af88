"""Bot artifacts: a submission packed into one deterministic archive, addressed by its SHA-256.

A submission is one ``.py`` file, or a directory whose entry point is declared in a
``sixnimmt.json`` file (``{"entry": "main.py:MyBot"}``) or given with ``--entry``. The archive is
a tar with sorted names, zeroed owners and times and fixed modes, so the same files always have
the same address.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MANIFEST = "sixnimmt.json"
SKIPPED = {"__pycache__", ".git", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"}


class SubmissionError(ValueError):
    """A submission that cannot be stored: too big, no entry point, unsafe paths."""


@dataclass(frozen=True, slots=True)
class Artifact:
    """A packed bot: its archive, address and entry point."""

    content: bytes
    sha256: str
    entry_point: str
    """``file.py`` or ``file.py:Class`` inside the archive."""
    files: tuple[str, ...]


def pack(path: Path, *, entry: str | None = None, max_bytes: int) -> Artifact:
    """Pack a bot file or directory; refuses what cannot run or is over ``max_bytes``."""
    if not path.exists():
        raise SubmissionError(f"nothing at {path}")
    if path.is_file():
        if path.suffix != ".py":
            raise SubmissionError(f"{path} is not a .py file (a directory needs a {MANIFEST} entry point)")
        root, names = path.parent, [path.name]
        entry = entry or path.name
    else:
        root = path
        names = sorted(_files(path))
        if entry is None:
            manifest = path / MANIFEST
            if not manifest.is_file():
                raise SubmissionError(f"{path} declares no entry point: add {MANIFEST} or pass --entry")
            try:
                entry = str(json.loads(manifest.read_text())["entry"])
            except (ValueError, KeyError, TypeError) as exc:
                raise SubmissionError(
                    f"{manifest} must be JSON with an 'entry' like \"main.py:MyBot\""
                ) from exc
    entry_file = entry.partition(":")[0]
    if entry_file not in names:
        raise SubmissionError(f"entry point {entry!r}: {entry_file} is not among the submitted files")
    total = sum((root / name).stat().st_size for name in names)
    if total > max_bytes:
        raise SubmissionError(f"the submission is {total} bytes; the limit is {max_bytes}")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in names:
            data = (root / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    content = buffer.getvalue()
    return Artifact(content, hashlib.sha256(content).hexdigest(), entry, tuple(names))


def _files(root: Path) -> list[str]:
    out = []
    for item in root.rglob("*"):
        relative = item.relative_to(root)
        if any(part in SKIPPED for part in relative.parts):
            continue
        if item.is_symlink():
            raise SubmissionError(f"{relative} is a symbolic link; submit regular files only")
        if item.is_file():
            out.append(relative.as_posix())
    if not out:
        raise SubmissionError(f"{root} holds no files")
    return out


def unpack(content: bytes, dest: Path) -> None:
    """Extract an artifact into ``dest``, refusing any path that would leave it."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(content), mode="r") as tar:
        for member in tar.getmembers():
            name = PurePosixPath(member.name)
            if name.is_absolute() or ".." in name.parts or not member.isfile():
                raise SubmissionError(f"unsafe entry {member.name!r} in artifact")
        tar.extractall(dest, filter="data")


def bot_spec(directory: Path, entry_point: str) -> str:
    """The bot spec (``path.py[:Class]``) of an unpacked artifact, for ``python -m bot_sdk.run``."""
    file, sep, cls = entry_point.partition(":")
    return f"{directory / file}{sep}{cls}"
