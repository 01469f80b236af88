"""The Dockerfile and .dockerignore, without a container engine: the stages, the user, the entry point,
the ports, and a wheel built from exactly the build context the .dockerignore leaves."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import deploykit as dk
import pytest
from packaging.requirements import Requirement

from referee.settings import Settings

PYPROJECT = tomllib.loads((dk.REPO / "pyproject.toml").read_text())


def test_two_stages_on_the_same_slim_python() -> None:
    _, stages = dk.dockerfile()
    assert [s.name for s in stages] == ["builder", "runtime"]
    # The image names a minor version; requires-python may pin a patch release within it.
    python = ".".join(PYPROJECT["project"]["requires-python"].removeprefix(">=").split(".")[:2])
    for stage in stages:
        assert stage.base.startswith(f"python:{python}-slim"), stage.base
    assert stages[0].base == stages[1].base, "the venv's interpreter path must exist in the runtime"


def test_the_builder_installs_the_server_extra_from_a_wheel() -> None:
    """The server extra for the roles, and the rl extra for submitted bots that read their view
    through an RL environment's encoding (the sandbox binds ``envs``: docs/envs.md)."""
    _, (builder, _) = dk.dockerfile()
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert "server" in extras and "rl" in extras
    run = " ".join(i.value for i in builder.all("RUN"))
    assert "pip wheel" in run and "[server,rl]" in run and "/opt/venv" in run
    # The MC bot's playouts in C (docs/sim.md) are an optional extension: without a compiler in
    # the builder the image's bot would quietly play the slower numpy batch.
    assert "gcc" in run and "libc6-dev" in run


def test_the_runtime_is_small_non_root_and_runs_sixnimmt() -> None:
    _, (_, runtime) = dk.dockerfile()
    (copy,) = runtime.all("COPY")
    assert copy.flags == {"from": "builder"} and copy.value.split() == ["/opt/venv", "/opt/venv"]
    run = " ".join(i.value for i in runtime.all("RUN"))
    for tool in ("gcc", "build-essential", "pip install"):
        assert tool not in run, f"the runtime stage installs no build tools ({tool})"
    # Two packages and only them: bubblewrap and libseccomp2 (the seccomp filter), without
    # either of which the sandbox refuses to run bots.
    installs = re.findall(r"apt-get install ([^&]*)", run)
    assert [i.split() for i in installs] == [
        ["-y", "--no-install-recommends", "bubblewrap", "libseccomp2"]
    ], installs
    assert "rm -rf /var/lib/apt/lists/*" in run
    (user,) = runtime.all("USER")
    uid, _, gid = user.value.partition(":")
    assert uid == gid == str(dk.APP_UID), "a fixed numeric uid, so runAsNonRoot can verify it"
    assert f"--uid {dk.APP_UID}" in run and f"--gid {dk.APP_UID}" in run
    (entrypoint,) = runtime.all("ENTRYPOINT")
    assert json.loads(entrypoint.value) == ["sixnimmt"]
    assert PYPROJECT["project"]["scripts"]["sixnimmt"] == "bot_sdk.cli:main"
    env = " ".join(i.value for i in runtime.all("ENV"))
    assert "PATH=/opt/venv/bin:" in env


def test_exposed_ports_are_the_services_ports() -> None:
    _, (_, runtime) = dk.dockerfile()
    (expose,) = runtime.all("EXPOSE")
    objs = dk.render("base")
    work = dk.workloads(objs)
    manifest_ports = {
        dk.container_port(work["referee"].container, "grpc"),
        dk.container_port(work["referee"].container, "metrics"),
        dk.container_port(work["worker"].container, "metrics"),
        dk.container_port(work["dashboard"].container, "http"),
    }
    assert {int(p) for p in expose.value.split()} == manifest_ports
    defaults = Settings()
    assert {defaults.referee_metrics_port, defaults.worker_metrics_port} <= manifest_ports


def test_the_worker_probe_finds_celery_in_the_image() -> None:
    """The probe runs `celery`: a console script of the celery distribution the server extra pulls in."""
    assert any(r.startswith("celery") for r in PYPROJECT["project"]["optional-dependencies"]["server"])
    (script,) = [e for e in metadata.entry_points(group="console_scripts") if e.name == "celery"]
    assert script.dist is not None and script.dist.name.lower() == "celery"


def test_the_build_context_holds_what_the_builder_copies() -> None:
    context = set(dk.build_context())
    _, (builder, _) = dk.dockerfile()
    for copy in builder.all("COPY"):
        *sources, _ = copy.value.split()
        for source in sources:
            assert source in context or any(f.startswith(source + "/") for f in context), source
    packages = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    for package in packages:
        assert f"{package.rstrip('*')}/__init__.py" in context
    assert PYPROJECT["project"]["readme"] in context
    assert not [
        f for f in context if f.startswith(("tests/", "docs/", ".git")) or f.endswith((".db", ".pyc"))
    ]


def test_a_wheel_built_from_the_context_holds_every_roles_files(tmp_path: Path) -> None:
    """What `pip wheel` in the builder stage makes, from exactly the files the context holds."""
    for requirement in map(Requirement, PYPROJECT["build-system"]["requires"]):
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed is None or installed not in requirement.specifier:
            pytest.skip(f"building offline needs {requirement} in this environment, found {installed}")
    source = tmp_path / "context"
    for relative in dk.build_context():
        target = source / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(dk.REPO / relative, target)
    wheels = tmp_path / "wheels"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "--wheel-dir", str(wheels), str(source)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (wheel,) = wheels.glob("sixnimmt_arena-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    needed = {
        "workers/sandbox/__init__.py",  # the worker runs it as the bots' bootstrap
        "workers/store/migrations/env.py",  # `league migrate`
        "dashboard/templates/base.html",
        "dashboard/static/style.css",
        "referee/server/app.py",
        "arena/cli.py",  # the platform's commands: arena, bot play, bot check
        "sixnimmt/v1/referee_pb2.py",
    }
    needed |= {
        f"workers/store/migrations/versions/{p.name}"
        for p in (dk.REPO / "workers" / "store" / "migrations" / "versions").glob("*.py")
    }
    needed |= {p.relative_to(dk.REPO).as_posix() for p in dk.REPO.glob("games/*/rules/data/*.json")}
    assert needed <= names, sorted(needed - names)
    # The C playouts, compiled by the build (this machine has a compiler, as the builder stage),
    # with their stub; the source tree's own in-place build is not in the context.
    assert "games/classic/sim/_native.pyi" in names
    assert [n for n in names if re.fullmatch(r"games/classic/sim/_native\.cpython-[^/]+\.so", n)], sorted(
        n for n in names if n.startswith("games/classic/sim/")
    )
    assert not [f for f in dk.build_context() if f.endswith(".so")]
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    for line in ("sixnimmt = bot_sdk.cli:main", "referee = ", "arena = ", "league = ", "dashboard = "):
        assert line in text
