"""One sandbox's cgroup: made once, reused from zygote to zygote while it is found empty, else replaced.

Where the machine lets the grader make cgroups (:mod:`grader.sandbox.cgroups`), each sandbox has
one :class:`~grader.sandbox.cgroups.Container`, limited per job (processes, and memory for the
submission's whole container). A zygote's processes live in it; when the zygote's container is over
the cgroup must be empty before the next zygote joins it: what is still there is killed, and a
cgroup that does not empty at once is removed and replaced by a fresh one.

A new warden is moved into the cgroup's memory-only folder (a cgroup v1 memory folder, where the
machine has one) by a thread of ours while it imports numpy (:class:`WardenMove`): its zygotes are
born in that cgroup (see child.py), and the move's wait for a grace period of RCU passes during that
import instead of before the first zygote.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.sandbox.cgroups import Container
    from grader.sandbox.isolation import IsolationPlan


class WardenMove:
    """A warden being moved into a cgroup folder by a thread of ours, while it imports numpy."""

    def __init__(self, pid: int, folder: Path) -> None:
        import threading
        self.folder = folder
        self._moved = False
        self._thread = threading.Thread(target=self._move, args=(pid,), name="grader-warden-move", daemon=True)
        self._thread.start()

    def _move(self, pid: int) -> None:
        try:
            (self.folder / "cgroup.procs").write_text(str(pid))
            self._moved = True
        except OSError:  # the warden died meanwhile, say: it joins (or not) on its own, as before
            pass

    def done(self) -> bool:
        """Wait for the move; whether the warden is in the folder now."""
        self._thread.join()
        return self._moved


class SandboxCgroup:
    """The cgroup of the sandbox in ``slot`` (None until a plan with cgroups asks for it)."""

    def __init__(self, slot: int) -> None:
        self.slot = slot
        self.warden_move: WardenMove | None = None  # the early move of the newest warden, until its first zygote
        self._container: Container | None = None

    def move_warden(self, pid: int, plan: IsolationPlan) -> None:
        """Start moving the new warden ``pid`` into the memory-only folder, where there is one."""
        self.warden_move = None
        if not plan.cgroups:
            return
        container = self._made()
        folder = container.memory_only() if container is not None else None
        self.warden_move = WardenMove(pid, folder) if folder is not None else None

    def for_job(self, plan: IsolationPlan, job: dict) -> Container | None:
        """The cgroup (made now if need be), with the limits of this job; None where there is none."""
        if not plan.cgroups:
            return None
        container = self._made()
        if container is None:
            return None
        # Processes: the sandbox's own and a few more (a keeper, zombies). Memory: the submission's whole
        # container, zygote and page cache included, and (where the warden holds it, see child.py)
        # the warden's own.
        container.limit(pids=(plan.nproc or 0) + 4, memory_bytes=(job["memory_mb"] + 256) * 1024 * 1024)
        return container

    def joins(self, container: Container) -> list[dict]:
        """What a zygote's plan says to join: the cgroup's folders, each marked when the warden is in
        it already (its early move is over), so that it need not move itself."""
        joins = container.joins
        moved, self.warden_move = self.warden_move, None
        if moved is not None and moved.done():
            for entry in joins:
                entry["warden_in"] = entry["procs"] == str(moved.folder / "cgroup.procs")
        return joins

    def found_empty(self, container: Container | None, warden: int, reported: bool) -> bool:
        """Whether a zygote's container is over: the warden ``reported`` it empty, and the cgroup (if
        any) is; a cgroup found otherwise is killed (the warden's pid spared), and replaced for the
        next zygote unless it empties at once."""
        empty = reported
        spared = frozenset({warden})
        if container is not None and not container.empty(but=spared):
            container.kill(but=spared)
            empty = container.wait_empty(1.0, but=spared) and empty
        if not empty and container is not None:  # not to be reused: a fresh one for the next zygote
            container.remove()
            if container is self._container:
                self._container = None
        return empty

    def settle(self) -> None:
        """Wait for a warden move still in flight (before the cgroup is removed)."""
        if self.warden_move is not None:
            self.warden_move.done()

    def remove(self) -> None:
        """Remove the cgroup, and this grader's folder for cgroups once no sandbox needs it."""
        if self._container is None:
            return
        from grader.sandbox import cgroups
        self._container.remove()
        self._container = None
        where = cgroups.hierarchy()
        if where is not None:
            cgroups.release(where)

    def _made(self) -> Container | None:
        """The cgroup, made once where the machine lets the grader make one."""
        if self._container is None:
            from grader.sandbox import cgroups
            where = cgroups.hierarchy()
            if where is None:
                return None
            self._container = cgroups.Container(where, f"slot-{self.slot}-{time.monotonic_ns()}")
        return self._container
