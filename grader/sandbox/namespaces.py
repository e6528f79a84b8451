"""Fresh Linux namespaces for one zygote, through ctypes (Python 3.11 has no ``os.unshare``).

The warden (as root; for an ordinary user, a fork of it, the keeper) calls :func:`enter`, then forks
the reaper, process 1 of the new PID namespace, and the zygote, process 2: when the reaper dies the
kernel kills every process of that namespace, whatever state they are in, and no process in it can
see or signal one outside. The warden then goes back home (:func:`leave`). The network namespace
holds only a loopback interface that is down: no route to the machine's own loopback, nor anywhere
else. The IPC namespace holds the container's System V objects and POSIX message queues: none
outside is visible in it, and they are removed with it (see ``ipc.py``). The zygote itself then
makes a mount namespace in which its job folder is a tmpfs of its own, bounded in bytes and in
files (:func:`private_folder`), freed with the container. As root these come directly; an ordinary
user gets them inside a new user namespace (where the kernel allows unprivileged ones), which also
gives the sandbox its own count of processes for RLIMIT_NPROC. Whatever the kernel refuses is
left out, and the zygote reports what it got. Standard library only: the sandbox child imports
this file by path.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
# In the order a result's isolation lists them.
NAMES = {CLONE_NEWPID: "pid-namespace", CLONE_NEWNET: "net-namespace", CLONE_NEWIPC: "ipc-namespace",
         CLONE_NEWNS: "mount-namespace", CLONE_NEWUSER: "user-namespace"}
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
_CAPSET = {"x86_64": 126, "aarch64": 91}
_CAPABILITY_VERSION_3 = 0x20080522


_LIBC = ctypes.CDLL(None, use_errno=True)  # one handle, functions looked up now (see landlock.py)
_LIBC.unshare, _LIBC.setns, _LIBC.syscall, _LIBC.mount  # noqa: B018


def _libc():
    return _LIBC


def enter(as_root: bool, network: int | None = None) -> list[str]:
    """Move this process into new namespaces (its next child is PID 1 of the new PID namespace; the
    IPC one, like the network and user ones, holds this process itself until :func:`leave`);
    returns the names of those it got, in NAMES' order, possibly none. As root, ``network`` (from
    :func:`empty_network`) is the network namespace to join instead of making one."""
    libc = _libc()
    if as_root and network is not None:
        got = next((flags for flags in (CLONE_NEWPID | CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWIPC)
                    if libc.unshare(flags) == 0), 0)
        if libc.setns(network, CLONE_NEWNET) == 0:
            got |= CLONE_NEWNET
        return names(got)
    wanted = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | (0 if as_root else CLONE_NEWUSER)
    uid, gid = os.getuid(), os.getgid()
    # The strongest set first; each weaker one leaves out what a kernel may lack or refuse alone.
    for flags in (wanted, wanted & ~CLONE_NEWIPC, wanted & ~CLONE_NEWNET, wanted & ~CLONE_NEWPID,
                  wanted & ~CLONE_NEWNET & ~CLONE_NEWIPC, wanted & ~CLONE_NEWPID & ~CLONE_NEWIPC):
        if libc.unshare(flags) != 0:
            continue
        if flags & CLONE_NEWUSER:
            _map_ids(uid, gid)
        return names(flags)
    return []


def names(flags: int) -> list[str]:
    """The names of the namespaces in ``flags``, in the order a result's isolation lists them."""
    return [name for flag, name in NAMES.items() if flags & flag]


def private_folder(path: str, size_bytes: int, files: int, owner: int | None = None) -> bool:
    """(The zygote, before it isolates itself.) Give this process a mount namespace of its own in
    which ``path`` is a fresh tmpfs of at most ``size_bytes`` and ``files`` inodes, owned by
    ``owner`` (its uid and gid; default: this process's), no exec, no device, no setuid. The
    folder on the machine stays empty; the tmpfs lives as long as a process of this namespace
    does, so the kernel frees it with the container, whatever it holds, and the grader only
    removes an empty folder. Nothing
    mounted here reaches the machine: every mount is made private first. False (and the folder on
    the machine is used as it is) where the kernel refuses."""
    libc = _libc()
    if libc.unshare(CLONE_NEWNS) != 0:
        return False
    # Without this a mount on a shared mount (systemd makes / shared) would propagate to the machine.
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False
    options = f"size={size_bytes},nr_inodes={files},mode=0700"
    if owner is not None:
        options += f",uid={owner},gid={owner}"
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    return libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs", flags, options.encode()) == 0


def _map_ids(uid: int, gid: int) -> None:
    """Inside the new user namespace the user keeps its own ids (and nothing else is mapped). A
    process may always write its own maps right after unshare; failing that, it would be nobody,
    unable to read its own job folder, so this raises rather than carry on."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(text)


def drop_capabilities() -> None:
    """Empty this process's capability sets. The creator of a user namespace holds every capability
    inside it, and a uid change that involves no uid 0 does not clear them: capset does."""
    number = _CAPSET.get(os.uname().machine)
    if number is None:
        raise OSError(f"capset is not known on {os.uname().machine}")
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable, twice (64 capability bits)
    libc = _libc()
    if libc.syscall(number, header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def empty_network(home: dict[int, int]) -> int | None:
    """(root) A network namespace of this process's own, holding only a loopback that is down, for
    its zygotes to join one after the other: making one per zygote cost each ~1 ms, and as much
    again to the kernel to tear it down. Sharing it is safe because its zygotes come one at a time,
    each container is empty before the next starts, and none of them may change it (that needs
    CAP_NET_ADMIN, and the sandbox has no capability). None where the kernel refuses."""
    libc = _libc()
    if libc.unshare(CLONE_NEWNET) != 0:
        return None
    network = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    if libc.setns(home[CLONE_NEWNET], CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns back to this process's own network namespace failed")
    return network


def home() -> dict[int, int]:
    """Descriptors of this process's own PID, network and IPC namespaces, to come back to (root only)."""
    own = {}
    for flag, name in ((CLONE_NEWPID, "pid"), (CLONE_NEWNET, "net"), (CLONE_NEWIPC, "ipc")):
        try:
            own[flag] = current(name)
        except FileNotFoundError:  # a kernel built without that kind of namespace: none to leave
            pass
    return own


def current(name: str) -> int:
    """A descriptor of the namespace ``name`` ("ipc") this process is in now."""
    return os.open(f"/proc/self/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)


def leave(home: dict[int, int]) -> None:
    """Back to the namespaces of :func:`home` after :func:`enter` (the fork in between stays in the
    new ones). Raises when the kernel refuses: a process stuck in them cannot serve the next zygote."""
    libc = _libc()
    for flag, fd in home.items():
        if libc.setns(fd, flag) != 0:
            raise OSError(ctypes.get_errno(), f"setns back to this process's own namespace ({NAMES[flag]}) failed")
