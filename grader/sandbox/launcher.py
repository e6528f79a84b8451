"""The sandbox's life: a warden, and submission after submission, each in a fresh zygote.

:class:`Sandbox` owns one warden (see ``child.py``) and, per zygote, that zygote's container, job
folder and fresh pipes; ``sandbox.runs`` (:class:`~grader.sandbox.scheduler.Scheduler`) runs the
submission's import and programs in the current zygote. Its life is one state machine
(:mod:`grader.sandbox.states`: WARM, READY, RUNNING, STOPPING, ABORTED, CLOSED), moved only by
:meth:`Sandbox.prestart`, :meth:`Sandbox.begin` and :meth:`Sandbox.end`, whose :class:`End` says
how: KILL a zygote's container now, end the SUBMISSION, ABORT from another thread, CLOSE it all.

A zygote's container is killed as a whole (its PID namespace, its cgroup, its subtree), and the
warden is reused only once it reports that container provably empty; otherwise it is retired
with everything under it, and the next zygote gets a fresh one.
"""

from __future__ import annotations

import binascii
import os
import selectors
import signal
import time
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING

from grader.sandbox import job_folders, proctree
from grader.sandbox.framing import pack_code
from grader.sandbox.intake import Budget, Intake
from grader.sandbox.link import ZygoteLink
from grader.sandbox.sandbox_cgroup import SandboxCgroup
from grader.sandbox.scheduler import Scheduler
from grader.sandbox.spawn import Warden, ZygotePipes
from grader.sandbox.states import BEGIN, PRESTART, End, Move, State, StateError, after

if TYPE_CHECKING:
    from grader.sandbox.isolation import IsolationPlan
    from grader.sandbox.uids import UidClaim

__all__ = ["End", "Sandbox", "State", "StateError"]

CONTAINER_SECONDS = 10.0  # for a killed zygote's container to be reported empty


class Sandbox:
    """A warden process that serves submissions one at a time, each in a fresh zygote.

    ``at_once``: how many public scenarios of a submission may run at the same time (a check uses
    its machine's second core; a batch, which keeps every core busy with a sandbox each, runs them
    one at a time). Start it early: the interpreter and numpy load while you prepare. Per
    submission: :meth:`begin`, its runs (``runs.wait_ready``, then ``runs.run_all``), then
    ``end(End.SUBMISSION)``: its processes killed, its job folder deleted, the warden kept warm for
    the next one when the isolation level keeps submissions apart (:attr:`IsolationPlan.reusable`).
    ``end(End.CLOSE)`` (or leaving its ``with`` block) ends it all. A warden that died is started
    again by the next :meth:`begin` or :meth:`prestart`.
    """

    def __init__(self, slot: int = 0, plan: IsolationPlan | None = None, warden: Warden | None = None,
                 at_once: int = 1):
        _make_grader_undumpable()
        self.slot, self._plan = slot, plan
        self.plan: IsolationPlan | None = plan
        self.runs = Scheduler(self, at_once)
        self._state = State.WARM
        self._aborted = False  # set from any thread (end(ABORT)), never cleared: see state
        self._job_folder: job_folders.JobFolder | None = None  # the current one, held while it is ours
        self._claim: UidClaim | None = None
        self._budget = Budget()
        self._cgroup = SandboxCgroup(slot)  # reused while provably empty
        self._zygote: ZygoteLink | None = None
        self._prestarted_job: dict | None = None  # the job settings of a zygote prestart() began
        self._spawn(warden)  # a warden started earlier (spawn.Warden) is adopted as it is

    @classmethod
    def for_a_check(cls, warden: Warden | None = None) -> Sandbox:
        """A sandbox for one student's check (around ``warden``, when one was started earlier): its
        public scenarios run two at a time where there is a second core for them."""
        return cls(warden=warden, at_once=2 if (os.cpu_count() or 1) > 1 else 1)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.end(End.CLOSE)

    # ------------------------------------------------------------------ what it is now

    @property
    def state(self) -> State:
        """Where it is in its life (see :mod:`grader.sandbox.states`). An abort, from whatever
        thread, holds until it is closed."""
        if self._aborted and self._state is not State.CLOSED:
            return State.ABORTED
        return self._state

    @property
    def zygote(self) -> ZygoteLink | None:
        """The current zygote's link (None between submissions)."""
        return self._zygote

    @property
    def job_dir(self) -> Path | None:
        """The current zygote's job folder (None between submissions)."""
        return self._job_folder.path if self._job_folder is not None else None

    @property
    def isolation(self) -> tuple[str, ...]:
        """What the current zygote said it achieved, before any student code ran (() before it has)."""
        return self._zygote.intake.isolation if self._zygote is not None else ()

    @property
    def forbidden_seen(self) -> list[str]:
        """The forbidden modules the current zygote's submission tried to import."""
        return self._zygote.intake.forbidden if self._zygote is not None else []

    @property
    def warden_dead(self) -> bool:
        """The warden is gone (killed, or it failed): the next zygote needs a fresh one."""
        return self._warden_dead

    @property
    def zygote_gone(self) -> bool:
        """Nothing more will come from the current zygote: it is over, given up on, or its warden died."""
        return self._warden_dead or (self._zygote is not None and self._zygote.gone)

    # ------------------------------------------------------------------ its moves

    def prestart(self, job: dict) -> None:
        """Start the next submission's zygote now, in an empty job folder: a :meth:`begin` with the
        same limits then only hands it its job. For a caller that waits between submissions
        (``--watch``); the zygote holds nothing of any submission until then. WARM -> READY."""
        target = self._next(PRESTART)
        self._start_zygote(job)
        self._prestarted_job = job
        self._state = target

    def begin(self, submission: Path, module: str, job: dict, source: bytes | None = None,
              code: CodeType | None = None) -> None:
        """Start one submission: a fresh job folder holding only the submission, a fresh zygote.

        ``job`` holds the limits and forbidden imports (``commands.job()``); no program. They go to
        the zygote with its plan (it is isolated before its job comes), and its job pipe gets the
        submission alone, which the zygote writes into its job folder (the grader writes nothing
        there: the folder may be a tmpfs of the zygote's own). ``source`` is the submission's
        content as the grader checked it (default: the file's content now), and ``code`` the module
        compiled from it, which the zygote then runs instead of compiling the file again; its
        filename should be the submission's name. Begun again while RUNNING (or STOPPING), the same
        submission starts over in a fresh zygote, for the runs that are left."""
        target = self._next(BEGIN)
        if source is None:
            source = submission.read_bytes()
        if not self._prestarted_for(job):
            if self._zygote is not None or self._job_folder is not None:
                self._end_zygote()
            self._start_zygote(job)
        self._prestarted_job = None
        zygote, job_dir = self._zygote, self.job_dir
        assert zygote is not None and job_dir is not None and self.plan is not None
        self.runs.output_limit = job["output_limit"]
        # Programs go out one per run (see Scheduler.run_all): no program sits in sandbox memory before it runs.
        # The source is the bytes the grader checked and compiled, not a later edit; its limits went with the plan.
        config = {"kind": "job", "submission": str(job_dir / submission.name), "module": module,
                  "source": binascii.b2a_base64(source, newline=False).decode("ascii")}
        if code is not None:
            config["code"] = pack_code(code)
        zygote.send(config)
        self._state = target

    def end(self, how: End) -> None:
        """End what the sandbox holds, as ``how`` says (see :class:`End` and :mod:`grader.sandbox.states`).

        KILL: SIGKILL the current zygote's container and return (a run out of time; a check whose
        runs are done, which judges while it dies); the next ``begin`` or end waits for it.
        SUBMISSION: kill the submission's processes and wait until the warden reports its container
        empty (else retire the warden with everything under it), delete its job folder; keep the
        warden warm when that is safe, else retire it (the next zygote gets a fresh one). ABORT, from
        any thread (Ctrl-C): kill this sandbox's processes now; the thread driving it finds them dead
        and stops, and nothing starts in it again; its pipes stay open until CLOSE. CLOSE: end the
        submission and the warden, remove the cgroup, release the sandbox uid; idempotent."""
        if how is End.ABORT:  # a flag, not the state: the driving thread may move that meanwhile
            self._aborted = self._state is not State.CLOSED
            if self._aborted:
                self._abort()
            return
        target = self._next(how)
        if self._state is State.CLOSED:
            return
        if how is End.KILL:
            self._kill_container()
        elif how is End.SUBMISSION:
            self._end_submission()
        else:
            self._close()
        self._state = target

    def _next(self, move: Move) -> State:
        """The state ``move`` leads to, or StateError (before anything is done)."""
        return after(self.state, move)

    # ------------------------------------------------------------------ the warden

    def _spawn(self, warden: Warden | None = None) -> None:
        if self._aborted:
            raise StateError("an aborted sandbox starts no new warden")
        if warden is None:
            warden = Warden(self.slot, claim=self._claim, uid=self._plan.uid if self._plan is not None else None)
        self._warden = warden
        self._claim = warden.claim or self._claim
        self.process = warden.process
        self._control = warden.control
        self._control.setblocking(False)
        self._warden_dead = False
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._control.fileno(), selectors.EVENT_READ)
        self.warden_started = time.monotonic()
        # Into this sandbox's memory-only cgroup now, while it imports numpy (see sandbox_cgroup.py).
        self.plan = plan = self._plan_now()
        self._cgroup.move_warden(self.process.pid, plan)

    def _retire_warden(self) -> None:
        """Kill the warden and its whole tree, reap it, close its socket."""
        if self._zygote is not None:
            self._kill_container()
        if self.process.poll() is None:
            proctree.kill_children(self.process.pid)
        try:
            self.process.kill()
        except ProcessLookupError:
            pass
        self.process.wait()
        if self._zygote is not None:
            self._close_zygote()
        self._selector.close()
        self._control.close()
        self._warden_dead = True

    def _plan_now(self) -> IsolationPlan:
        """The isolation plan; as root, with the sandbox uid its warden holds machine-wide."""
        from grader.sandbox.isolation import plan_isolation
        if self._plan is not None:
            return self._plan
        if self.plan is not None and (self._claim is None or self.plan.uid == self._claim.uid):
            return self.plan
        return plan_isolation(self.slot, uid=self._claim.uid if self._claim else None)

    # ------------------------------------------------------------------ a zygote

    def _start_zygote(self, job: dict) -> None:
        """A fresh, empty job folder and a fresh zygote (a new warden first, if it died), waiting
        for its job on its own pipe."""
        if self._warden_dead:
            self._spawn()
        self.plan = self._plan_now()
        self._job_folder = job_folder = job_folders.JobFolder()
        self.plan.prepare_folder(job_folder.path)
        pipes = ZygotePipes(channels=self.runs.channels)  # those running, and those queued
        container = self._cgroup.for_job(self.plan, job)
        self._zygote = zygote = ZygoteLink(pipes, Intake(self._budget, window=self.runs.at_once), container,
                                           self._selector)
        plan = {**self.plan.child_config(job_folder.path), "memory_mb": job["memory_mb"],
                "forbidden": list(job["forbidden"])}
        if zygote.container is not None:
            plan["cgroup"] = self._cgroup.joins(zygote.container)
        # The plan (the job's limits and forbidden modules among it) goes to the warden, with the
        # zygote's pipes; the job (the submission's code, its name) goes into the zygote's own job
        # pipe: no warden holds a byte of it.
        if not self._warden.start(plan, pipes.child_ends()):
            self._warden_dead = True
        pipes.close_child_ends()

    def _prestarted_for(self, job: dict) -> bool:
        """Whether a zygote started by :meth:`prestart` waits, alive, for a job of these limits."""
        zygote = self._zygote
        if zygote is None or self._prestarted_job != job:
            return False
        for key, _ in self._selector.select(0):  # what came while nobody listened (its end, say)
            self._event(key.fd)
        return not self.zygote_gone and self.process.poll() is None

    def _kill_container(self) -> None:
        """SIGKILL the current zygote's container: its reaper (process 1 of its PID namespace, whose
        death takes every process of it along) or the zygote, and where there is no PID namespace,
        its cgroup as a whole. Does not wait; the warden kills whatever is left and reports."""
        zygote = self._zygote
        if zygote is None or self._warden_dead or zygote.ended is not None:
            return
        target = zygote.reaper or zygote.pid
        if target is not None and target > 0:
            try:
                os.kill(target, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not zygote.namespaced and zygote.container is not None:
            zygote.container.kill(but=frozenset({self.process.pid}))

    def _end_zygote(self) -> None:
        """Kill the current zygote's container and wait until the warden reports it empty (else
        the warden is retired, with everything under it); then close its pipes, remove its cgroup
        and the job folder."""
        zygote = self._zygote
        if zygote is not None:
            if zygote.ended is None and not self._warden_dead:
                deadline = time.monotonic() + CONTAINER_SECONDS
                self.pump(lambda: zygote.pid is not None or zygote.ended is not None, deadline)
                self._kill_container()
                zygote.given_up = False  # killed now: the warden will report its container over
                self.pump(lambda: zygote.ended is not None, deadline)
            reported = zygote.ended is not None and bool(zygote.ended.get("empty"))
            if not self._cgroup.found_empty(zygote.container, self.process.pid, reported) and not self._warden_dead:
                self._retire_warden()
        if self._zygote is not None:
            self._close_zygote()
        self._remove_job_dir()

    def _close_zygote(self) -> None:
        zygote, self._zygote = self._zygote, None
        if zygote is not None:
            zygote.close()

    def _remove_job_dir(self) -> None:
        if self._job_folder is not None:
            self._job_folder.remove()  # never raises: a folder it could not remove is swept later
            self._job_folder = None

    # ------------------------------------------------------------------ the ends

    def _end_submission(self) -> None:
        self._end_zygote()
        self._prestarted_job = None
        self._budget = Budget()
        if self.plan is not None and not self.plan.reusable and not self._warden_dead:
            self._retire_warden()

    def _abort(self) -> None:
        if self.process.returncode is not None:
            return
        self._kill_container()
        proctree.kill_children(self.process.pid)
        try:
            os.kill(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _close(self) -> None:
        self._cgroup.settle()  # a warden move still in flight ends before the cgroup is removed
        self._retire_warden()
        self._remove_job_dir()
        job_folders.sweep()  # what dead graders left, now that this one's work is done
        self._cgroup.remove()
        if self._claim is not None:
            self._claim.release()
            self._claim = None

    # ------------------------------------------------------------------ reading its pipes

    def pump(self, done: Callable[[], bool], deadline: float) -> bool:
        """Read every pipe until ``done()`` or the deadline; False on timeout, or when nothing more
        can come (the zygote is gone, or its warden)."""
        while not done():
            if self.zygote_gone:
                return done()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            for key, _ in self._selector.select(remaining):
                self._event(key.fd)
        return True

    def _event(self, fd: int) -> None:
        if fd == self._control.fileno():
            self._warden_reports()
        elif self._zygote is not None and self._zygote.owns(fd):
            self._zygote.readable(fd)

    def _warden_reports(self) -> None:
        """The warden's reports (trusted): which pid the zygote has, and when its container is over."""
        reports, alive = self._warden.reports()
        if not alive:
            self._selector.unregister(self._control.fileno())
            self._warden_dead = True
        zygote = self._zygote
        if zygote is None:
            return
        for report in reports:
            if "zygote" in report and zygote.pid is None:
                zygote.pid, zygote.reaper = report["zygote"], report.get("reaper")
            elif "exited" in report and report["exited"] == zygote.pid:
                # Everything the dead zygote wrote is in the pipes already: read it before concluding.
                zygote.drain(own=False)
                zygote.ended = report


_undumpable = False


def _make_grader_undumpable() -> None:
    """PR_SET_DUMPABLE 0: our /proc files become root's, so a sandbox with our uid cannot read
    /proc/<grader>/mem or /environ, nor ptrace us."""
    global _undumpable
    if not _undumpable:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
        _undumpable = True
