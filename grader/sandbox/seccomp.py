"""A seccomp filter of our own: the system calls a sandbox never needs are refused, for good.

Why a small BPF program here rather than libseccomp (through pyseccomp): the sandbox child is a
clean interpreter that may import only the standard library, and libseccomp is a system library a
student's laptop need not have; the filter is about a hundred instructions that
``prctl(PR_SET_SECCOMP)`` loads through ctypes. What it refuses (with EPERM, so a program sees an
ordinary OSError):

* creating sockets of every family (``socket``, ``socketpair``): no network, no pathname Unix
  socket of the user's own (a tmux server, a desktop bus), no abstract one, UDP included, which
  Landlock does not cover;
* reaching or changing other processes: ``ptrace``, ``process_vm_readv/writev``,
  ``process_madvise``, ``process_mrelease``, ``pidfd_getfd``, ``kcmp``, signals to a process group
  or to everything (``kill`` with a pid below 0), clearing the parent-death signal that ties the
  zygote to its warden; and the calls that change a process named by its pid unless that pid is 0
  (the caller): ``prlimit64`` (glibc's getrlimit and setrlimit pass 0), ``sched_setattr``,
  ``sched_setscheduler``, ``sched_setparam``, ``sched_setaffinity``, ``migrate_pages``,
  ``move_pages``, and ``setpriority`` and ``ioprio_set`` unless they name the calling process
  (``PRIO_PROCESS``/``IOPRIO_WHO_PROCESS`` and 0). A trusted process of the container (an
  ordinary user's reaper has the sandbox's uid) is thus out of reach of its limits and its
  scheduling; each argument is compared whole, both 32-bit halves;
* leaving the container: ``unshare``, ``setns``, ``clone`` with a namespace flag, mounts and
  ``chroot``/``pivot_root``;
* memory outside every per-process limit: ``memfd_create`` and ``memfd_secret`` (an unmapped
  memfd's pages count in no RLIMIT_AS; neither numpy nor the standard library the sandbox runs
  needs one); System V IPC (``shm*``, ``msg*``, ``sem*``, ``semtimedop``) and POSIX message
  queues (``mq_*``) unless the zygote says its container confines them (:func:`install`);
* ``seccomp(2)`` itself: the only way to a user-notification filter, whose listener could leave
  the sandbox's own calls waiting (a filter can still be added with ``prctl``, which only refuses
  more);
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
_NR, _ARCH = 0, 4              # offsets in struct seccomp_data
_PR_SET_PDEATHSIG = 1
_PRIO_PROCESS, _IOPRIO_WHO_PROCESS = 0, 1
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80

# Numbers shared by every architecture (the unified table from Linux 5.1 on).
_COMMON = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
           "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
           "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443,
           "memfd_secret": 447, "process_mrelease": 448}
_REFUSED_NAMES = ("socket", "socketpair", "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2",
                  "pivot_root", "chroot", "unshare", "setns", "bpf", "perf_event_open", "userfaultfd", "keyctl",
                  "add_key", "request_key", "kexec_load", "kexec_file_load", "init_module", "finit_module",
                  "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl", "open_by_handle_at",
                  "name_to_handle_at", "kcmp", "fanotify_init", "lookup_dcookie", "syslog", "iopl", "ioperm",
                  "memfd_create", "seccomp")
# Refused unless the container confines them (an IPC namespace of its own, under a memory limit).
_IPC_NAMES = ("shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop",
             "semctl", "semtimedop", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
             "mq_getsetattr")
# Allowed only with a first argument of 0: the calling process (or thread) itself.
_SELF_ONLY = ("prlimit64", "sched_setattr", "sched_setscheduler", "sched_setparam", "sched_setaffinity",
              "migrate_pages", "move_pages")
# machine -> (AUDIT_ARCH_*, the first number of a foreign table or None, {name: number})
_ARCHITECTURES = {
    "x86_64": (0xC000003E, 0x40000000, {
        "socket": 41, "socketpair": 53, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248, "request_key": 249,
        "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179, "open_by_handle_at": 304,
        "name_to_handle_at": 303, "kcmp": 312, "fanotify_init": 300, "lookup_dcookie": 212, "syslog": 103,
        "iopl": 172, "ioperm": 173, "memfd_create": 319, "seccomp": 317,
        "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70,
        "msgctl": 71, "semget": 64, "semop": 65, "semctl": 66, "semtimedop": 220, "mq_open": 240,
        "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
        "prlimit64": 302, "sched_setattr": 314, "sched_setscheduler": 144, "sched_setparam": 142,
        "sched_setaffinity": 203, "migrate_pages": 256, "move_pages": 279, "setpriority": 141, "ioprio_set": 251,
        "clone": 56, "clone3": 435, "prctl": 157, "kill": 62}),
    "aarch64": (0xC00000B7, None, {
        "socket": 198, "socketpair": 199, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97, "setns": 268, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217, "request_key": 218,
        "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89, "quotactl": 60, "open_by_handle_at": 265,
        "name_to_handle_at": 264, "kcmp": 272, "fanotify_init": 262, "lookup_dcookie": 18, "syslog": 116,
        "memfd_create": 279, "seccomp": 277,
        "shmget": 194, "shmat": 196, "shmctl": 195, "shmdt": 197, "msgget": 186, "msgsnd": 189, "msgrcv": 188,
        "msgctl": 187, "semget": 190, "semop": 193, "semctl": 191, "semtimedop": 192, "mq_open": 180,
        "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185,
        "prlimit64": 261, "sched_setattr": 274, "sched_setscheduler": 119, "sched_setparam": 118,
        "sched_setaffinity": 122, "migrate_pages": 238, "move_pages": 239, "setpriority": 140, "ioprio_set": 30,
        "clone": 220, "clone3": 435, "prctl": 167, "kill": 129}),
}


class SeccompError(OSError):
    pass


def supported() -> bool:
    """Whether this architecture has a filter here (the kernel may still refuse it: see install)."""
    return os.uname().machine in _ARCHITECTURES


def _argument(index: int, half: int) -> int:
    """Where a half of argument ``index`` is in struct seccomp_data (little-endian: the low half first)."""
    return 16 + 8 * index + 4 * half


def _equals(index: int, value: int) -> list[tuple]:
    """Go on when the whole 64-bit argument ``index`` is ``value``, else refuse: a check of the low
    half alone would let a value through whose high half the kernel reads too."""
    return [(_LD_ABS_W, None, None, _argument(index, 0)), (_JEQ, None, "eperm", value & 0xFFFFFFFF),
            (_LD_ABS_W, None, None, _argument(index, 1)), (_JEQ, None, "eperm", value >> 32)]


def program(machine: str | None = None, ipc: bool = False) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` (default: this one) as BPF instructions ``(code, jt, jf, k)``;
    with ``ipc``, System V IPC and POSIX message queues are let through."""
    arch, foreign, numbers = _ARCHITECTURES[machine or os.uname().machine]
    refused = sorted({numbers[name] for name in _REFUSED_NAMES + (() if ipc else _IPC_NAMES) if name in numbers}
                     | set(_COMMON.values()))
    # Symbolic jumps, resolved below: each entry is (code, true-target, false-target, k).
    code: list[tuple] = [(_LD_ABS_W, None, None, _ARCH), (_JEQ, None, "kill", arch), (_LD_ABS_W, None, None, _NR)]
    if foreign is not None:
        code.append((_JGE, "kill", None, foreign))
    code += [(_JEQ, "eperm", None, number) for number in refused]
    code += [(_JEQ, "self_only", None, numbers[name]) for name in _SELF_ONLY]
    code += [(_JEQ, "clone", None, numbers["clone"]), (_JEQ, "enosys", None, numbers["clone3"]),
             (_JEQ, "prctl", None, numbers["prctl"]), (_JEQ, "kill_pid", None, numbers["kill"]),
             (_JEQ, "setpriority", None, numbers["setpriority"]), (_JEQ, "ioprio_set", None, numbers["ioprio_set"]),
             (_RET, None, None, _RET_ALLOW)]
    allow = (_RET, None, None, _RET_ALLOW)
    # clone's flags, prctl's option and kill's pid are ints: the kernel reads their low half only.
    code += [("clone:", _LD_ABS_W, None, None, _argument(0, 0)), (_JSET, "eperm", None, _NAMESPACE_FLAGS), allow]
    code += [("prctl:", _LD_ABS_W, None, None, _argument(0, 0)), (_JEQ, "eperm", None, _PR_SET_PDEATHSIG), allow]
    code += [("kill_pid:", _LD_ABS_W, None, None, _argument(0, 0)), (_JSET, "eperm", None, 0x80000000), allow]
    code += [("self_only:", *_equals(0, 0)[0]), *_equals(0, 0)[1:], allow]
    code += [("setpriority:", *_equals(0, _PRIO_PROCESS)[0]), *_equals(0, _PRIO_PROCESS)[1:], *_equals(1, 0), allow]
    code += [("ioprio_set:", *_equals(0, _IOPRIO_WHO_PROCESS)[0]), *_equals(0, _IOPRIO_WHO_PROCESS)[1:],
             *_equals(1, 0), allow]
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


_PREPARED: dict[bool, tuple] = {}


def prepare() -> None:
    """Assemble both filters now (the warden does, once): a fresh fork then only loads one, without
    building a ctypes object (each would be a copied page there)."""
    if not _PREPARED and supported():
        libc = ctypes.CDLL(None, use_errno=True)
        for ipc in (False, True):
            instructions = program(ipc=ipc)
            data = b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions)
            buffer = ctypes.create_string_buffer(data, len(data))
            fprog = _SockFprog(len(instructions), ctypes.cast(buffer, ctypes.c_void_p))
            _PREPARED[ipc] = (buffer, fprog, ctypes.byref(fprog), libc.prctl)


def install(ipc: bool = False) -> None:
    """Load the filter into this process (and every child it will have), for good. ``ipc``: the
    container confines System V IPC and POSIX message queues (an IPC namespace of its own, whose
    objects die with it and are counted in its memory limit), so they are not refused.

    Sets no_new_privs first (a filter needs it without CAP_SYS_ADMIN). Raises
    :class:`SeccompError` when the architecture has no filter here or the kernel refuses it
    (built without CONFIG_SECCOMP_FILTER, or a container's own filter forbids prctl)."""
    if not supported():
        raise SeccompError(f"no seccomp filter for {os.uname().machine}")
    prepare()
    _, _, reference, prctl = _PREPARED[ipc]
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SeccompError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, reference, 0, 0) != 0:
        raise SeccompError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
