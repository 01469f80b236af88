"""Hostile: tries the system calls the sandbox's seccomp filter refuses; prints one JSON object.

``python syscalls.py`` prints ``{"call": "OK" or the errno's name}`` for each attempt (run
sandboxed by tests/workers/test_sandbox_seccomp.py, and unconfined as its control);
``python syscalls.py int80`` makes a system call through i386's ``int 0x80`` gate, and
``x32`` one through x86_64's x32 numbering: a filter for the native architecture must kill it.
Every call is made so that, allowed, it changes nothing outside the process (a new key in a
keyring of its own, a namespace it leaves at once, a mount attempt on a path that does not exist).
"""

from __future__ import annotations

import ctypes
import errno
import json
import mmap
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

NR = {  # x86_64
    "memfd_create": 319, "memfd_secret": 447, "add_key": 248, "request_key": 249, "keyctl": 250,
    "ptrace": 101, "process_vm_readv": 310, "unshare": 272, "setns": 308, "clone": 56, "clone3": 435,
    "mount": 165, "umount2": 166, "pivot_root": 155, "fsopen": 430, "open_tree": 428, "bpf": 321,
    "perf_event_open": 298, "kexec_load": 246, "init_module": 175, "finit_module": 313,
    "userfaultfd": 323, "io_uring_setup": 425, "personality": 135, "shmget": 29, "msgget": 68,
    "socket": 41, "swapon": 167, "reboot": 169, "acct": 163, "settimeofday": 164,
    "clock_settime": 227, "quotactl": 179, "name_to_handle_at": 303, "iopl": 172, "ioperm": 173,
    "syslog": 103, "pidfd_getfd": 438, "kcmp": 312, "lookup_dcookie": 212,
}  # fmt: skip
CLONE_NEWUSER, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x40000000, 17
ADDR_NO_RANDOMIZE = 0x0040000
AF_VSOCK, AF_ALG, SOCK_STREAM, SOCK_SEQPACKET = 40, 38, 1, 5
KEY_SPEC_PROCESS_KEYRING, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_GET_KEYRING_ID = -2, 1, 0
IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0


def call(name: str, *args: object) -> tuple[int, str]:
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(NR[name]), *args)
    if result == -1:
        return result, errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    return result, "OK"


def attempts() -> dict[str, str]:
    said: dict[str, str] = {}
    fd, said["memfd_create"] = call("memfd_create", b"hostile", 0)
    if fd >= 0:
        os.close(fd)
    fd, said["memfd_secret"] = call("memfd_secret", 0)
    if fd >= 0:
        os.close(fd)
    # A key in a new process keyring of its own: allowed, it would outlive nothing here.
    _, said["add_key"] = call(
        "add_key", b"user", b"sixnimmt-hostile", b"secret", 6, ctypes.c_long(KEY_SPEC_PROCESS_KEYRING)
    )
    said["keyctl"] = call("keyctl", KEYCTL_GET_KEYRING_ID, ctypes.c_long(KEY_SPEC_PROCESS_KEYRING), 1)[1]
    said["request_key"] = call("request_key", b"user", b"sixnimmt-absent", None, 0)[1]
    said["ptrace"] = call("ptrace", 16, 1, None, None)[1]  # PTRACE_ATTACH to PID 1
    said["process_vm_readv"] = call("process_vm_readv", 1, None, 0, None, 0, 0)[1]
    said["kcmp"] = call("kcmp", os.getpid(), 1, 0, 0, 0)[1]
    said["pidfd_getfd"] = call("pidfd_getfd", 0, 0, 0)[1]
    child = os.fork()
    if child == 0:  # namespaces are tried in a child, which exits at once either way
        said = {
            "unshare(CLONE_NEWUSER)": call("unshare", CLONE_NEWUSER)[1],
            "unshare(CLONE_NEWNET)": call("unshare", CLONE_NEWNET)[1],
            "setns": call("setns", 0, 0)[1],
        }
        pid, said["clone(CLONE_NEWUSER)"] = call("clone", CLONE_NEWUSER | SIGCHLD, None, None, None, None)
        if pid == 0:
            os._exit(0)
        if pid > 0:
            os.waitpid(pid, 0)
        os.write(1, (json.dumps(said) + "\n").encode())
        os._exit(0)
    os.waitpid(child, 0)
    said["clone3"] = call("clone3", None, 0)[1]
    said["mount"] = call("mount", b"none", b"/nonexistent-sixnimmt", b"tmpfs", 0, None)[1]
    said["umount2"] = call("umount2", b"/nonexistent-sixnimmt", 0)[1]
    said["pivot_root"] = call("pivot_root", b"/nonexistent-a", b"/nonexistent-b")[1]
    said["fsopen"] = call("fsopen", b"tmpfs", 0)[1]
    said["open_tree"] = call("open_tree", -100, b"/nonexistent-sixnimmt", 0)[1]
    said["bpf"] = call("bpf", 0, None, 0)[1]
    said["perf_event_open"] = call("perf_event_open", None, 0, -1, -1, 0)[1]
    said["kexec_load"] = call("kexec_load", 0, 0, None, 0)[1]
    said["init_module"] = call("init_module", None, 0, b"")[1]
    said["finit_module"] = call("finit_module", -1, b"", 0)[1]
    said["userfaultfd"] = call("userfaultfd", 0)[1]
    said["io_uring_setup"] = call("io_uring_setup", 1, None)[1]
    said["personality(ADDR_NO_RANDOMIZE)"] = call("personality", ADDR_NO_RANDOMIZE)[1]
    said["personality(0)"] = call("personality", 0)[1]
    segment, said["shmget"] = call("shmget", IPC_PRIVATE, 1 << 20, IPC_CREAT | 0o600)
    if segment >= 0:
        libc.syscall(ctypes.c_long(31), segment, IPC_RMID, None)  # shmctl
    queue, said["msgget"] = call("msgget", IPC_PRIVATE, IPC_CREAT | 0o600)
    if queue >= 0:
        libc.syscall(ctypes.c_long(71), queue, IPC_RMID, None)  # msgctl
    for label, family, kind in (
        ("socket(AF_VSOCK)", AF_VSOCK, SOCK_STREAM),
        ("socket(AF_ALG)", AF_ALG, SOCK_SEQPACKET),
    ):
        fd, said[label] = call("socket", family, kind, 0)
        if fd >= 0:
            os.close(fd)
    said["swapon"] = call("swapon", b"/nonexistent-sixnimmt", 0)[1]
    said["reboot"] = call("reboot", 0, 0, 0, None)[1]  # bad magic numbers: EINVAL if allowed
    said["acct"] = call("acct", None)[1]
    said["settimeofday"] = call("settimeofday", None, None)[1]
    said["clock_settime"] = call("clock_settime", 0, None)[1]
    said["quotactl"] = call("quotactl", 0, None, 0, None)[1]
    said["name_to_handle_at"] = call("name_to_handle_at", -100, b"/", None, None, 0)[1]
    said["iopl"] = call("iopl", 0)[1]
    said["ioperm"] = call("ioperm", 0, 0, 0)[1]
    said["syslog"] = call("syslog", 3, None, 0)[1]  # SYSLOG_ACTION_READ_ALL of nothing
    said["lookup_dcookie"] = call("lookup_dcookie", 0, None, 0)[1]
    return said


def foreign(kind: str) -> None:
    """getpid through another architecture's gate; allowed, it prints the number returned."""
    code = {
        "int80": bytes.fromhex("b814000000cd80c3"),  # mov eax, 20 (i386 getpid); int 0x80; ret
        "x32": bytes.fromhex("b8270000400f05c3"),  # mov eax, 0x40000027 (x32 getpid); syscall; ret
    }[kind]
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    function = ctypes.CFUNCTYPE(ctypes.c_long)(address)
    print(json.dumps({kind: function()}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        foreign(sys.argv[1])
    else:
        print(json.dumps(attempts()), flush=True)  # after the namespace child's own line
