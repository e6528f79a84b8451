"""Sandbox slots on one machine: each grading process claims its own, for as long as it lives.

A sandbox's slot decides its user (``GRADER_SANDBOX_UID_BASE`` + slot, when the grader runs as root),
and two sandboxes of one user can signal and ptrace each other and share its process limit. Two
Dask worker processes on one machine (``dask worker --nworkers 2``, a ``LocalCluster``) would both
start at slot 0, so each claims a run of free slots first: an exclusive ``flock`` on one file per
sandbox user, in a folder only this user can enter. The kernel drops a lock when its process dies,
however it dies, so a worker that was killed frees its slots for the one its nanny starts next.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

MAX_SLOTS = 1000   # the sandbox users of one base: base .. base + 999 (each agent or machine its own base)


@dataclass
class SlotClaim:
    first: int
    count: int
    _locks: list[int] = field(default_factory=list, repr=False)

    def release(self) -> None:
        for fd in self._locks:
            with contextlib.suppress(OSError):
                os.close(fd)  # closing the only descriptor drops its flock
        self._locks = []


def claim(count: int, folder: Path | None = None) -> SlotClaim:
    """The lowest run of ``count`` slots no other process of this machine holds, held until this
    process ends or :meth:`SlotClaim.release`."""
    folder = folder or default_folder()
    _own_folder(folder)
    base = int(os.environ.get("GRADER_SANDBOX_UID_BASE", "61000"))
    start = 0
    while start + count <= MAX_SLOTS:
        held: list[int] = []
        for slot in range(start, start + count):
            fd = os.open(folder / f"uid-{base + slot}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                SlotClaim(start, count, held).release()
                start = slot + 1
                break
            held.append(fd)
        else:
            return SlotClaim(start, count, held)
    raise RuntimeError(f"no {count} free sandbox slots left on this machine ({MAX_SLOTS} per "
                       f"GRADER_SANDBOX_UID_BASE): fewer grading processes, or another base")


def default_folder() -> Path:
    """Where the locks live: beside the machine's runtime files for root, else in the temporary folder."""
    if os.geteuid() == 0 and os.path.isdir("/run"):
        return Path("/run/autodiff-grader-slots")
    return Path(tempfile.gettempdir()) / f"autodiff-grader-slots-{os.geteuid()}"


def _own_folder(folder: Path) -> None:
    """Make ``folder`` (0700) or accept it only if it is this user's real folder: a lock file another
    user could open would let it hold (and so take away) a slot."""
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700, parents=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise RuntimeError(f"{folder} must be a folder of this user's with mode 0700 (it holds the sandbox slot "
                           "locks); remove it and start the worker again")
