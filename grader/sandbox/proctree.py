"""Find and kill the processes below a given one, through /proc (Linux).

Used by the grader on the sandbox's *warden* (a trusted child subreaper: every orphan of the
sandbox is re-parented to it, ``setsid`` or not), and by the warden on itself. Only the warden's
own ``children`` list is read, never a sandboxed process's: a student process may make its /proc
files unreadable, but cannot leave the warden's subtree. Standard library only: the sandbox
child imports this file by path.
"""

from __future__ import annotations

import os
import signal
import time


def children(pid: int, skip: frozenset[int] = frozenset()) -> list[int]:
    """Live (non-zombie) direct children of ``pid`` but ``skip``, from every thread's ``children`` file."""
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
    return [child for child in found if child not in skip and not _is_zombie(child)]


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return True  # already gone
    # The state follows the command name, which is in parentheses and may itself hold ') '.
    return stat[stat.rfind(b")") + 2: stat.rfind(b")") + 3] in (b"Z", b"X")


def kill_children(pid: int, keep: frozenset[int] = frozenset(), rounds: int = 200) -> int:
    """SIGKILL every child of ``pid`` except ``keep``, until none is left. Returns how many died.

    A killed process's own children are re-parented to the subreaper ``pid`` and show up in
    the next round, so the loop empties the whole subtree. A process cannot fork once SIGKILL
    is pending, and RLIMIT_NPROC bounds how many exist, so the loop ends.
    """
    killed = 0
    for attempt in range(rounds):
        strays = children(pid, skip=keep)
        if not strays:
            return killed
        for stray in strays:
            try:
                os.kill(stray, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.0005 * min(attempt + 1, 10))  # let the kernel re-parent the orphans
    return killed
