"""What a batch leaves on the machine once its grader has exited, counted only where the suite can
tell it is its own: other graders and test runs share this machine, with sandbox uids of their own.

* System V IPC objects (what ``ipcs`` lists, from ``/proc/sysvipc``) owned or made by this run's
  sandbox uids, or at one of this session's keys (``conftest.IPC_KEY`` on), whoever owns them;
* the machine's ``Shmem`` (/proc/meminfo: tmpfs, System V and anonymous shared memory, memfds),
  less what others' System V segments and tmpfs files grew by meanwhile;
* processes of this run's sandbox uids;
* the disk usage of this run's own temp folder;
* and, in what a later check shows, the batch's hidden scenarios (:func:`hidden_in`).
"""

from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass
from pathlib import Path

from .conftest import ASSIGNMENT, HIDDEN, IPC_KEY, sandbox_processes

SHMEM_SLACK_KB = 16 * 1024   # "back within a few MiB": others' short-lived shared memory moves it too
KEYS = range(IPC_KEY, IPC_KEY + 16)


@dataclass(frozen=True)
class Traces:
    ipc: frozenset[tuple[str, int, int, int]]   # (kind, key, owner, creator) of the objects that are ours
    shmem_kb: int
    others_kb: int      # others' System V segments (resident) and tmpfs files, in the machine's namespaces
    temp_kb: int
    processes: tuple[str, ...]


def ipc_objects(uids: range) -> frozenset[tuple[str, int, int, int]]:
    found = set()
    for kind in ("shm", "msg", "sem"):
        header, *rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        columns = header.split()
        for row in rows:
            fields = dict(zip(columns, row.split()))
            key, owner, creator = int(fields["key"]), int(fields["uid"]), int(fields["cuid"])
            if owner in uids or creator in uids or key in KEYS:
                found.add((kind, key, owner, creator))
    return frozenset(found)


def _others_kb(uids: range) -> int:
    """Resident System V segments not of ``uids``, and the tmpfs mounts' used space (a browser's
    /dev/shm, say): shared memory that runs beside this one make."""
    total = 0
    header, *rows = Path("/proc/sysvipc/shm").read_text().splitlines()
    columns = header.split()
    for row in rows:
        fields = dict(zip(columns, row.split()))
        if int(fields["uid"]) not in uids and int(fields["cuid"]) not in uids and int(fields["key"]) not in KEYS:
            total += int(fields.get("rss", 0)) // 1024
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if fields[fields.index("-") + 1] == "tmpfs":
            try:
                info = os.statvfs(fields[4])
            except OSError:
                continue
            total += (info.f_blocks - info.f_bfree) * info.f_frsize // 1024
    return total


def _shmem_kb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1])
    raise AssertionError("no Shmem line in /proc/meminfo")


def _disk_kb(folder: Path) -> int:
    total = 0
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks // 2
            except OSError:
                pass
    return total


def traces(uids: range, temp: Path) -> Traces:
    return Traces(ipc_objects(uids), _shmem_kb(), _others_kb(uids), _disk_kb(temp),
                  tuple(sandbox_processes(uids.start, uids.stop)))


def shmem_grown_kb(before: Traces, uids: range) -> int:
    """How much more of the machine's Shmem is held than ``before``, less what others' grew by."""
    return (_shmem_kb() - before.shmem_kb) - max(0, _others_kb(uids) - before.others_kb)


def left_behind(before: Traces, uids: range, temp: Path, seconds: float = 10.0) -> list[str]:
    """What is left now that was not there ``before``: [] once everything is back. The kernel frees a
    namespace's objects and mounts a moment after its last process (deferred work), and others'
    shared memory comes and goes, so this looks again for up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        now = traces(uids, temp)
        grown = shmem_grown_kb(before, uids)
        left = [f"an IPC object: {item}" for item in sorted(now.ipc - before.ipc)]
        left += [f"Shmem {grown:,} kB more than before"] if grown > SHMEM_SLACK_KB else []
        if now.temp_kb > before.temp_kb:
            left.append(f"the temp folder holds {now.temp_kb - before.temp_kb:,} kB more")
        left += [f"a process: {process}" for process in now.processes]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def remove_keyed() -> None:
    """Remove the objects at this session's keys from the machine's namespace (after a test that let
    an attack make them there on purpose)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for key in KEYS:
        for ident, control in ((libc.msgget(key, 0), libc.msgctl), (libc.shmget(key, 0, 0), libc.shmctl)):
            if ident >= 0:
                control(ident, 0, None)   # IPC_RMID


def printed(result: dict) -> str:
    """What a result (as written to a file) shows its submission printed: at import, in each scenario."""
    return result["import_stdout"] + "".join(s["feedback"]["stdout"] for s in result["scenarios"])


def filled(result: dict) -> tuple[int, int, str]:
    """The MiB and files the disk_and_inode_filling attack last said it wrote, and its errors."""
    said = [line.split(maxsplit=6) for line in printed(result).splitlines() if line.startswith("FILLED ")]
    assert said, "the filling never reported"
    return int(said[-1][1]), int(said[-1][3]), said[-1][-1]


def hidden_in(text: str) -> list[str]:
    """The ids of the shipped assignment's hidden scenarios that show in ``text``."""
    from grader import load_assignment
    scenarios = load_assignment(ASSIGNMENT, hidden=HIDDEN).scenarios
    return [s.id for s in scenarios if s.visibility.value == "hidden" and s.id in text]
