"""A bot process's stderr goes into a capped buffer, and its exit is described: real processes."""

from __future__ import annotations

import subprocess
import sys

from arena.matches import STDERR_KEEP_BYTES, STDERR_TAIL_CHARS, BotProcess, ProcessExit


def start(code: str) -> BotProcess:
    return BotProcess(subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE))


def test_sixteen_mib_of_stderr_keep_only_the_tail_and_never_block_the_bot() -> None:
    process = start(
        "import sys\nfor _ in range(256): sys.stderr.write('x' * 65535 + '\\n')\n"
        "sys.stderr.write('the end\\n')\nsys.exit(3)"
    )
    assert process.wait(30) == 3  # a full pipe would have blocked it: the reader drains it
    assert len(process._tail) <= STDERR_KEEP_BYTES
    exit = process.exit()
    assert exit == ProcessExit(3, None, None, exit.stderr)
    assert len(exit.stderr) == STDERR_TAIL_CHARS and exit.stderr.endswith("x\nthe end\n")
    assert exit.describe() == "exited with status 3" and not exit.clean


def test_a_killed_process_names_its_signal() -> None:
    process = start("import time\ntime.sleep(60)")
    process.kill()
    process.wait(10)
    exit = process.exit()
    assert (exit.status, exit.signal, exit.limit) == (None, "SIGKILL", None)
    assert exit.describe() == "killed by SIGKILL"
