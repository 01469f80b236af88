"""Command bots' interpreters under the sandbox: found on the worker, only what they need bound.

Python, Node, Java (with its sizes given under ``RLIMIT_AS``) and the shell start sandboxed and
run a thread; an interpreter installed outside ``/usr`` gets its own install tree, read-only,
and nothing beside it; a wrapper script on ``PATH`` (a pyenv shim) is passed over for the
program behind it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from workers.sandbox import SAFE_PATH, Limits, Sandbox, _interpreter

JAVA_SIZES = [
    "-Xmx128m", "-XX:MaxMetaspaceSize=96m", "-XX:CompressedClassSpaceSize=32m",
    "-XX:ReservedCodeCacheSize=32m", "-Xss512k",
]  # fmt: skip
HELLO_JAVA = """\
    public class Hello {
        public static void main(String[] args) throws Exception {
            Thread worker = new Thread(() -> System.out.println("a thread"));
            worker.start();
            worker.join();
            System.out.println("java " + System.getProperty("java.version").split("[.]")[0]);
        }
    }
"""


def run(root: Path, directory: Path, argv: list[str]) -> tuple[int, str, str]:
    with Sandbox(Limits(), root.parent, bots_in=[root], stdout=subprocess.PIPE) as sandbox:
        process = sandbox(argv, {}, stderr=subprocess.PIPE, cwd=directory)
        out, err = process.communicate(timeout=120)
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
def bot(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "bots"
    directory = root / "polyglot"
    directory.mkdir(parents=True)
    (directory / "Hello.java").write_text(textwrap.dedent(HELLO_JAVA))
    return root, directory


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            [
                "python3",
                "-c",
                "import threading; t = threading.Thread(target=print, args=('py',)); t.start()",
            ],
            "py",
        ),
        (["node", "-e", "new Promise(r => setTimeout(r, 1)).then(() => console.log('node'))"], "node"),
        (["sh", "-c", "echo sh"], "sh"),
    ],
    ids=["python3", "node", "sh"],
)
def test_an_interpreter_runs_sandboxed(bot: tuple[Path, Path], argv: list[str], said: str) -> None:
    code, out, err = run(*bot, argv)
    assert (code, out.strip()) == (0, said), err


@pytest.mark.slow
def test_java_runs_sandboxed_with_its_sizes_given(bot: tuple[Path, Path]) -> None:
    """Debian's JDK reads its configuration through links into /etc/java-*: those are bound."""
    if shutil.which("java") is None:
        pytest.fail("java is not installed (apt-get install openjdk-17-jre-headless)")
    code, out, err = run(*bot, ["java", *JAVA_SIZES, "Hello.java"])
    assert code == 0, err
    assert out.splitlines()[0] == "a thread" and out.splitlines()[1].startswith("java ")


def test_an_interpreter_outside_usr_gets_its_tree_and_nothing_beside(
    bot: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "opt" / "fakelang"
    (tree / "bin").mkdir(parents=True)
    (tree / "lib").mkdir()
    (tree / "lib" / "runtime.txt").write_text("the runtime\n")
    (tmp_path / "opt" / "beside.txt").write_text("not the interpreter's\n")
    shutil.copy(os.path.realpath("/bin/sh"), tree / "bin" / "dash")
    shim = tmp_path / "shims"
    shim.mkdir()
    (shim / "dash").write_text('#!/bin/sh\nexec /nonexistent "$@"\n')  # a wrapper script: passed over
    (shim / "dash").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}:{tree / 'bin'}:{os.environ['PATH']}")
    assert _interpreter("dash", f"{shim}:{tree / 'bin'}:{SAFE_PATH}") == (
        str(tree / "bin" / "dash"),
        (str(tree),),
    )
    script = f"cat {tree}/lib/runtime.txt; test -e {tmp_path}/opt/beside.txt || echo 'nothing beside'"
    code, out, err = run(*bot, ["dash", "-c", script])
    assert code == 0, err
    assert out.splitlines() == ["the runtime", "nothing beside"]
