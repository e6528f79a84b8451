"""A seccomp filter of our own: the system calls a sandbox never needs are refused, for good.

Why a small BPF program here rather than libseccomp (through pyseccomp): the sandbox child is a
clean interpreter that may import only the standard library, and libseccomp is a system library a
student's laptop need not have; the filter is ~60 instructions that ``prctl(PR_SET_SECCOMP)``
loads through ctypes. What it refuses (with EPERM, so a program sees an ordinary OSError):

* creating sockets of every family (``socket``, ``socketpair``): no network, no pathname Unix
  socket of the user's own (a tmux server, a desktop bus), no abstract one, UDP included, which
  Landlock does not cover;
* reaching other processes: ``ptrace``, ``process_vm_readv/writev``, ``process_madvise``,
  ``pidfd_getfd``, ``kcmp``, signals to a process group or to everything (``kill`` with a pid
  below 0), clearing the parent-death signal that ties the zygote to its warden;
* leaving the container: ``unshare``, ``setns``, ``clone`` with a namespace flag, mounts and
  ``chroot``/``pivot_root``;
* the kernel's rarely used and often attacked surfaces: ``bpf``, ``perf_event_open``,
  ``userfaultfd``, io_uring (whose requests seccomp cannot see), keyrings, modules, kexec,
  reboot, swap, quotas, ``open_by_handle_at``, fanotify, ``syslog``, x86 port I/O.

``clone3`` answers ENOSYS, so the C library falls back to ``clone``, whose flags the filter can
read. A call from another architecture's table (x32 on x86-64) kills the process. Each entry is a
number from the kernel's own table, per architecture; on any other architecture there is no
filter and :func:`install` says so. Standard library only: the sandbox child imports this file by path.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_KILL_PROCESS, _RET_ERRNO, _RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06   # BPF_LD|W|ABS, BPF_JMP|..|K, BPF_RET|K
_NR, _ARCH, _ARG0 = 0, 4, 16   # offsets in struct seccomp_data (the low half of args[0]: little-endian)
_PR_SET_PDEATHSIG = 1
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80

# Numbers shared by every architecture (the unified table from Linux 5.1 on).
_COMMON = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
           "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
           "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443}
_REFUSED_NAMES = ("socket", "socketpair", "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2",
                  "pivot_root", "chroot", "unshare", "setns", "bpf", "perf_event_open", "userfaultfd", "keyctl",
                  "add_key", "request_key", "kexec_load", "kexec_file_load", "init_module", "finit_module",
                  "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl", "open_by_handle_at",
                  "name_to_handle_at", "kcmp", "fanotify_init", "lookup_dcookie", "syslog", "iopl", "ioperm")
# machine -> (AUDIT_ARCH_*, the first number of a foreign table or None, {name: number}, clone, clone3, prctl, kill)
_ARCHITECTURES = {
    "x86_64": (0xC000003E, 0x40000000, {
        "socket": 41, "socketpair": 53, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248, "request_key": 249,
        "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179, "open_by_handle_at": 304,
        "name_to_handle_at": 303, "kcmp": 312, "fanotify_init": 300, "lookup_dcookie": 212, "syslog": 103,
        "iopl": 172, "ioperm": 173}, 56, 435, 157, 62),
    "aarch64": (0xC00000B7, None, {
        "socket": 198, "socketpair": 199, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97, "setns": 268, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217, "request_key": 218,
        "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89, "quotactl": 60, "open_by_handle_at": 265,
        "name_to_handle_at": 264, "kcmp": 272, "fanotify_init": 262, "lookup_dcookie": 18, "syslog": 116},
        220, 435, 167, 129),
}


class SeccompError(OSError):
    pass


def supported() -> bool:
    """Whether this architecture has a filter here (the kernel may still refuse it: see install)."""
    return os.uname().machine in _ARCHITECTURES


def program(machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` (default: this one) as BPF instructions ``(code, jt, jf, k)``."""
    arch, foreign, numbers, clone, clone3, prctl, kill = _ARCHITECTURES[machine or os.uname().machine]
    refused = sorted({numbers[name] for name in _REFUSED_NAMES if name in numbers}
                     | set(_COMMON.values()))
    # Symbolic jumps, resolved below: each entry is (code, true-target, false-target, k).
    code: list[tuple] = [(_LD_ABS_W, None, None, _ARCH), (_JEQ, None, "kill", arch), (_LD_ABS_W, None, None, _NR)]
    if foreign is not None:
        code.append((_JGE, "kill", None, foreign))
    code += [(_JEQ, "eperm", None, number) for number in refused]
    code += [(_JEQ, "clone", None, clone), (_JEQ, "enosys", None, clone3), (_JEQ, "prctl", None, prctl),
             (_JEQ, "kill_pid", None, kill), (_RET, None, None, _RET_ALLOW)]
    allow = (_RET, None, None, _RET_ALLOW)
    code += [("clone:", _LD_ABS_W, None, None, _ARG0), (_JSET, "eperm", None, _NAMESPACE_FLAGS), allow]
    code += [("prctl:", _LD_ABS_W, None, None, _ARG0), (_JEQ, "eperm", None, _PR_SET_PDEATHSIG), allow]
    code += [("kill_pid:", _LD_ABS_W, None, None, _ARG0), (_JSET, "eperm", None, 0x80000000), allow]  # pid < 0
    code += [("eperm:", _RET, None, None, _RET_ERRNO | errno.EPERM),
             ("enosys:", _RET, None, None, _RET_ERRNO | errno.ENOSYS),
             ("kill:", _RET, None, None, _RET_KILL_PROCESS)]
    return _assemble(code)


def _assemble(code: list[tuple]) -> list[tuple[int, int, int, int]]:
    labels, plain = {}, []
    for at, entry in enumerate(code):
        if isinstance(entry[0], str):
            labels[entry[0].rstrip(":")] = at
            entry = entry[1:]
        plain.append(entry)
    out = []
    for at, (op, true, false, k) in enumerate(plain):
        jumps = [0 if target is None else labels[target] - at - 1 for target in (true, false)]
        if not all(0 <= jump <= 255 for jump in jumps):
            raise SeccompError(f"a jump of {jumps} does not fit BPF's 8 bits")
        out.append((op, jumps[0], jumps[1], k))
    return out


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PREPARED: tuple | None = None


def prepare() -> None:
    """Assemble the filter now (the warden does, once): a fresh fork then only loads it, without
    building a ctypes object (each would be a copied page there)."""
    global _PREPARED
    if _PREPARED is None and supported():
        instructions = program()
        data = b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions)
        buffer = ctypes.create_string_buffer(data, len(data))
        fprog = _SockFprog(len(instructions), ctypes.cast(buffer, ctypes.c_void_p))
        libc = ctypes.CDLL(None, use_errno=True)
        _PREPARED = (buffer, fprog, ctypes.byref(fprog), libc.prctl)


def install() -> None:
    """Load the filter into this process (and every child it will have), for good.

    Sets no_new_privs first (a filter needs it without CAP_SYS_ADMIN). Raises
    :class:`SeccompError` when the architecture has no filter here or the kernel refuses it
    (built without CONFIG_SECCOMP_FILTER, or a container's own filter forbids prctl)."""
    if not supported():
        raise SeccompError(f"no seccomp filter for {os.uname().machine}")
    prepare()
    assert _PREPARED is not None
    _, _, reference, prctl = _PREPARED
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SeccompError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, reference, 0, 0) != 0:
        raise SeccompError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
