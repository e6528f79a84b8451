"""Find and kill the processes below given ones, through /proc (Linux).

Used by the grader on the sandbox's *warden* (a trusted child subreaper: every orphan outside a
PID namespace of its own is re-parented to it, ``setsid`` or not) and on a zygote that is process
1 of its own PID namespace (every orphan in it comes to the zygote), and by the warden on itself.
Only a parent's own ``children`` lists are read: a student process may make its /proc files
unreadable, but cannot leave its ancestors' subtree.

A process is never taken for dead from its state alone: a process whose leader thread called the
raw ``exit`` system call shows ``Z`` while its other threads run on. Every child listed is killed
(a signal to a process is delivered to all its threads, a zombie ignores it), and a child counts
as gone only when none of its threads is left running. Standard library only: the sandbox child
imports this file by path.
"""

from __future__ import annotations

import os
import signal
import time


def children(pid: int, skip: frozenset[int] = frozenset()) -> list[int]:
    """Every direct child of ``pid`` but ``skip``, zombies included, from each thread's ``children`` file."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                found.extend(int(field) for field in handle.read().split())
        except OSError:
            continue
    return [child for child in dict.fromkeys(found) if child not in skip]


def running(pid: int) -> bool:
    """True while any thread of ``pid`` is not yet dead (a zombie leader's threads count)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False  # reaped
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The state follows the command name, which is in parentheses and may itself hold ') '.
        if stat[stat.rfind(b")") + 2: stat.rfind(b")") + 3] not in (b"Z", b"X"):
            return True
    return False


def kill_children(pids, keep: frozenset[int] = frozenset(), rounds: int = 400) -> int:
    """SIGKILL every child of ``pids`` (a pid or several) but ``keep``, until none is left running.
    Returns how many signals were sent; :func:`emptied` tells whether any is left.

    A killed process's own children are re-parented to the subreaper (or to process 1 of their
    PID namespace) and show up in the next round, so the loop empties the whole subtree. A
    process cannot fork once SIGKILL is pending, and RLIMIT_NPROC bounds how many exist.
    """
    roots = (pids,) if isinstance(pids, int) else tuple(pids)
    killed = 0
    for attempt in range(rounds):
        strays = [child for root in roots for child in children(root, skip=keep)]
        live = [stray for stray in strays if running(stray)]
        if not live:
            return killed
        for stray in live:
            try:
                os.kill(stray, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.0005 * min(attempt + 1, 10))  # let the kernel re-parent the orphans
    return killed


def emptied(pids, keep: frozenset[int] = frozenset()) -> bool:
    """True when no child of ``pids`` but ``keep`` is running."""
    roots = (pids,) if isinstance(pids, int) else tuple(pids)
    return not any(running(child) for root in roots for child in children(root, skip=keep))


def processes_of(uid: int, but: frozenset[int] = frozenset()) -> list[int]:
    """Every process whose real uid is ``uid`` (zombies included: they hold a slot of its process
    limit until reaped), but ``but``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in but:
            try:
                with open(f"/proc/{entry}/status", "rb") as handle:
                    status = handle.read()
            except OSError:
                continue  # gone meanwhile
            real = status.partition(b"\nUid:")[2].split(None, 1)[:1]
            if real and real[0].isdigit() and int(real[0]) == uid:
                found.append(int(entry))
    return found
