"""A misbehaving "bot" for the sandbox tests: ``probe.py ACTION [ARGS]`` prints what happened as JSON.

Actions: ``cpu`` (spin, printing CPU seconds used), ``memory SMALL_MB BIG_MB``, ``write MB``,
``fill``, ``fork``, ``whereami``, ``env``, ``read PATH...``, ``connect HOST:PORT...``, ``unix PATH...``
(``@name``: an abstract socket), ``listdir PATH...``, ``files PATH [SKIP...]`` (every file visible below),
``referee``, ``daemon``, ``sleep``, ``linger``, ``status N``, ``segfault``, ``stderr``.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import sys
import tempfile
import time


def say(value: object) -> None:
    print(json.dumps(value), flush=True)


def error_name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, str(exc.errno))


def cpu() -> None:
    step = 0.05
    while True:  # killed by RLIMIT_CPU
        used = time.process_time()
        while time.process_time() - used < step:
            pass
        say(time.process_time())


def memory(small_mb: str, big_mb: str) -> None:
    result: dict[str, str] = {}
    for label, mb in (("small", small_mb), ("big", big_mb)):
        try:
            block = bytearray(int(mb) << 20)
            block[-1] = 1
            result[label] = "ok"
            del block
        except MemoryError:
            result[label] = "MemoryError"
    say(result)


def write(mb: str) -> None:
    limit = int(mb) << 20
    with open("big.bin", "wb", buffering=0) as f:
        f.write(b"x" * limit)
        try:
            f.write(b"x")
            outcome = "ok"
        except OSError as exc:
            outcome = error_name(exc)
    say({"size": os.path.getsize("big.bin"), "past_limit": outcome})


def fill() -> None:
    """Write 1 MB files into the working directory until something refuses."""
    written, outcome = 0, "no limit hit"
    for n in range(4096):
        try:
            with open(f"fill{n}.bin", "wb", buffering=0) as f:
                f.write(b"x" * (1 << 20))
            written += 1
        except OSError as exc:
            outcome = error_name(exc)
            break
    say({"written_mb": written, "then": outcome})


def fork() -> None:
    read_end, write_end = os.pipe()
    children = []
    outcome = "no limit hit"
    for _ in range(1000):
        try:
            pid = os.fork()
        except OSError as exc:
            outcome = error_name(exc)
            break
        if pid == 0:
            os.close(write_end)
            os.read(read_end, 1)  # wait until the parent lets go
            os._exit(0)
        children.append(pid)
    os.close(write_end)
    for pid in children:
        os.waitpid(pid, 0)
    say({"forked": len(children), "then": outcome})


def whereami() -> None:
    with open("mine.txt", "w") as f:
        f.write("hello")
    say(
        {
            "cwd": os.getcwd(),
            "home": os.environ.get("HOME"),
            "tmpdir": os.environ.get("TMPDIR"),
            "gettempdir": tempfile.gettempdir(),
            "listing": sorted(os.listdir(".")),
            "uid": os.getuid(),
            "pid": os.getpid(),
            "tmp": sorted(os.listdir("/tmp")),
        }
    )


def env() -> None:
    say(dict(os.environ))


def read(*paths: str) -> None:
    result = {}
    for path in paths:
        try:
            with open(path) as f:
                result[path] = f.read()
        except OSError as exc:
            result[path] = type(exc).__name__
    say(result)


def connect(*targets: str) -> None:
    result = {}
    for target in targets:
        host, port = target.rsplit(":", 1)
        try:
            with socket.create_connection((host, int(port)), timeout=2):
                result[target] = "connected"
        except OSError as exc:
            result[target] = error_name(exc) if exc.errno else type(exc).__name__
    say(result)


def unix(*paths: str) -> None:
    """Connect to each Unix socket (``@name``: abstract), trying each socket type in turn."""
    result = {}
    for path in paths:
        address = "\0" + path[1:] if path.startswith("@") else path
        outcome = "?"
        for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET, socket.SOCK_DGRAM):
            try:
                with socket.socket(socket.AF_UNIX, kind) as conn:
                    conn.settimeout(2)
                    conn.connect(address)
                    outcome = "connected"
                    break
            except OSError as exc:
                outcome = error_name(exc) if exc.errno else type(exc).__name__
                if exc.errno != errno.EPROTOTYPE:
                    break
        result[path] = outcome
    say(result)


def listdir(*paths: str) -> None:
    result: dict[str, object] = {}
    for path in paths:
        try:
            result[path] = sorted(os.listdir(path))
        except OSError as exc:
            result[path] = type(exc).__name__
    say(result)


def files(top: str, *skip: str) -> None:
    """Every regular file below ``top`` that this process can see (not through /proc, nor below
    the directories ``skip``)."""
    found = []
    pruned = {"/proc", "/sys", *skip}
    for directory, subdirs, names in os.walk(top):
        subdirs[:] = [d for d in subdirs if os.path.join(directory, d) not in pruned]
        found += [os.path.join(directory, n) for n in names]
    say(sorted(found))


def status(code: str) -> None:
    sys.exit(int(code))


def segfault() -> None:
    import ctypes

    ctypes.string_at(0)


def stderr() -> None:
    sys.stderr.write("the bot's own words\n")
    say("done")


def referee() -> None:
    """Connect to the Unix socket of $SIXNIMMT_REFEREE and say hello."""
    address = os.environ["SIXNIMMT_REFEREE"].removeprefix("unix:")
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(5)
            conn.connect(address)
            conn.sendall(b"hello")
            outcome = "connected"
    except OSError as exc:
        outcome = error_name(exc) if exc.errno else type(exc).__name__
    say({"address": address, "outcome": outcome})


def daemon() -> None:
    """Leave a detached grandchild behind, which the sandbox must not let live on."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(60)
            os._exit(0)
        os._exit(0)
    time.sleep(0.2)
    say({"uid": os.getuid()})


def linger() -> None:
    say({"uid": os.getuid(), "cwd": os.getcwd()})
    time.sleep(60)


def sleep() -> None:
    say("sleeping")
    time.sleep(60)


if __name__ == "__main__":
    action, *args = sys.argv[1:]
    globals()[action](*args)
