"""Which isolation this machine allows, decided once in the grader and carried out in the child.

Two paths, chosen by who runs the grader:

* **root** (CI, Gradescope, containers): the zygote drops to a sandbox user of its own
  (``GRADER_SANDBOX_UID_BASE`` + slot, default 61000 + slot; no /etc/passwd entry needed), so it
  cannot signal or ptrace the grader, read root-only files or exceed RLIMIT_NPROC; the job
  folder is chowned to that user. Landlock is applied on top where the kernel has it.
* **a normal user**: Landlock is the only fence against reading the instructor's files and
  signalling the grader; without it, rlimits only (see docs/security.md).

Landlock's read-only paths are the standard library (without site-packages), numpy's own
folders and the platform's shared libraries; read-write is the job folder and /dev/null.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox import landlock

DEFAULT_UID_BASE = 61000
NPROC_HEADROOM = 64      # processes a sandbox may have at once (as the sandbox user)
FILE_SIZE_MB = 16


@dataclass(frozen=True)
class IsolationPlan:
    uid: int | None          # drop to this uid/gid (root only)
    landlock_abi: int        # 0: not available
    nproc: int | None        # RLIMIT_NPROC, where the kernel will honour it

    @property
    def reusable(self) -> bool:
        """Whether one warden may serve several submissions in turn. Only when a submission's
        processes cannot reach the warden (another uid, or a Landlock domain: no ptrace, and no
        signals on ABI >= 6); else a fresh warden per submission, so one cannot tamper with the next."""
        return self.uid is not None or self.landlock_abi >= 1

    def prepare(self, job_dir: Path, submission: Path) -> None:
        """Make the job folder the sandbox's own: 0700, owned by the sandbox user when there is one."""
        os.chmod(job_dir, 0o700)
        os.chmod(submission, 0o600)
        if self.uid is not None:
            os.chown(job_dir, self.uid, self.uid)
            os.chown(submission, self.uid, self.uid)

    def child_config(self, job_dir: Path) -> dict:
        config = {"uid": self.uid, "gid": self.uid, "nproc": self.nproc, "file_size_mb": FILE_SIZE_MB}
        if self.landlock_abi:
            config["landlock"] = {"read": list(readable_paths()), "read_write": [str(job_dir), "/dev/null"]}
        return config


def plan_isolation(slot: int = 0) -> IsolationPlan:
    """The strongest plan this process can carry out, for worker ``slot`` of a batch."""
    abi = landlock.abi_version()
    if os.geteuid() == 0:
        base = int(os.environ.get("GRADER_SANDBOX_UID_BASE", DEFAULT_UID_BASE))
        return IsolationPlan(uid=base + slot, landlock_abi=abi, nproc=NPROC_HEADROOM)
    # A normal user's RLIMIT_NPROC counts all of that user's processes, the grader's included.
    return IsolationPlan(uid=None, landlock_abi=abi, nproc=_processes_of(os.getuid()) + NPROC_HEADROOM)


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count


@functools.cache
def readable_paths() -> tuple[str, ...]:
    """What a sandboxed process may read: the standard library without site-packages, numpy's
    folders, the platform's shared libraries. Not the grader, not the course folders."""
    with os.scandir(sysconfig.get_paths()["stdlib"]) as entries:  # these exist: listed just now
        stdlib = [entry.path for entry in entries if entry.name not in ("site-packages", "dist-packages")]
    paths = []
    numpy_dir = Path(sys.modules["numpy"].__file__).parent if "numpy" in sys.modules else _find("numpy")
    if numpy_dir is not None:
        paths += [str(numpy_dir), str(numpy_dir.with_name("numpy.libs"))]
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for root in ("/lib", "/usr/lib", "/lib64", "/usr/lib64"):
        paths.append(os.path.join(root, multiarch) if multiarch and root.endswith("lib") else root)
    paths += ["/etc/ld.so.cache", "/dev/urandom"]
    return tuple(stdlib + [path for path in paths if os.path.exists(path)])


def _find(name: str) -> Path | None:
    import importlib.util
    spec = importlib.util.find_spec(name)
    return Path(spec.origin).parent if spec and spec.origin else None
