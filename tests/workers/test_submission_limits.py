"""Submission limits and names: each bad case refused with one clear line, nothing stored or written.

Packing (``bot submit``) and unpacking (every block: a stored artifact is untrusted too) check the
same :class:`~workers.bots.artifacts.SubmissionLimits`; bot and league names go through
``repo.check_name`` in the store layer. Real files, real tar archives, a real SQLite store.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from referee.settings import load as load_settings
from workers import league
from workers.bots.artifacts import SubmissionError, SubmissionLimits, pack, unpack
from workers.bots.submit import submit
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import artifacts, bot_versions, bots, leagues

GOOD = (
    "from bot_sdk import ClassicBot\n\n\nclass Low(ClassicBot):\n"
    "    def choose_card(self, view):\n        return min(view.hand)\n"
)
LIMITS = SubmissionLimits(max_bytes=4096, max_files=8, max_path=40)


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    store = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(store)
    return store


def stored(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
            for t in (bots, bot_versions, artifacts, leagues)
        }


def bot_dir(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    root = tmp_path / "bot"
    root.mkdir()
    (root / "main.py").write_text(GOOD)
    (root / "sixnimmt.json").write_text('{"entry": "main.py:Low"}')
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


# -- packing -----------------------------------------------------------------------------------


def test_twenty_thousand_files_are_refused_and_nothing_is_stored(engine: Engine, tmp_path: Path) -> None:
    root = bot_dir(tmp_path)
    data = root / "data"
    data.mkdir()
    for n in range(20_000):
        (data / f"f{n}.txt").touch()
    limit = load_settings().submit_max_files
    with pytest.raises(SubmissionError, match=f"more than {limit} files; the limit is {limit}"):
        submit(engine, root, "many", games=1, sandbox=False)
    assert stored(engine) == {"bots": 0, "bot_versions": 0, "artifacts": 0, "leagues": 0}


def test_the_file_limit_is_a_setting(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = bot_dir(tmp_path, {"a.py": "", "b.py": ""})  # four files with the manifest
    monkeypatch.setenv("SIXNIMMT_SUBMIT_MAX_FILES", "3")
    with pytest.raises(SubmissionError, match="more than 3 files"):
        submit(engine, root, "four", games=1, sandbox=False)
    assert stored(engine)["artifacts"] == 0
    monkeypatch.setenv("SIXNIMMT_SUBMIT_MAX_FILES", "4")
    assert len(pack(root).files) == 4


def _symlinked_file(root: Path) -> None:
    (root / "link.py").symlink_to(root / "main.py")


def _symlinked_dir(root: Path) -> None:
    (root / "etc").symlink_to("/etc")


def _dangling(root: Path) -> None:
    (root / "gone.py").symlink_to(root / "nowhere")


def _hardlink(root: Path) -> None:
    os.link(root / "main.py", root / "again.py")


def _fifo(root: Path) -> None:
    os.mkfifo(root / "pipe")


def _device(root: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root makes device files")
    os.mknod(root / "null", 0o600 | 0o020000, os.makedev(1, 3))  # S_IFCHR: /dev/null's numbers


def _bad_characters(root: Path) -> None:
    (root / "my bot.py").write_text("")


def _non_ascii(root: Path) -> None:
    (root / "bøt.py").write_text("")


def _long_path(root: Path) -> None:
    deep = root / ("d" * 50) / ("e" * 50) / ("f" * 50)
    deep.mkdir(parents=True)
    (deep / "x.py").write_text("")


def _too_big(root: Path) -> None:
    (root / "blob.bin").write_bytes(b"x" * (2 << 20))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_symlinked_file, "link.py is a symbolic link"),
        (_symlinked_dir, "etc is a symbolic link"),
        (_dangling, "gone.py is a symbolic link"),
        (_hardlink, r"is a hard link \(2 names\)"),
        (_fifo, "pipe is not a regular file"),
        (_device, "null is not a regular file"),
        (_bad_characters, "unsafe path 'my bot.py'"),
        (_non_ascii, "unsafe path 'bøt.py'"),
        (_long_path, "is 157 characters; at most 100"),
        (_too_big, "the limit is 1000000"),
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else None,
)
def test_bad_directories_are_refused_and_nothing_is_stored(
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make: Callable[[Path], None],
    message: str,
) -> None:
    monkeypatch.setenv("SIXNIMMT_SUBMIT_MAX_PATH", "100")
    monkeypatch.setenv("SIXNIMMT_BOT_MAX_BYTES", "1000000")
    root = bot_dir(tmp_path)
    make(root)
    with pytest.raises(SubmissionError, match=message) as refused:
        submit(engine, root, "bad", games=1, sandbox=False)
    assert "\n" not in str(refused.value)
    assert stored(engine)["artifacts"] == 0


def test_a_symlinked_bot_file_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_text(GOOD)
    (tmp_path / "bot.py").symlink_to(real)
    with pytest.raises(SubmissionError, match="symbolic link"):
        pack(tmp_path / "bot.py", limits=LIMITS)


# -- unpacking: a stored artifact is untrusted ----------------------------------------------------


def tar_of(*members: tuple[tarfile.TarInfo, bytes], mode: str = "w") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:  # type: ignore[call-overload]
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return buffer.getvalue()


def entry(
    name: str, data: bytes = b"x", kind: bytes = tarfile.REGTYPE, link: str = ""
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, len(data) if kind == tarfile.REGTYPE else 0, link
    return info, data


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (tar_of(entry("/etc/cron.d/x")), "unsafe entry '/etc/cron.d/x'"),
        (tar_of(entry("../../escape.py")), "unsafe entry '../../escape.py'"),
        (tar_of(entry("a/../../b.py")), "unsafe entry"),
        (tar_of(entry("link", kind=tarfile.SYMTYPE, link="/etc/passwd")), "not a regular file"),
        (tar_of(entry("main.py"), entry("hard", kind=tarfile.LNKTYPE, link="main.py")), "not a regular file"),
        (tar_of(entry("dev", kind=tarfile.CHRTYPE)), "not a regular file"),
        (tar_of(entry("fifo", kind=tarfile.FIFOTYPE)), "not a regular file"),
        (tar_of(entry("dir", kind=tarfile.DIRTYPE)), "not a regular file"),
        (tar_of(*(entry(f"f{n}.py") for n in range(9))), "more than 8 files"),
        (tar_of(entry("a.py", b"x" * 3000), entry("b.py", b"x" * 3000)), "more than 4096 bytes"),
        (tar_of(entry("a.py"), entry("a.py")), "'a.py' twice"),
        (tar_of(entry("x" * 41)), "at most 40"),
        (tar_of(entry("bad name.py")), "unsafe path"),
        (tar_of(entry("main.py"), mode="w:gz"), "not a bot archive"),
        (b"not a tar at all" * 100, "not a bot archive"),
    ],
    # Test ids from the case's number, never from the archive's bytes (a gzip header holds a time,
    # and parallel workers must collect the same ids).
    ids=lambda value: None if isinstance(value, str) else "archive",
)
def test_bad_artifacts_are_refused_before_anything_is_written(
    tmp_path: Path, content: bytes, message: str
) -> None:
    dest = tmp_path / "bot0"
    with pytest.raises(SubmissionError, match=message) as refused:
        unpack(content, dest, limits=LIMITS)
    assert "\n" not in str(refused.value)
    assert not dest.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_what_pack_makes_unpacks(tmp_path: Path) -> None:
    root = bot_dir(tmp_path, {"lib/helpers.py": "X = 1\n"})
    artifact = pack(root, limits=LIMITS)
    unpack(artifact.content, tmp_path / "out", limits=LIMITS)
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.py")) == [
        "lib/helpers.py",
        "main.py",
    ]


# -- names -------------------------------------------------------------------------------------


BAD_BOT_NAMES = ["no spaces please", "../escape", "/abs", "a//b", "trailing/", "at@1", "-dash", "x" * 101, "",
                 "ünicode", "new\nline", "tab\t", "semi;colon", "$(id)"]  # fmt: skip


X_SHA256 = hashlib.sha256(b"x").hexdigest()


@pytest.mark.parametrize("name", BAD_BOT_NAMES)
def test_bad_bot_names_are_refused_by_the_store(engine: Engine, name: str) -> None:
    with pytest.raises(repo.BadNameError) as refused:
        repo.add_bot_version(engine, name, b"x", X_SHA256, "main.py", "classic")
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 200
    assert stored(engine) == {"bots": 0, "bot_versions": 0, "artifacts": 0, "leagues": 0}


@pytest.mark.parametrize("name", ["low", "junior-basic/random", "team.alpha_2", "v1.2+fast"])
def test_good_bot_names_are_stored(engine: Engine, name: str) -> None:
    version, created = repo.add_bot_version(engine, name, b"x", X_SHA256, "main.py", "classic")
    assert created and version.bot == name


@pytest.mark.parametrize("name", ["cup 2026", "../x", "", "x" * 101, "a\nb", "<script>"])
def test_bad_league_names_are_refused_and_no_league_is_stored(engine: Engine, name: str) -> None:
    with pytest.raises(repo.BadNameError, match="league"):
        league.create(engine, name, ["random", "lowest", "highest"], table_size=2, deals=1, seed=1)
    assert stored(engine) == {"bots": 0, "bot_versions": 0, "artifacts": 0, "leagues": 0}


def test_a_league_name_may_name_bot_versions(engine: Engine) -> None:
    league.create(engine, "test-low@2-vs-low@1", ["random", "lowest"], table_size=2, deals=1, seed=1)
    assert stored(engine)["leagues"] == 1


def test_the_command_line_says_one_line(tmp_path: Path) -> None:
    path = tmp_path / "low.py"
    path.write_text(GOOD)
    env = {**os.environ, "SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}
    done = subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", "bot", "submit", str(path), "--name", "../../etc"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "bad bot name '../../etc'" in done.stderr
