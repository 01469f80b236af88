"""The web pages' forms, without FastAPI: a ``multipart/form-data`` body split into its fields and
files, and an uploaded file turned into the archive ``POST /v1/submissions`` takes.

The upload form takes a single ``.py`` file, the uncompressed tar ``sixnimmt bot submit`` makes,
a ``.tar.gz`` or a ``.zip``. Each becomes an uncompressed tar of regular files (:func:`as_tar`),
which then goes through the API's one path for uploads (:class:`api.app.Uploads`), where every
limit of ``bot submit`` is checked on the tar's headers before anything is unpacked. Here nothing
is written to disk, a compressed file is never inflated past ``limit`` bytes (a bomb stops there),
and a link, a device or more entries than the limits allow are refused before any file is read.
"""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from workers.bots.artifacts import SubmissionError, SubmissionLimits

KINDS = (".py", ".tar", ".tar.gz", ".tgz", ".zip")
"""What the upload form takes, by the file's name."""


class FormError(ValueError):
    """A body that is not the form it should be (a 400)."""


class TooLarge(SubmissionError):
    """An upload past the size limit once inflated (a 413)."""


@dataclass
class Form:
    """A posted multipart form: its text fields (the last value of each) and its files."""

    fields: dict[str, str] = field(default_factory=dict)
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """Field name: (the file's name as the browser sent it, its bytes)."""


def boundary_of(content_type: str | None) -> bytes:
    """The boundary of a ``multipart/form-data`` content type; :class:`FormError` otherwise."""
    kind, _, params = (content_type or "").partition(";")
    if kind.strip().lower() != "multipart/form-data":
        raise FormError("the form must be sent as multipart/form-data")
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.lower() == "boundary" and 0 < len(value.strip('"')) <= 70:
            return value.strip('"').encode("latin-1", "replace")
    raise FormError("the form's content type names no boundary")


def parse_multipart(body: bytes, boundary: bytes, *, complete: bool = True, max_parts: int = 16) -> Form:
    """The fields and files of a multipart body. ``complete=False``: ``body`` is only the start of
    one (the rest was never read); the parts that arrived whole are returned, and no error for the
    rest."""
    form = Form()
    delimiter = b"--" + boundary
    chunks = body.split(delimiter)
    if len(chunks) < 2:
        if complete:
            raise FormError("the form's body has no part")
        return form
    parts = chunks[1:-1]  # the first is the preamble; the last is the closing "--" or what was cut
    if complete and not chunks[-1].startswith(b"--"):
        raise FormError("the form's body does not end")
    if len(parts) > max_parts:
        raise FormError("the form has too many fields")
    for part in parts:
        head, separator, content = part.partition(b"\r\n\r\n")
        if not separator or not head.startswith(b"\r\n") or not content.endswith(b"\r\n"):
            raise FormError("a part of the form is malformed")
        content = content[:-2]
        name, filename = None, None
        for line in head.decode("utf-8", "replace").split("\r\n"):
            key, _, value = line.partition(":")
            if key.strip().lower() != "content-disposition":
                continue
            for param in value.split(";")[1:]:
                pkey, _, pvalue = param.strip().partition("=")
                text = pvalue.strip()
                if len(text) >= 2 and text[0] == text[-1] == '"':
                    text = text[1:-1]
                if pkey.lower() == "name":
                    name = text
                elif pkey.lower() == "filename":
                    filename = text
        if name is None:
            raise FormError("a part of the form has no name")
        if filename is not None:
            form.files[name] = (filename, content)
        else:
            form.fields[name] = content.decode("utf-8", "replace")
    return form


def kind_of(filename: str) -> str:
    """The kind of an uploaded file by its name (one of :data:`KINDS`); :class:`SubmissionError`."""
    lower = filename.lower()
    for kind in sorted(KINDS, key=len, reverse=True):
        if lower.endswith(kind):
            return kind
    raise SubmissionError(
        f"the file {filename[-80:]!r} is not one the form takes:"
        " a .py file, or a .tar, .tar.gz or .zip archive"
    )


def as_tar(filename: str, content: bytes, *, limit: int, limits: SubmissionLimits) -> bytes:
    """The uncompressed tar of regular files that ``content`` (an uploaded ``filename``) holds.

    A ``.py`` file becomes a tar of that one file; a ``.tar`` is taken as it is (the API's checks
    read it); a ``.tar.gz`` is inflated to ``limit`` bytes at most (:class:`TooLarge` past it); a
    ``.tar.gz`` or ``.zip`` is repacked as regular files only, without directory entries, a leading
    ``./`` or one folder that holds everything (an archive of the bot's folder). A link, a device or
    more files than ``limits.max_files`` is :class:`SubmissionError`, before any file is read.
    """
    kind = kind_of(filename)
    if kind == ".py":
        base = PurePosixPath(filename.replace("\\", "/")).name
        return _tar([(base, content)])
    if kind == ".tar":
        return content
    if kind == ".zip":
        return _tar(_from_zip(content, limit=limit, limits=limits))
    return _tar(_from_tar(_inflate(content, limit), limits=limits))


def _inflate(content: bytes, limit: int) -> bytes:
    """A gzip stream's bytes, never more than ``limit`` of them."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(content, limit + 1)
    except zlib.error as exc:
        raise SubmissionError(f"the file is not a .tar.gz: {exc}") from None
    if len(out) > limit:
        raise TooLarge(f"the archive inflates to more than {limit} bytes; the limit is {limit}")
    if not inflater.eof:
        raise SubmissionError("the .tar.gz ends before its gzip stream does")
    return out


def _from_tar(content: bytes, *, limits: SubmissionLimits) -> list[tuple[str, bytes]]:
    files: list[tuple[str, bytes]] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(content), mode="r:") as tar:
            members = []
            for member in tar:
                if member.isdir():
                    continue
                if not member.isfile() or member.issparse():
                    raise SubmissionError(f"unsafe entry {member.name[:80]!r}: not a regular file")
                members.append(member)
                if len(members) > limits.max_files:
                    raise SubmissionError(f"the archive holds more than {limits.max_files} files")
            for member in members:
                read = tar.extractfile(member)
                files.append((member.name, read.read() if read is not None else b""))
    except tarfile.TarError as exc:
        raise SubmissionError(f"the file is not a .tar.gz of a bot: {exc}") from None
    return _unwrapped(files)


def _from_zip(content: bytes, *, limit: int, limits: SubmissionLimits) -> list[tuple[str, bytes]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise SubmissionError(f"the file is not a .zip: {exc}") from None
    with archive:
        entries = [e for e in archive.infolist() if not e.is_dir()]
        if len(entries) > limits.max_files:
            raise SubmissionError(f"the archive holds more than {limits.max_files} files")
        for entry in entries:
            kind = stat.S_IFMT(entry.external_attr >> 16)  # 0: no Unix type recorded, a file
            if kind and kind != stat.S_IFREG:
                raise SubmissionError(f"unsafe entry {entry.filename[:80]!r}: not a regular file")
        files, total = [], 0
        for entry in entries:
            try:
                with archive.open(entry) as read:
                    data = read.read(limit - total + 1)  # never inflated past the limit
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, zlib.error, EOFError) as exc:
                raise SubmissionError(f"the .zip cannot be read: {exc}") from None
            total += len(data)
            if total > limit:
                raise TooLarge(f"the archive inflates to more than {limit} bytes; the limit is {limit}")
            files.append((entry.filename, data))
    return _unwrapped(files)


def _unwrapped(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The files without a leading ``./`` and without the one folder that holds them all."""
    names = [(name[2:] if name.startswith("./") else name, data) for name, data in files]
    tops = {name.split("/", 1)[0] for name, _ in names}
    if len(tops) == 1 and all("/" in name for name, _ in names):
        names = [(name.split("/", 1)[1], data) for name, data in names]
    return names


def _tar(files: list[tuple[str, bytes]]) -> bytes:
    """An uncompressed tar of these regular files (the names as they are: the API checks them)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()
