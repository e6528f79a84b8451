"""System V IPC objects of a container: counted and removed before the container counts as empty.

Shared memory segments, message queues and semaphore sets outlive every process that made them:
a detached segment holds its memory with no process attached, and a queue keeps what was sent to
it for whoever opens it next. So a container is empty only when none of its objects is left:

* in an IPC namespace of its own (``namespaces.py``), every object in that namespace is the
  container's, and no object outside is visible in it. The trusted side (the warden, entering the
  namespace through a descriptor it kept; an ordinary user's keeper, which lives in it) removes
  each one once the container's processes are gone, then counts again: the memory is freed at
  once, not whenever the kernel's deferred teardown of the namespace gets to it;
* without one (as root in Docker, say), the sandbox uid is the container: the objects it owns or
  made in the machine's namespace are removed (seccomp refuses the calls there, so there are none
  unless seccomp is missing too);
* POSIX message queues cannot be made at all (RLIMIT_MSGQUEUE is 0 in the sandbox, see
  ``zygote.py``), so there is none to count.

Objects are read from ``/proc/sysvipc`` (what ``ipcs`` shows), which lists those of the reading
process's IPC namespace. Standard library only: the sandbox child imports this file by path.
"""

from __future__ import annotations

import ctypes

_CLONE_NEWIPC = 0x08000000
_IPC_RMID = 0
_KINDS = ("shm", "msg", "sem")

_LIBC = ctypes.CDLL(None, use_errno=True)  # one handle, functions looked up now (see landlock.py)
_LIBC.shmctl, _LIBC.msgctl, _LIBC.semctl, _LIBC.setns  # noqa: B018


def objects(owner: int | None = None) -> list[tuple[str, int]]:
    """``(kind, id)`` of every object in this process's IPC namespace; with ``owner``, only those
    that uid owns or made."""
    found = []
    for kind in _KINDS:
        try:
            with open(f"/proc/sysvipc/{kind}", "rb") as handle:
                header, *rows = handle.read().splitlines()
        except (OSError, ValueError):  # no System V IPC in this kernel
            continue
        columns = header.split()
        uid, creator = columns.index(b"uid"), columns.index(b"cuid")
        for row in rows:
            fields = row.split()
            if owner is None or owner in (int(fields[uid]), int(fields[creator])):
                found.append((kind, int(fields[1])))  # the second column is the id (shmid, msqid, semid)
    return found


def clear(owner: int | None = None) -> bool:
    """Remove every object of this IPC namespace (with ``owner``: that uid's); True when none is left."""
    found = objects(owner)
    if not found:
        return True
    for kind, ident in found:
        if kind == "shm":
            _LIBC.shmctl(ident, _IPC_RMID, None)
        elif kind == "msg":
            _LIBC.msgctl(ident, _IPC_RMID, None)
        else:
            _LIBC.semctl(ident, 0, _IPC_RMID)
    # A segment still attached somewhere would stay listed: then the container is not empty.
    return not objects(owner)


def clear_namespace(namespace: int, home: int) -> bool:
    """:func:`clear` in the IPC namespace ``namespace`` (a descriptor), from outside it: entered,
    cleared, left for ``home``. False when it cannot be entered; raises when this process cannot
    get back home (it would serve the next container from the wrong namespace)."""
    if _LIBC.setns(namespace, _CLONE_NEWIPC) != 0:
        return False
    try:
        return clear()
    finally:
        if _LIBC.setns(home, _CLONE_NEWIPC) != 0:
            raise OSError(ctypes.get_errno(), "setns back to this process's own IPC namespace failed")

