"""The system calls a sandboxed bot may not make: one seccomp filter, built once per process.

Every bot runs under this filter (``bwrap --seccomp FD``, :mod:`workers.sandbox`), from the
shell that is PID 1 of its namespace down to every process it starts. It allows by default and
refuses what a bot never needs and what widens the kernel surface or escapes the other limits:
Docker's default deny list (moby's ``profiles/seccomp``) and the calls issue 29 named:

- memory no limit counts: ``memfd_create``, ``memfd_secret``, SysV shared memory and message
  queues (``shmget``, ``msgget``: the bot's IPC namespace is private, so nothing else exists to
  attach to);
- other processes and the kernel's keys: ``ptrace``, ``process_vm_*``, ``kcmp``, ``pidfd_getfd``,
  the keyring calls (``add_key``, ``request_key``, ``keyctl``: a key would outlive the bot);
- new namespaces: ``unshare``, ``setns``, ``clone`` with a namespace flag (``clone3`` reports
  ENOSYS, so that glibc falls back to ``clone``, whose flags the filter can read);
- mounts, modules, kexec, BPF, perf, swap, reboot, clocks, quotas, accounting, file handles,
  port I/O, ``io_uring``, ``userfaultfd``, ``personality`` flags that weaken the address-space
  layout, sockets of families other than Unix, IPv4, IPv6 and netlink (``AF_VSOCK`` reaches a
  virtual machine's host; ``AF_ALG`` and the rest are kernel surface a bot does not need).

Refused calls fail with EPERM (a program sees "operation not permitted", no signal). System
calls that this libseccomp does not know by name (newer than it) fail with ENOSYS, as on an older
kernel, so that a call added to the kernel later is not allowed unreviewed. A system call of
another architecture (i386's ``int 0x80``, x32 on x86_64) kills the process (SIGSYS).

Building needs ``libseccomp`` (``libseccomp.so.2``) and its ctypes binding ``pyseccomp`` (the
``server`` extra); without them :func:`filter_bpf` raises :class:`SeccompUnavailable`, and the
sandbox refuses to start rather than run a bot without the filter.
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile
from typing import Any

DENIED = (
    # memory outside every limit
    "memfd_create", "memfd_secret", "shmget", "msgget",
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd",
    "move_pages", "migrate_pages", "mbind", "set_mempolicy", "get_mempolicy", "set_mempolicy_home_node",
    # the kernel's keyrings
    "add_key", "request_key", "keyctl",
    # namespaces
    "unshare", "setns",
    # mounts and file systems
    "mount", "umount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick",
    "open_tree", "move_mount", "mount_setattr", "quotactl", "quotactl_fd", "swapon", "swapoff",
    "name_to_handle_at", "open_by_handle_at", "lookup_dcookie", "nfsservctl", "sysfs", "ustat",
    "fanotify_init",
    # the kernel itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "create_module",
    "get_kernel_syms", "query_module", "bpf", "perf_event_open", "reboot", "acct", "syslog",
    "_sysctl", "uselib", "vhangup", "iopl", "ioperm", "vm86", "vm86old",
    # clocks
    "settimeofday", "stime", "clock_settime", "clock_adjtime", "adjtimex",
    # kernel surface a bot does not need
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
)  # fmt: skip
"""Refused with EPERM whatever their arguments."""

NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
"""``clone`` flags refused (CLONE_NEWTIME is 0x80, which ``clone`` reads as the exit signal)."""

PERSONALITY_FLAGS = (
    0x0040000,  # ADDR_NO_RANDOMIZE
    0x0100000,  # MMAP_PAGE_ZERO
    0x0200000,  # ADDR_COMPAT_LAYOUT
    0x0400000,  # READ_IMPLIES_EXEC
    0x0800000,  # ADDR_LIMIT_32BIT
    0x8000000,  # ADDR_LIMIT_3GB
)
"""``personality`` flags refused: each weakens the address-space layout of what the bot runs next."""

SOCKET_FAMILIES = (1, 2, 10, 16)
"""AF_UNIX, AF_INET, AF_INET6 (the bot's network namespace has only a loopback), AF_NETLINK."""
AF_MAX = 64
"""Families at or above this are refused as a range; below, one by one."""
SYSCALL_NUMBERS = 1024
"""Numbers below this that libseccomp does not name fail with ENOSYS."""


class SeccompUnavailable(RuntimeError):
    """libseccomp or its Python binding is missing: no filter can be built here."""


@functools.cache
def filter_bpf() -> bytes:
    """The filter as a BPF program for ``bwrap --seccomp``, built once per process (a few ms)."""
    seccomp = _binding()
    flt = seccomp.SyscallFilter(seccomp.ALLOW)
    flt.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    with _suppress_unsupported():
        flt.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)  # a binary tree: every allowed call stays cheap
    eperm, enosys = seccomp.ERRNO(errno.EPERM), seccomp.ERRNO(errno.ENOSYS)
    known = set()
    for number in range(SYSCALL_NUMBERS):
        try:
            known.add(seccomp.resolve_syscall(seccomp.Arch.NATIVE, number))
        except ValueError:
            flt.add_rule(enosys, number)
    for name in DENIED:
        if name.encode() in known:  # an architecture's own calls (iopl, vm86) exist only there
            flt.add_rule(eperm, name)
    flt.add_rule(enosys, "clone3")
    for flag in NAMESPACE_FLAGS:
        flt.add_rule(eperm, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    for flag in PERSONALITY_FLAGS:
        flt.add_rule(eperm, "personality", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    unsupported = seccomp.ERRNO(errno.EAFNOSUPPORT)
    for family in range(AF_MAX):
        if family not in SOCKET_FAMILIES:
            flt.add_rule(unsupported, "socket", seccomp.Arg(0, seccomp.EQ, family))
    flt.add_rule(unsupported, "socket", seccomp.Arg(0, seccomp.GE, AF_MAX))
    with tempfile.TemporaryFile() as out:
        flt.export_bpf(out)
        out.seek(0)
        return out.read()


def filter_fd() -> int:
    """A new file descriptor to read the filter from (inheritable, at offset 0), for one bwrap."""
    program = filter_bpf()
    fd = os.memfd_create("sixnimmt-seccomp", 0)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _binding() -> Any:
    try:
        # The server extra's binding: optional, so that the module imports where it is missing and
        # the sandbox can say why it refuses to start.
        import pyseccomp  # type: ignore[import-untyped]
    except ImportError as exc:
        raise SeccompUnavailable(
            f"the seccomp binding is not installed ({exc}): pip install pyseccomp (the server extra)"
        ) from None
    except (OSError, RuntimeError) as exc:  # pyseccomp raises RuntimeError without libseccomp.so
        raise SeccompUnavailable(
            f"libseccomp cannot be loaded ({exc}): apt-get install libseccomp2"
        ) from None
    return pyseccomp


class _suppress_unsupported:
    """Ignore an attribute an older libseccomp does not have (the filter is the same, only slower)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: object, tb: object) -> bool:
        return isinstance(exc, OSError) and exc.errno in (errno.EINVAL, errno.EOPNOTSUPP)
