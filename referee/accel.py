"""The referee's hot path compiled with mypyc, kept apart from the sources and used only while current.

The modules in :data:`MODULES` are plain, typed Python; they are also the reference the compiled
build is held to (identical transcripts and bytes: the test suite runs against both). ``make
compiled`` (``python -m referee.accel build``) compiles them with mypyc into a directory of their
own (``SIXNIMMT_COMPILED_DIR``, by default ``sixnimmt-compiled`` in the interpreter's prefix),
never beside the sources, so an edited module is never shadowed by a stale extension of it. The
build records a digest of every source it was compiled against (:func:`source_digest`).

:func:`enable` puts a finder first on ``sys.meta_path`` that imports those modules from the build,
all of them or none: compiled modules call each other directly, so a module taken from its
source beside compiled ones would be served, inside them, by the compiled copy of the old code.
The build is used only while the digest matches the sources now; a stale or missing build leaves
the process on the pure-Python modules, with one line in the log. ``SIXNIMMT_COMPILED`` chooses:

``auto`` (default)
    the build if it is current, else the pure-Python modules;
``off``
    the pure-Python modules;
``require``
    the build, or the process stops with what to do (CI's compiled test pass uses this).

The referee process (``sixnimmt referee serve``) and the league's worker processes call
:func:`enable` before they import the driver; see docs/architecture.md ("The compiled hot path").
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from referee.settings import SettingsError, load

_log = logging.getLogger(__name__)

MODULES: tuple[str, ...] = (
    "referee.driver.clock",
    "referee.driver.links",
    "referee.driver.match",
    "referee.server.connection",
    "referee.wire",
)
"""The modules compiled, as one mypyc group."""

GROUP = "sixnimmt_compiled"
"""The name of the group's shared library (``sixnimmt_compiled__mypyc``), imported by its modules."""

SOURCE_PACKAGES: tuple[str, ...] = ("referee", "games", "sixnimmt")
"""Where the sources the build depends on live: the compiled modules and every module whose
types they were compiled against (mypy follows their imports into these)."""

MANIFEST = "manifest.json"
ROOT = Path(__file__).resolve().parent.parent
"""The directory that holds the project's packages."""


class CompiledError(SettingsError):
    """``SIXNIMMT_COMPILED=require`` and the build cannot be used; says why and what to run."""


class BuildError(RuntimeError):
    """mypyc could not build the modules; holds its error lines."""


def default_dir() -> Path:
    """Where the build lives unless ``SIXNIMMT_COMPILED_DIR`` says otherwise: it belongs to the
    interpreter (its ABI), so it sits in the interpreter's prefix (the virtual environment)."""
    return Path(sys.prefix) / "sixnimmt-compiled"


def source_digest(root: Path = ROOT) -> str:
    """A digest of every ``.py`` and ``.pyi`` file of :data:`SOURCE_PACKAGES` under ``root``
    (their paths and contents), and of the interpreter's ABI."""
    digest = hashlib.sha256(sysconfig.get_config_var("EXT_SUFFIX").encode())
    files = sorted(
        path
        for package in SOURCE_PACKAGES
        for pattern in ("*.py", "*.pyi")
        for path in (root / package).rglob(pattern)
    )
    for path in files:
        digest.update(b"\0" + str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def build(dest: Path, *, root: Path = ROOT, jobs: int | None = None) -> dict[str, Any]:
    """Compile :data:`MODULES` under ``root`` with mypyc into ``dest`` (replaced); returns the
    manifest written there: the sources' digest and each module's extension file."""
    digest = source_digest(root)
    with tempfile.TemporaryDirectory(prefix="sixnimmt-mypyc-") as tmp:
        out = Path(tmp) / "lib"
        paths = [str(root / Path(*name.split(".")).with_suffix(".py")) for name in MODULES]
        config = root / "pyproject.toml"
        if config.is_file():
            paths[:0] = ["--config-file", str(config)]  # the project's mypy settings
        # mypyc's setuptools hook in a process of its own, in a directory of its own: not the
        # sources', whose pyproject.toml setuptools would read as this build's project (and an
        # older setuptools refuse). mypy names the modules from their packages' __init__ files.
        script = (
            "import sys\n"
            "from setuptools import setup\n"
            "from mypyc.build import mypycify\n"
            f"paths, group, target = {paths!r}, {GROUP!r}, {str(Path(tmp) / 'c')!r}\n"
            "setup(name='sixnimmt-compiled', script_args=sys.argv[1:], py_modules=[],\n"
            "      ext_modules=mypycify(paths, opt_level='3', group_name=group, target_dir=target))\n"
        )
        args = ["build_ext", "--build-lib", str(out), "--build-temp", str(Path(tmp) / "o")]
        args += ["--parallel", str(jobs or os.cpu_count() or 1)]
        # Python's headers where this interpreter's prefix holds them now (a copied interpreter's
        # build-time INCLUDEPY, which an older setuptools reads, may name another directory).
        args += ["--include-dirs", sysconfig.get_paths()["include"]]
        work = Path(tmp) / "work"
        work.mkdir()
        done = subprocess.run(
            [sys.executable, "-c", script, *args], cwd=work, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            lines = [line for line in (done.stdout + done.stderr).splitlines() if "error" in line.lower()]
            raise BuildError("mypyc could not compile the referee's modules:\n" + "\n".join(lines[-30:]))
        files = {
            name: str(Path(*name.split(".")).with_suffix(sysconfig.get_config_var("EXT_SUFFIX")))
            for name in (*MODULES, f"{GROUP}__mypyc")
        }
        missing = [name for name, file in files.items() if not (out / file).is_file()]
        if missing:
            raise BuildError(f"mypyc's build lacks {', '.join(missing)}")
        if dest.exists():
            for old in sorted(dest.rglob("*"), reverse=True):
                old.unlink() if not old.is_dir() else old.rmdir()
        dest.mkdir(parents=True, exist_ok=True)
        for file in files.values():
            target = dest / file
            target.parent.mkdir(parents=True, exist_ok=True)
            (out / file).replace(target)
    manifest: dict[str, Any] = {"digest": digest, "modules": files}
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the build's modules (and its group library) in the build's directory."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(file))
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)


def _installed() -> _Finder | None:
    return next((finder for finder in sys.meta_path if isinstance(finder, _Finder)), None)


def build_dir() -> Path:
    """The build's directory: ``SIXNIMMT_COMPILED_DIR``, or :func:`default_dir`."""
    configured = load().compiled_dir
    return Path(configured) if configured else default_dir()


def _current(directory: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The manifest of the build in ``directory`` if it matches the sources, else why not."""
    try:
        manifest: dict[str, Any] = json.loads((directory / MANIFEST).read_text())
    except FileNotFoundError:
        return None, f"no build in {directory} (make compiled)"
    except (OSError, ValueError) as error:
        return None, f"its manifest {directory / MANIFEST} is unreadable ({error}; make compiled)"
    if manifest.get("digest") != source_digest():
        return None, f"the build in {directory} is older than the sources (make compiled)"
    return manifest, None


def stale(directory: Path | None = None) -> str | None:
    """Why the build in ``directory`` (by default :func:`build_dir`) does not match the sources,
    or ``None`` if it does."""
    return _current(directory or build_dir())[1]


def why_pure() -> str | None:
    """Why a process that enables the build now (``SIXNIMMT_COMPILED``) would run the
    pure-Python modules, or ``None`` if it would run the build."""
    return "SIXNIMMT_COMPILED=off" if load().compiled == "off" else stale()


def check_required() -> None:
    """Raise :class:`CompiledError` if ``SIXNIMMT_COMPILED=require`` and the build is missing or
    stale: for a parent whose child processes will call :func:`enable` (a local pool)."""
    if load().compiled == "require":
        why = stale()
        if why is not None:
            raise CompiledError(f"SIXNIMMT_COMPILED=require, but {why}")


def _from_build(module: ModuleType) -> bool:
    return str(getattr(module, "__file__", "")).endswith(sysconfig.get_config_var("EXT_SUFFIX"))


def enable(mode: str | None = None, directory: Path | None = None) -> bool:
    """Import :data:`MODULES` from the build from now on if ``mode`` (``SIXNIMMT_COMPILED``)
    and the build allow it; ``True`` if they come from the build. Call it before anything
    imports them; calling it again changes nothing."""
    mode = mode or load().compiled  # load() refuses a SIXNIMMT_COMPILED it does not know
    if mode not in ("auto", "off", "require"):
        raise ValueError(f"a mode of auto, off or require, not {mode!r}")
    if _installed() is not None:
        return True
    if mode == "off":
        return False
    directory = directory or build_dir()
    manifest, why = _current(directory)
    early = sorted(name for name in MODULES if name in sys.modules and not _from_build(sys.modules[name]))
    if why is None and early:
        why = f"{', '.join(early)} already imported from source"
    if manifest is None or why is not None:
        if mode == "require":
            raise CompiledError(f"SIXNIMMT_COMPILED=require, but {why}")
        _log.info("the referee runs its pure-Python modules: %s", why)
        return False
    files = {name: directory / file for name, file in manifest["modules"].items()}
    sys.meta_path.insert(0, _Finder(files))
    return True


def active() -> bool:
    """Whether the driver now running came from the build."""
    module = sys.modules.get(MODULES[0])
    return module is not None and _from_build(module)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m referee.accel build [--dest DIR]``: compile; ``status``: say what a process
    started now would run."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m referee.accel", description=main.__doc__)
    parser.add_argument("command", choices=("build", "status"))
    parser.add_argument("--dest", type=Path, default=None, help="the build's directory")
    args = parser.parse_args(argv)
    dest = args.dest or build_dir()
    if args.command == "build":
        try:
            manifest = build(dest)
        except BuildError as error:
            print(f"python -m referee.accel: {error}", file=sys.stderr)
            return 1
        print(f"compiled {len(MODULES)} modules into {dest} ({manifest['digest'][:12]})")
        return 0
    why = stale(dest) if args.dest else why_pure()
    print(f"compiled: {dest}" if why is None else f"pure Python: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
