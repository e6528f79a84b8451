"""Landlock through ctypes: limit a process's file access, TCP and signals, for good.

Landlock (Linux >= 5.13) lets an unprivileged process restrict itself and all its future
children; no restriction can ever be lifted. We use it in the sandbox just before student code
runs: reads only beneath the Python and numpy paths we list, reads and writes only in the job
folder, no exec, no TCP bind/connect (ABI >= 4), no signals or abstract unix sockets to
processes outside the sandbox (ABI >= 6). Each ABI adds rights; we handle what the kernel knows.
Standard library only: the sandbox child imports this file by path.
"""

from __future__ import annotations

import ctypes
import os

# x86_64 and aarch64 share these numbers (the generic syscall table).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Filesystem rights, in ABI order.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # rights a rule on a file may carry

NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1            # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ = READ_FILE | READ_DIR
READ_WRITE = READ | WRITE_FILE | MAKE_REG | MAKE_DIR | REMOVE_FILE | REMOVE_DIR | TRUNCATE


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel struct is __attribute__((packed))
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


# One handle, its functions looked up now: a sandbox's fresh fork then touches no new ctypes object
# (each would be a copied page) to call them.
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall, _LIBC.prctl  # noqa: B018  (the lookups are cached on the handle)


def _libc():
    return _LIBC


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    try:
        version = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


class LandlockError(OSError):
    pass


def open_rules(paths: list[str], rights: int) -> list[tuple[int, int]]:
    """``(O_PATH descriptor, rights)`` per path that exists, rights cut to what a file can carry.
    Opening is most of a rule's cost: a process that restricts many children opens them once."""
    rules = []
    for path in paths:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a path this machine does not have
        rules.append((fd, rights if os.path.isdir(path) else rights & _FILE_ONLY))
    return rules


def close_rules(rules: list[tuple[int, int]]) -> None:
    for fd, _ in rules:
        os.close(fd)


def restrict_to(rules: list[tuple[int, int]]) -> int:
    """Restrict this process (and its future children) for good; returns the ABI used.

    ``rules`` come from :func:`open_rules` (and stay open): each path, a file or a folder
    (recursively), gets its rights (:data:`READ` or :data:`READ_WRITE`); everything else on the
    filesystem is denied, and so are exec, TCP and signals to processes outside this sandbox, as
    far as the kernel's ABI allows. Raises :class:`LandlockError` when Landlock is unavailable.
    """
    abi = abi_version()
    if abi < 1:
        raise LandlockError("Landlock is not available on this kernel")
    libc = _libc()
    handled_fs = _FS_BY_ABI.get(abi, _FS_BY_ABI[5])
    attr = _RulesetAttr(handled_fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        rule = _PathBeneathAttr()
        for fd, rights in rules:
            rule.allowed_access, rule.parent_fd = rights & handled_fs, fd
            if libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
                raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for descriptor {fd}")
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise LandlockError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi
