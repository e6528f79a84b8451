"""A cgroup per zygote, where this machine lets the grader make one: killed as a whole, never left.

A cgroup v2 folder of our own holds a zygote and everything it forks: ``cgroup.kill`` kills them
all in one write (threads of a zombie leader included), ``cgroup.events`` says when none is
left, and a sandboxed process cannot move itself out (that needs write access to the parents'
``cgroup.procs``, which belong to root or to the grader's user). Where the hierarchy gives this
folder the ``pids`` and ``memory`` controllers, the zygote's whole container gets ``pids.max``
and ``memory.max``; as root on a machine whose controllers are in cgroup v1 hierarchies (as on
our CI machines), the same limits come from v1 folders beside it. Where nothing is writable
(an ordinary user without a delegated cgroup, a container with /sys/fs/cgroup read-only) there is
no cgroup, the zygote's other containers (namespaces, its uid) still hold, and ``isolation`` says so.

Folders are made under the grader's own cgroup, in one ``autodiff-grader-<pid>-<start time>``
folder per grader process; one left by a grader that died is emptied and removed by the next.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from dataclasses import field
from pathlib import Path

from grader.records import record

_PREFIX = "autodiff-grader-"


@record
class Hierarchy:
    """Where this grader process makes its zygotes' cgroups."""

    unified: Path | None                            # our folder in cgroup v2 (with cgroup.kill)
    limits: dict[str, Path] = field(default_factory=dict)  # "pids"/"memory" -> folder that limits it


@functools.cache
def hierarchy() -> Hierarchy | None:
    """This process's folders for cgroups (made now, once), or None when it can make none."""
    try:
        mounts, own = _mounts(), _own_cgroups()
    except OSError:
        return None
    name = f"{_PREFIX}{os.getpid()}-{_start_time(os.getpid())}"
    unified, limits = None, {}
    v2 = _folder(mounts, own, "cgroup2", None)
    if v2 is not None:
        unified = _make_base(v2, name, kill_file=True)
        if unified is not None:
            offered = set((unified / "cgroup.controllers").read_text().split()) & {"pids", "memory"}
            for controller in sorted(offered):
                try:
                    (unified / "cgroup.subtree_control").write_text(f"+{controller}")
                    limits[controller] = unified
                except OSError:
                    pass
    for controller in ("pids", "memory"):
        if controller not in limits and os.geteuid() == 0:
            folder = _folder(mounts, own, "cgroup", controller)
            base = _make_base(folder, name, kill_file=False) if folder is not None else None
            if base is not None:
                limits[controller] = base
    if unified is None and not limits:
        return None
    return Hierarchy(unified, limits)


class Container:
    """One sandbox's cgroups: made by the grader, joined by each zygote (or its keeper), killed
    as a whole, found empty (and then reused for the next zygote), removed."""

    def __init__(self, where: Hierarchy, name: str) -> None:
        self.folders: list[Path] = []
        self._unified: Path | None = None
        self._controllers: dict[Path, list[str]] = {}
        self._gives: dict[Path, list[str]] = {}   # folder -> what joining it gives, once limited
        made: dict[Path, list[str]] = {}
        if where.unified is not None:
            made[where.unified] = []
        for controller, base in where.limits.items():
            made.setdefault(base, []).append(controller)
        for base, controllers in made.items():
            folder = base / name
            try:
                _ensure_base(base, [c for c in controllers if base == where.unified])
                folder.mkdir()
            except OSError:
                continue
            self.folders.append(folder)
            self._controllers[folder] = controllers
            self._gives[folder] = ["cgroup"] if base == where.unified else []
            if base == where.unified:
                self._unified = folder

    @property
    def joins(self) -> list[dict]:
        """For the zygote (or keeper): each ``cgroup.procs`` file to write its pid in, and what that gives."""
        return [{"procs": str(folder / "cgroup.procs"), "gives": gives}
                for folder, gives in self._gives.items() if gives]

    def memory_only(self) -> Path | None:
        """The folder that limits memory and nothing else (a cgroup v1 memory folder), if any: the
        one a warden may hold, since nothing kills it as a whole (see child.py)."""
        for folder, controllers in self._controllers.items():
            if controllers == ["memory"] and folder != self._unified:
                return folder
        return None

    def limit(self, pids: int, memory_bytes: int) -> None:
        """Set the limits of the zygote to come: its tasks (threads included), its memory (page cache included)."""
        files = {"pids": [("pids.max", pids)],
                 "memory": [("memory.max", memory_bytes), ("memory.swap.max", 0),
                            ("memory.limit_in_bytes", memory_bytes)]}
        for folder, controllers in self._controllers.items():
            gives = ["cgroup"] if folder == self._unified else []
            for controller in controllers:
                done = False
                for file, value in files[controller]:
                    if (folder / file).exists():
                        try:
                            (folder / file).write_text(str(value))
                            done = done or file != "memory.swap.max"
                        except OSError:
                            pass
                if done:
                    gives.append(f"{controller}-limit")
            self._gives[folder] = gives

    def kill(self, but: frozenset[int] = frozenset()) -> None:
        """SIGKILL every process in the container: one write in cgroup v2, else one by one, but
        ``but`` (the warden, which holds a memory cgroup it shares with its zygotes: see child.py)."""
        if self._unified is not None:
            try:
                (self._unified / "cgroup.kill").write_text("1")
                return
            except OSError:
                pass
        for folder in self.folders:
            for pid in _procs(folder):
                if pid not in but:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass

    def empty(self, but: frozenset[int] = frozenset()) -> bool:
        """True when no process but ``but`` is left in the container."""
        if self._unified is not None:
            try:
                return "populated 0" in (self._unified / "cgroup.events").read_text()
            except OSError:
                pass
        return not any(set(_procs(folder)) - but for folder in self.folders)

    def wait_empty(self, seconds: float, but: frozenset[int] = frozenset()) -> bool:
        deadline = time.monotonic() + seconds
        while not self.empty(but):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.0005)
        return True

    def remove(self) -> None:
        """Remove the folders (an empty cgroup's folder, once its last process is reaped)."""
        for folder in self.folders:
            _rmdir(folder, tries=20, pause=0.001)
        self.folders = []


def release(where: Hierarchy) -> None:
    """Remove this process's folders once they hold no container (a later Container makes them again)."""
    for base in {*where.limits.values(), *([where.unified] if where.unified is not None else [])}:
        try:
            base.rmdir()
        except OSError:
            pass  # another sandbox of this process still has its container in it


def _ensure_base(base: Path, controllers: list[str]) -> None:
    """Our folder under the hierarchy, made again if :func:`release` removed it."""
    if not base.is_dir():
        base.mkdir(exist_ok=True)
        for controller in controllers:
            (base / "cgroup.subtree_control").write_text(f"+{controller}")


def _procs(folder: Path) -> list[int]:
    try:
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _mounts() -> list[tuple[str, str, str, list[str]]]:
    """(file system type, its root, where it is mounted, its options) per mount of /proc/self/mountinfo."""
    mounts = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            fields = line.split()
            separator = fields.index("-")
            mounts.append((fields[separator + 1], fields[3], fields[4], fields[separator + 3].split(",")))
    return mounts


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per hierarchy: "" (cgroup v2) or a v1 controller name -> path."""
    own = {}
    with open("/proc/self/cgroup") as handle:
        for line in handle:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                own[controller] = path
    return own


def _folder(mounts, own, kind: str, controller: str | None) -> Path | None:
    """The folder of our own cgroup in the hierarchy of ``kind`` (with ``controller``, for v1)."""
    path = own.get(controller or "")
    if path is None:
        return None
    for fstype, root, mount_point, options in mounts:
        if fstype == kind and (controller is None or controller in options):
            if path == root or path.startswith(root.rstrip("/") + "/"):
                return Path(mount_point) / path[len(root):].lstrip("/")
    return None


def _make_base(parent: Path, name: str, kill_file: bool) -> Path | None:
    """Our folder under ``parent`` (after removing those of graders that died), or None."""
    if not os.access(parent, os.W_OK):
        return None
    _remove_stale(parent)
    base = parent / name
    try:
        base.mkdir(exist_ok=True)
    except OSError:
        return None
    if kill_file and not (base / "cgroup.kill").exists():  # Linux < 5.14: no way to kill it as a whole
        _remove_folder(base)
        return None
    return base


def _remove_stale(parent: Path) -> None:
    try:
        entries = [entry for entry in os.scandir(parent) if entry.name.startswith(_PREFIX) and entry.is_dir()]
    except OSError:
        return
    for entry in entries:
        try:
            pid, start = (int(part) for part in entry.name[len(_PREFIX):].split("-", 1))
        except ValueError:
            continue
        if _start_time(pid) != start:  # its grader is gone (the pid may be another process's now)
            _remove_folder(Path(entry.path))


def _rmdir(folder: Path, tries: int, pause: float) -> None:
    """Remove a cgroup's folder, waiting while the kernel still counts a process that just died in it."""
    for _ in range(tries):
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(pause)


def _remove_folder(base: Path) -> None:
    """Kill what is left in a folder of cgroups and remove it (children first)."""
    for folder in sorted((Path(root) for root, _, _ in os.walk(base)), key=lambda p: len(p.parts), reverse=True):
        kill = folder / "cgroup.kill"
        try:
            if kill.exists():
                kill.write_text("1")
            for pid in _procs(folder):
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        _rmdir(folder, tries=100, pause=0.002)


def _start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot), or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return int(stat[stat.rfind(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None
