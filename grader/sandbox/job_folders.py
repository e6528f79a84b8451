"""Job folders (``grader-job-*`` in the temp folder): each held by the grader that made it, and
swept once nobody holds it.

A job folder holds one submission while its zygote runs (see launcher.Sandbox). The grader removes
it after the submission; when the grader dies first, its warden removes the folder it was told of.
Two cases still left one behind: a grader killed between making the folder and sending the plan
that names it to its warden, and a grader killed together with its warden (a CI runner's timeout
kills every process of the job; ``kill -9`` of both). Each such folder keeps a student's file.

So the grader holds an exclusive ``flock`` on each folder it makes, on a descriptor of the folder
itself, until it has removed the folder (as uids.py holds a uid): the kernel drops the lock when
that descriptor closes, however its process ends. A folder that nobody holds is a leftover, once
it is older than :data:`SETTLE_SECONDS`: a folder is made an instant before it is locked, and a
grader of an earlier version held no lock on the folders it still uses.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
import time
from pathlib import Path

from grader.sandbox.cleanup import remove_tree

PREFIX = "grader-job-"
SETTLE_SECONDS = 3600.0
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class JobFolder:
    """A fresh, empty job folder, held by this process until :meth:`remove`."""

    def __init__(self, parent: str | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
        try:
            self._fd: int | None = os.open(self.path, _FOLDER)
        except BaseException:
            remove_tree(self.path)
            raise
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new: nobody else can hold it yet
        except OSError:  # a file system without locks: no sweep there can take a folder either
            pass

    def remove(self) -> None:
        """Delete the folder and all it holds, then let go of it. Never raises: a folder that could
        not be removed stays, and is swept later."""
        if self._fd is None:
            return
        remove_tree(self.path)
        # Forgotten before it is closed: a Ctrl-C landing between the two (a KeyboardInterrupt as the
        # close returns) would otherwise leave it to be closed again by close(), which then raised EBADF.
        fd, self._fd = self._fd, None
        os.close(fd)


def sweep(parent: str | None = None, now: float | None = None) -> int:
    """Remove the job folders in ``parent`` (default: the temp folder) that no process holds and
    that are older than :data:`SETTLE_SECONDS`; how many. Never raises, never follows a link, and
    passes over folders this process may not open (another user's)."""
    parent = parent or tempfile.gettempdir()
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = [entry.name for entry in os.scandir(parent) if entry.name.startswith(PREFIX)]
    except OSError:
        return 0
    for name in entries:
        path = os.path.join(parent, name)
        try:
            found = os.lstat(path)
            if not stat.S_ISDIR(found.st_mode) or now - found.st_mtime < SETTLE_SECONDS:
                continue
            fd = os.open(path, _FOLDER)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held (a live grader's), or a file system without locks
            os.close(fd)
            continue
        try:
            removed += remove_tree(path)  # held meanwhile, so that no other sweep takes it too
        finally:
            os.close(fd)
    return removed
