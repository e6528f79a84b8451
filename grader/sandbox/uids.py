"""Sandbox uids, allocated machine-wide: two graders on one machine never share one.

As root each sandbox drops to a uid of its own (``GRADER_SANDBOX_UID_BASE`` + slot by default).
Two graders (two instructors, a CI runner's parallel jobs, a ``grade`` beside a ``check``) would
otherwise both use base + 0 for their first sandbox: one's processes would count against the
other's process limit, and each would take the other's processes for its own leftovers. A uid
is taken by holding an exclusive ``flock`` on its own lock file; the kernel drops the lock when
its holder's descriptor closes, process death included, so a crashed grader frees its uids. A
sandbox tries base + slot first, then the uids after it.
"""

from __future__ import annotations

import fcntl
import os
import time

DEFAULT_BASE = 61000
LOCK_FOLDERS = ("/run/autodiff-grader", os.path.join(os.environ.get("TMPDIR") or "/tmp", "autodiff-grader-uids"))
SPAN = 1000  # uids a grader may try, from its preferred one on


class UidsExhausted(RuntimeError):
    pass


def base() -> int:
    """The first sandbox uid: ``GRADER_SANDBOX_UID_BASE``, default 61000."""
    return int(os.environ.get("GRADER_SANDBOX_UID_BASE", DEFAULT_BASE))


class UidClaim:
    """A sandbox uid held by this process until :meth:`release` (or this process's end)."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None  # forgotten first: see JobFolder.remove
            os.close(fd)  # closing the (only) descriptor releases the lock


def claim(preferred: int, span: int = SPAN) -> UidClaim:
    """The first free uid from ``preferred`` on, held by this process."""
    folder = _lock_folder()
    for uid in range(preferred, preferred + span):
        held = _try(folder, uid)
        if held is not None:
            return held
    raise UidsExhausted(f"every sandbox uid from {preferred} to {preferred + span - 1} is in use by another "
                        f"grader on this machine (locks in {folder}); set GRADER_SANDBOX_UID_BASE to a free range")


def claim_exactly(uid: int, wait_seconds: float = 30.0) -> UidClaim:
    """``uid`` itself (an isolation plan that names one), waiting while another grader holds it."""
    folder = _lock_folder()
    deadline = time.monotonic() + wait_seconds
    while True:
        held = _try(folder, uid)
        if held is not None:
            return held
        if time.monotonic() > deadline:
            raise UidsExhausted(f"sandbox uid {uid} is in use by another grader on this machine (lock in {folder})")
        time.sleep(0.05)


def _try(folder: str, uid: int) -> UidClaim | None:
    fd = os.open(os.path.join(folder, f"uid-{uid}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return UidClaim(uid, fd)


def _lock_folder() -> str:
    """A root-owned folder for the locks (root is the only one that drops to sandbox uids)."""
    for folder in LOCK_FOLDERS:
        try:
            os.makedirs(folder, mode=0o755, exist_ok=True)
            info = os.lstat(folder)
            if info.st_uid == 0 and not info.st_mode & 0o022 and os.path.isdir(folder):
                return folder
        except OSError:
            continue
    raise UidsExhausted(f"no folder for sandbox uid locks: tried {', '.join(LOCK_FOLDERS)}")
