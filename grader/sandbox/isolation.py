"""Which isolation to attempt, decided in the grader and carried out in the child, which reports
what it achieved (``isolation`` in every result). Each layer is tried where it may exist and left
out, with no error, where the kernel or the machine refuses it:

* **a container per zygote**: new PID, network and IPC namespaces, made by the warden (an ordinary
  user's inside a user namespace), a mount namespace in which the job folder is a tmpfs of the
  zygote's own (:data:`JOB_FOLDER_MB`, :data:`JOB_FOLDER_FILES`), and a cgroup the grader made
  for it (``cgroups.py``); as root, the zygote's uid is the sandbox's alone (``uids.py``), so
  killing every process of that uid (and removing its IPC objects) is a container too, the one
  that holds where namespaces and cgroups are refused (in Docker, say).
* **root** (CI, Gradescope, containers): the zygote drops to its sandbox user
  (``GRADER_SANDBOX_UID_BASE`` + slot or the next free one, default 61000 + slot; no /etc/passwd
  entry needed), so it cannot signal or ptrace the grader, read root-only files or exceed
  RLIMIT_NPROC; the job folder is chowned to that user. Landlock and seccomp on top.
* **an ordinary user**: Landlock, seccomp and the namespaces are the fences; without them,
  rlimits only (see docs/security.md).

Landlock's read-only paths are the standard library (without site-packages), numpy's own
folders and the platform's shared libraries; read-write is the job folder and /dev/null.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from pathlib import Path

from grader.records import record
from grader.sandbox import landlock
from grader.sandbox.uids import base as uid_base

NPROC_HEADROOM = 64      # tasks (threads included) a sandbox may have at once, of its own
FILE_SIZE_MB = 16
# The job folder as a tmpfs of the container's own (where it has a mount namespace): what all of
# a submission's files may hold together, in bytes and in files (folders and links included).
JOB_FOLDER_MB = 64
JOB_FOLDER_FILES = 4096


@record
class IsolationPlan:
    """The isolation a sandbox attempts on this machine, planned in the grader (see child_config)."""

    uid: int | None          # drop to this uid/gid (root only)
    landlock_abi: int        # 0: not available
    nproc: int | None        # tasks of its own a sandbox may have (RLIMIT_NPROC, counted as the kernel does)
    namespaces: bool = False  # PID, network, IPC and mount namespaces per zygote (and a user one for an ordinary user)
    seccomp: bool = False    # the zygote loads seccomp.py's filter
    cgroups: bool = False    # a cgroup per zygote, where the grader can make one

    @property
    def reusable(self) -> bool:
        """Whether one warden may serve several submissions in turn. Only when a submission's
        processes cannot reach the warden (another uid, or a Landlock domain: no ptrace, and no
        signals on ABI >= 6); else a fresh warden per submission, so one cannot tamper with the next."""
        return self.uid is not None or self.landlock_abi >= 1

    def prepare_folder(self, job_dir: Path) -> None:
        """Make the job folder the sandbox's own: 0700, owned by the sandbox user when there is one
        (the zygote writes the submission into it, or into the tmpfs it mounts there)."""
        os.chmod(job_dir, 0o700)
        if self.uid is not None:
            os.chown(job_dir, self.uid, self.uid)

    def child_config(self, job_dir: Path) -> dict:
        """The plan as the warden and the zygote read it (no submission data: see Sandbox.begin)."""
        config: dict = {"uid": self.uid, "gid": self.uid, "nproc": self.nproc, "file_size_mb": FILE_SIZE_MB,
                        "namespaces": self.namespaces, "seccomp": self.seccomp, "job_dir": str(job_dir),
                        "job_folder_mb": JOB_FOLDER_MB, "job_folder_files": JOB_FOLDER_FILES}
        if self.landlock_abi:
            config["landlock"] = {"read": list(readable_paths()), "read_write": [str(job_dir), "/dev/null"]}
        return config


def plan_isolation(slot: int = 0, uid: int | None = None) -> IsolationPlan:
    """The strongest plan this process may attempt, for worker ``slot`` of a batch. As root the
    sandbox uid is ``uid`` (a claimed one, see uids.py), else base + ``slot``."""
    from grader.sandbox import seccomp
    abi = landlock.abi_version()
    if os.geteuid() == 0:
        uid = uid if uid is not None else uid_base() + slot
    else:
        uid = None
    return IsolationPlan(uid=uid, landlock_abi=abi, nproc=NPROC_HEADROOM, namespaces=True,
                         seccomp=seccomp.supported(), cgroups=True)


@functools.cache
def readable_paths() -> tuple[str, ...]:
    """What a sandboxed process may read: the standard library without site-packages, numpy's
    folders, the platform's shared libraries. Not the grader, not the course folders."""
    with os.scandir(sysconfig.get_paths()["stdlib"]) as entries:  # these exist: listed just now
        stdlib = [entry.path for entry in entries if entry.name not in ("site-packages", "dist-packages")]
    paths = []
    loaded = getattr(sys.modules.get("numpy"), "__file__", None)
    numpy_dir = Path(loaded).parent if loaded else _find("numpy")
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
