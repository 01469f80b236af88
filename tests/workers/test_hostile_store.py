"""Hostile stored code and names: squatting, a swapped archive, a pack race, terminal escapes.

Each attack first runs where nothing stops it (a control: the check below it can fail), then
against the platform, which must refuse it with one clear reason and record it:

- squatting: ``bot submit --name remote/alice``, ``classic/heuristic``, a reference bot's name;
- a swapped archive: another bot's code written over a version's archive in the store;
- a pack race: a listed file swapped for a symbolic link (or another file) before it is read;
- terminal escapes: a bot whose fault reason and stderr carry OSC-8 links and screen erases.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, update
from testkit import sixnimmt as run_cli

from referee.clikit.tables import printable, printable_json
from workers import league
from workers.bots import accounts, artifacts
from workers.bots.artifacts import SubmissionError, pack
from workers.play.execute import claim_and_play
from workers.play.warm import WarmPool
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import artifacts as artifacts_table
from workers.store.schema import bot_versions, bots

HOSTILE = Path(__file__).resolve().parent / "hostile_bots"
GOOD = """
from bot_sdk import ClassicBot

class Low(ClassicBot):
    def choose_card(self, view):
        return min(view.hand)
"""
SHORT = ["-o", "hands=1", "-o", "target=None"]


def render(name: str, token: str, outside: Path, into: Path) -> Path:
    """A hostile bot's file with this run's token and outside directory filled in."""
    into.mkdir(parents=True, exist_ok=True)
    source = (HOSTILE / f"{name}.py").read_text()
    path = into / f"{name}.py"
    path.write_text(source.replace("__TOKEN__", token).replace("__OUTSIDE__", str(outside)))
    return path


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def engine(url: str) -> Any:
    store = make_engine(url)
    upgrade(store)
    yield store
    store.dispose()


def cli(cwd: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(cwd, *args, env={"SIXNIMMT_DATABASE_URL": url})


def counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
            for t in (bots, bot_versions, artifacts_table)
        }


# -- squatting -------------------------------------------------------------------------------


RESERVED = ["remote/alice", "classic/heuristic", "heuristic"]
"""Through the CLI; every kind of reserved name is checked in process below."""


@pytest.mark.slow
def test_reserved_names_cannot_be_squatted_and_an_account_still_plays_as_itself(
    tmp_path: Path, url: str, engine: Engine
) -> None:
    made = cli(tmp_path, url, "bot", "account", "create", "alice")
    assert made.returncode == 0, made.stderr
    bot = tmp_path / "low.py"
    bot.write_text(GOOD)
    before = counts(engine)
    for name in RESERVED:
        done = cli(tmp_path, url, "bot", "submit", str(bot), "--name", name)
        assert done.returncode == 2, (name, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and "is reserved" in done.stderr, done.stderr
    assert counts(engine) == before
    # A league's bot file takes its file's name: one named after a reference bot is refused too.
    (tmp_path / "heuristic.py").write_text(GOOD)
    done = cli(tmp_path, url, "league", "create", "sq", "--bots", "./heuristic.py,random", "--table", "2")
    assert done.returncode == 2 and "is reserved" in done.stderr, done.stderr
    assert counts(engine) == before

    # Control: the same file under a free name is stored (the refusals above are the names').
    done = cli(tmp_path, url, "bot", "submit", str(bot), "--name", "alice-low")
    assert done.returncode == 0, done.stderr
    assert counts(engine)["bots"] == before["bots"] + 1

    # The account enters leagues as itself: its version stands for the account, with no code to run.
    done = cli(
        tmp_path, url, "league", "create", "acct", "--bots", "remote:alice,random", "--table", "2", *SHORT
    )
    assert done.returncode == 0, done.stderr
    (entrant,) = [v for v in repo.find_league(engine, "acct").entrants if v.bot == "remote/alice"]
    assert accounts.remote_account(entrant) == "alice"
    with engine.connect() as conn:
        versions = conn.execute(
            select(bot_versions.c.entry_point).join(bots).where(bots.c.name == "remote/alice")
        ).scalars()
        assert list(versions) == ["remote:alice"]


def test_an_account_never_plays_code_stored_under_its_name(engine: Engine) -> None:
    from workers.bots import entrants

    accounts.create_account(engine, "alice")
    squat = pack_text(GOOD)  # as a store written before names were reserved may hold
    squatted, _ = repo.add_bot_version(
        engine, "remote/alice", squat.content, squat.sha256, "bot.py", "classic"
    )
    assert repo.find_version(engine, "remote/alice") == squatted  # control: the newest version is the squat
    (found,) = entrants.resolve(engine, ["remote:alice"], "classic", sandbox=False)
    assert found.entry_point == "remote:alice" and found.sha256 != squatted.sha256


def test_reserved_names_follow_the_installed_games() -> None:
    from referee.rules.spec import installed_variants
    from workers.bots.submit import check_submitted_name, reserved_because

    for cls in installed_variants():
        for name in (cls.name, *cls.aliases):
            assert reserved_because(f"{name}/anything") is not None
            assert reserved_because(f"{name}-fan/anything") is None
    assert reserved_because("remote/x") and reserved_because("random") and reserved_because("lowest")
    assert reserved_because("alice") is None and reserved_because("heuristic-v2") is None
    for name in ["Remote/alice", "6nimmt/heuristic", "board/mine", "Junior/x", "MC", "highest"]:
        with pytest.raises(SubmissionError, match="is reserved"):
            check_submitted_name(name)


# -- a swapped archive -------------------------------------------------------------------------


def swap_archive(engine: Engine, version: repo.BotVersion, content: bytes) -> None:
    """What an attacker with write access to the store does: new bytes under the old sha256."""
    with engine.begin() as conn:
        conn.execute(
            update(artifacts_table).where(artifacts_table.c.sha256 == version.sha256).values(content=content)
        )


@pytest.mark.slow
@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "warm"])
def test_a_swapped_archive_fails_its_block_and_never_runs(
    tmp_path: Path, url: str, engine: Engine, warm: bool
) -> None:
    token = secrets.token_hex(6)
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = outside / f"ran-{token}"
    swapped = render("swapped", token, outside, tmp_path / "swapped")
    # Control: run, the swapped code leaves its marker.
    subprocess.run([sys.executable, str(swapped)], check=True, timeout=120, cwd=tmp_path)
    assert marker.exists()
    marker.unlink()

    honest = tmp_path / "honest.py"
    honest.write_text(GOOD)
    packed = pack(honest)
    version, _ = repo.add_bot_version(
        engine, "honest", packed.content, packed.sha256, packed.entry_point, "classic"
    )
    planned = league.create(
        engine,
        "swap",
        ["honest", "random"],
        table_size=2,
        deals=1,
        seed=1,
        config={"hands": 1, "target": None},
    )
    swap_archive(engine, version, pack(swapped).content)
    (block,) = repo.blocks_of(engine, planned.id)
    # Unconfined, so that nothing but the check of the stored code could keep the marker away.
    pool = WarmPool(max_bots=4, max_memory_mb=0, sandbox=False) if warm else None
    try:
        with pytest.raises(repo.StoredCodeError, match="stored code of honest@1 does not match its sha256"):
            claim_and_play(engine, block.id, sandbox=False, warm=pool)
    finally:
        if pool is not None:
            pool.close()
    assert not marker.exists(), "the swapped code ran"
    (failed,) = repo.blocks_of(engine, planned.id)
    assert failed.status == "failed"
    (error,) = repo.league_counts(engine, planned.id)["errors"]
    assert f"stored code of honest@1 does not match its sha256 {version.sha256[:12]}" in error["error"]

    listed = cli(tmp_path, url, "bot", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["honest"]["sha256_ok"] is False and "does not match" in rows["honest"]["problem"]
    assert all(row["sha256_ok"] for name, row in rows.items() if name != "honest")
    text = cli(tmp_path, url, "bot", "list").stdout
    assert (
        f"{version.sha256[:12]} MISMATCH" in text and "stored code changed: stored code of honest@1" in text
    )
    status = cli(tmp_path, url, "league", "status", "swap").stdout
    assert "stored code of honest@1 does not match its sha256" in status


def test_the_store_refuses_code_that_does_not_hash_to_its_sha256(engine: Engine) -> None:
    packed = pack_text(GOOD)
    with pytest.raises(repo.StoredCodeError, match="does not hash to the sha256"):
        repo.add_bot_version(engine, "liar", b"other bytes", packed.sha256, packed.entry_point, "classic")
    assert counts(engine) == {"bots": 0, "bot_versions": 0, "artifacts": 0}


def pack_text(source: str) -> artifacts.Artifact:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bot.py"
        path.write_text(source)
        return pack(path)


# -- the pack race -----------------------------------------------------------------------------


def listing_then(monkeypatch: pytest.MonkeyPatch, change: Callable[[], None]) -> None:
    """Make ``change`` happen between pack's listing of the files and its reading of them."""
    listed = artifacts._files

    def files_then_change(*args: Any) -> list[Any]:
        found = listed(*args)
        change()
        return found

    monkeypatch.setattr(artifacts, "_files", files_then_change)


def submission(root: Path) -> Path:
    (root / "lib").mkdir(parents=True)
    (root / "main.py").write_text(GOOD)
    (root / "lib" / "helper.py").write_text("X = 1\n")
    (root / "sixnimmt.json").write_text('{"entry": "main.py:Low"}')
    return root


def swap_for_link(path: Path, target: Path) -> Callable[[], None]:
    def change() -> None:
        path.unlink() if not path.is_dir() else os.rename(path, path.with_name(path.name + ".old"))
        path.symlink_to(target)

    return change


@pytest.mark.parametrize("swapped", ["main.py", "lib/helper.py", "lib"])
def test_pack_refuses_a_file_swapped_for_a_link_after_its_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped: str
) -> None:
    root = submission(tmp_path / "bot")
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    secret = secret_dir / "helper.py"
    secret.write_text("TOKEN = 'the host's secret'\n")
    target = secret_dir if swapped == "lib" else secret
    # Control: a link swapped in is followed by an ordinary read of the listed path.
    change = swap_for_link(root / swapped, target)
    change()
    assert (root / ("lib/helper.py" if swapped == "lib" else swapped)).read_text() == secret.read_text()
    root = submission(tmp_path / "bot2")
    listing_then(monkeypatch, swap_for_link(root / swapped, target))
    with pytest.raises(SubmissionError) as refused:
        pack(root)
    message = str(refused.value)
    assert "changed while the submission was packed" in message and "\n" not in message


def test_pack_refuses_a_file_replaced_by_another_after_its_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = submission(tmp_path / "bot")
    other = tmp_path / "other.py"
    other.write_text("Y = 2\n")  # as long as lib/helper.py: only the file's identity tells them apart

    def replace() -> None:
        os.replace(other, root / "lib" / "helper.py")

    listing_then(monkeypatch, replace)
    with pytest.raises(SubmissionError, match=r"lib/helper\.py changed while the submission was packed"):
        pack(root)


def test_pack_refuses_the_submitted_directory_swapped_for_a_link_after_its_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = submission(tmp_path / "bot")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "main.py").write_text("SECRET = 1\n")
    opened = artifacts._open_root

    def swap_then_open(directory: Path, *, follow: bool) -> int:
        os.rename(root, tmp_path / "bot.old")
        root.symlink_to(elsewhere)
        assert (root / "main.py").read_text() == "SECRET = 1\n"  # control: the path now leads there
        return opened(directory, follow=follow)

    monkeypatch.setattr(artifacts, "_open_root", swap_then_open)
    with pytest.raises(SubmissionError, match="a link, or no directory"):
        pack(root)


def test_pack_still_packs_what_did_not_change(tmp_path: Path) -> None:
    root = submission(tmp_path / "bot")
    packed = pack(root)
    assert packed.files == ("lib/helper.py", "main.py", "sixnimmt.json")
    assert packed.entry_point == "main.py:Low"


# -- terminal escapes --------------------------------------------------------------------------

ESCAPE = "\x1b"
HAND = "types.SimpleNamespace(hand=list(range(1, 11)))"


def test_printable_strips_escapes_controls_and_bidi_overrides() -> None:
    text = "\x1b]8;;http://evil\x07click\x1b]8;;\x07 \x1b[2J\x1b[31mred\x1b[0m \u202eevil\x9b2J\r\x00ok"
    assert printable(text) == "click red evilok"
    assert printable("a\n\tb\x1b]0;title\x1b\\c") == "a  bc"
    assert printable("a\n\tb", lines=True) == "a\n\tb"
    assert printable_json({"k\x1b[2J": ["\x1b[2Jv", 1, None]}) == {"k": ["v", 1, None]}


@pytest.mark.slow
def test_a_bots_escapes_never_reach_the_terminal(tmp_path: Path, url: str, engine: Engine) -> None:
    token = secrets.token_hex(6)
    bot = render("escapes", token, tmp_path, tmp_path / "escapes")
    # Control: unfiltered, its reason carries the escapes.
    raw = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import runpy, types; runpy.run_path({str(bot)!r})['Escapes']().choose_card({HAND})",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "\x1b]8;;http://evil\x07" in raw.stderr and "\x1b[2J" in raw.stderr

    outputs = []
    for json_flag in ([], ["--json"]):
        played = run_cli(
            tmp_path, "bot", "play", str(bot), "--against", "random", "--games", "2", *SHORT, *json_flag
        )
        assert played.returncode == 0, played.stderr
        assert f"hostile escapes {token}" in played.stdout
        outputs.append(played.stdout + played.stderr)
    checked = run_cli(tmp_path, "bot", "check", str(bot), "--games", "2", *SHORT)
    assert f"hostile escapes {token}" in checked.stdout + checked.stderr
    outputs.append(checked.stdout + checked.stderr)
    submitted = cli(tmp_path, url, "bot", "submit", str(bot), "--name", "escapes")
    assert submitted.returncode == 2 and "click" in submitted.stderr, submitted.stderr
    outputs.append(submitted.stdout + submitted.stderr)

    packed = pack(bot)
    repo.add_bot_version(engine, "esc-bot", packed.content, packed.sha256, packed.entry_point, "classic")
    made = cli(
        tmp_path,
        url,
        "league",
        "create",
        "esc",
        "--bots",
        "esc-bot,random",
        "--table",
        "2",
        "--deals",
        "1",
        *SHORT,
    )
    assert made.returncode == 0, made.stderr
    ran = cli(tmp_path, url, "league", "run", "esc", "--local", "--processes", "1")
    assert ran.returncode == 0, ran.stderr
    for json_flag in ([], ["--json"]):
        status = cli(tmp_path, url, "league", "status", "esc", *json_flag)
        assert status.returncode == 0, status.stderr
        assert f"hostile escapes {token}" in status.stdout and "click" in status.stdout
        outputs.append(status.stdout + status.stderr)
    # Recorded with its reason, escapes and all (the store keeps what happened; printing cleans it).
    details = " ".join(text for _, text in repo.fault_details(engine, repo.find_league(engine, "esc").id))
    assert f"hostile escapes {token}" in details
    for output in outputs:
        assert ESCAPE not in output and "\\u001b" not in output and "\u202e" not in output, output[-2000:]
