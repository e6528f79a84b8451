"""The grader's side of the sandbox: start it, feed it, time it, read it, kill it.

:class:`Sandbox` owns one warden (see ``child.py``) and, per zygote, that zygote's container and
fresh pipes. It never interprets what a scenario observed; it only returns raw, bounded, strictly
decoded outcomes (:class:`ImportOutcome`, :class:`RunOutcome`) for the runner to judge. Wall-clock
limits are enforced here: the zygote's whole container is killed (its PID namespace, its cgroup,
its subtree) and the warden is reused only once it reports that container provably empty.
"""

from __future__ import annotations

import binascii
import os
import selectors
import signal
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING

from grader.outcomes import ImportOutcome, RunOutcome
from grader.sandbox import job_folders, proctree
from grader.sandbox.framing import WHERE_SIGNAL, pack_code
from grader.sandbox.intake import Budget, Intake
from grader.sandbox.link import Capture, ZygoteLink
from grader.sandbox.spawn import Warden, ZygotePipes

if TYPE_CHECKING:
    from grader.sandbox.cgroups import Container
    from grader.sandbox.isolation import IsolationPlan
    from grader.sandbox.uids import UidClaim

STARTUP_SECONDS = 60.0  # a clean interpreter plus numpy, even on a loaded machine
CONTAINER_SECONDS = 10.0  # for a killed zygote's container to be reported empty

# How long a timed-out run may take to say where it is (WHERE_SIGNAL) before its container is killed:
# a Python loop answers within milliseconds; code stuck in one long C call does not answer at all.
WHERE_SECONDS = 0.3

# Commands waiting in the job pipe beside the runs running: the zygote goes on through them while
# the grader is busy elsewhere (judging, reading another sandbox's results, loading the checks).
QUEUED_AHEAD = 4


@dataclass
class _Queued:
    """A run whose command is in the job pipe: which scenario, its limit, its output channel."""

    index: int
    seconds: float
    channel: int
    written: float
    token: int


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


class Sandbox:
    """A warden process that serves submissions one at a time, each in a fresh zygote.

    ``at_once``: how many public scenarios of a submission may run at the same time (a check uses
    its machine's second core; a batch, which keeps every core busy with a sandbox each, runs them
    one at a time). Start it early: the interpreter and numpy load while you prepare. Per submission: ``send_job``,
    ``wait_ready``, ``run_all`` (or ``run`` per scenario), then ``stop`` (kills that submission's
    processes and deletes its job folder; the warden stays warm for the next one when the isolation
    level keeps submissions apart, see :attr:`IsolationPlan.reusable`). ``close`` ends it all. A
    warden that died is started again by the next ``send_job``.
    """

    def __init__(self, slot: int = 0, plan: IsolationPlan | None = None, warden: Warden | None = None,
                 at_once: int = 1):
        _make_grader_undumpable()
        self.slot, self._plan = slot, plan
        self.at_once = max(1, at_once)
        self.plan: IsolationPlan | None = plan
        self._job_folder: job_folders.JobFolder | None = None  # the current one, held while it is ours
        self.output_limit = 65536
        self._closed = False
        self._claim: UidClaim | None = None
        self._budget = Budget()
        self._cgroup: Container | None = None  # this sandbox's cgroup, reused while provably empty
        self._current: ZygoteLink | None = None
        self._prestarted_job: dict | None = None  # the job settings of a zygote prestart() began
        self._aborted = False
        self._reset()
        self._spawn(warden)  # a warden started earlier (spawn.Warden) is adopted as it is

    @classmethod
    def for_a_check(cls, warden: Warden | None = None) -> Sandbox:
        """A sandbox for one student's check (around ``warden``, when one was started earlier): its
        public scenarios run two at a time where there is a second core for them."""
        return cls(warden=warden, at_once=2 if (os.cpu_count() or 1) > 1 else 1)

    def _reset(self) -> None:
        """Forget everything about the previous zygote."""
        self.isolation: tuple[str, ...] = ()
        self.forbidden_seen: list[str] = []
        self._zygote: int | None = None
        self._dead = False  # the current zygote is gone (or the whole warden)
        self._next_channel = 0

    # ------------------------------------------------------------------ lifecycle

    def _spawn(self, warden: Warden | None = None) -> None:
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
        self._started = time.monotonic()
        self._warden_move = self._move_warden_early()

    def _move_warden_early(self) -> WardenMove | None:
        """Put the new warden into this sandbox's memory-only cgroup (where the machine has one: a
        cgroup v1 memory folder) now, while it imports numpy. Its zygotes are born in that cgroup
        (see child.py); a move into a cgroup waits for a grace period of RCU, which then passes
        during that import instead of before the first zygote."""
        self.plan = plan = self._plan_now()
        if not plan.cgroups:
            return None
        container = self._sandbox_cgroup()
        folder = container.memory_only() if container is not None else None
        return WardenMove(self.process.pid, folder) if folder is not None else None

    def _retire_warden(self) -> None:
        """Kill the warden and its whole tree, reap it, close its socket."""
        if self._current is not None:
            self._kill_container()
        if self.process.poll() is None:
            proctree.kill_children(self.process.pid)
        try:
            self.process.kill()
        except ProcessLookupError:
            pass
        self.process.wait()
        if self._current is not None:
            self._close_zygote()
        self._selector.close()
        self._control.close()
        self._warden_dead = True

    def close(self) -> None:
        """End the current submission and the warden. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._warden_move is not None:
            self._warden_move.done()  # a move still in flight ends before the cgroup is removed
        self._retire_warden()
        self._remove_job_dir()
        job_folders.sweep()  # what dead graders left, now that this one's work is done
        if self._cgroup is not None:
            from grader.sandbox import cgroups
            self._cgroup.remove()
            self._cgroup = None
            where = cgroups.hierarchy()
            if where is not None:
                cgroups.release(where)
        if self._claim is not None:
            self._claim.release()
            self._claim = None

    def stop(self) -> None:
        """End the current submission: kill its processes, delete its job folder, keep the warden
        warm when that is safe (else retire it; the next ``send_job`` spawns a fresh one)."""
        self._end_zygote()
        self._prestarted_job = None
        self._budget = Budget()
        if self.plan is not None and not self.plan.reusable and not self._warden_dead:
            self._retire_warden()
        self._reset()

    def _end_zygote(self) -> None:
        """Kill the current zygote's container and wait until the warden reports it empty (else
        the warden is retired, with everything under it); then close its pipes, remove its cgroup
        and the job folder."""
        zygote = self._current
        if zygote is not None:
            if zygote.ended is None and not self._warden_dead:
                deadline = time.monotonic() + CONTAINER_SECONDS
                self._pump(lambda: zygote.pid is not None or zygote.ended is not None, deadline)
                self._kill_container()
                self._dead = False  # pump on until the warden reports the container over
                self._pump(lambda: zygote.ended is not None, deadline)
            if not self._container_empty(zygote) and not self._warden_dead:
                self._retire_warden()
        if self._current is not None:
            self._close_zygote()
        self._remove_job_dir()

    def _container_empty(self, zygote: ZygoteLink) -> bool:
        """Whether the warden reported the container empty, and its cgroup (if any) is; a cgroup
        found otherwise is killed, and replaced for the next zygote unless it empties at once."""
        empty = zygote.ended is not None and bool(zygote.ended.get("empty"))
        warden = frozenset({self.process.pid})
        if zygote.container is not None and not zygote.container.empty(but=warden):
            zygote.container.kill(but=warden)
            empty = zygote.container.wait_empty(1.0, but=warden) and empty
        if not empty and zygote.container is not None:  # not to be reused: a fresh one for the next zygote
            zygote.container.remove()
            self._cgroup = None
        return empty

    def _close_zygote(self) -> None:
        zygote, self._current = self._current, None
        if zygote is not None:
            zygote.close()

    @property
    def job_dir(self) -> Path | None:
        """The current zygote's job folder (None between submissions)."""
        return self._job_folder.path if self._job_folder is not None else None

    def _remove_job_dir(self) -> None:
        if self._job_folder is not None:
            self._job_folder.remove()  # never raises: a folder it could not remove is swept later
            self._job_folder = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _kill_container(self) -> None:
        """SIGKILL the current zygote's container: its reaper (process 1 of its PID namespace, whose
        death takes every process of it along) or the zygote, and where there is no PID namespace,
        its cgroup as a whole. Does not wait; the warden kills whatever is left and reports."""
        zygote = self._current
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

    def kill_submission(self) -> None:
        """SIGKILL the current submission's container, without waiting for it to die. On its own: for
        a caller about to ``close``, which then finds it gone (and still sweeps, in order)."""
        self._kill_container()

    def abort(self) -> None:
        """Kill this sandbox's processes now, from any thread (Ctrl-C): the thread driving it finds
        them dead and stops, and no new warden starts in it. Its pipes stay open until :meth:`close`."""
        self._aborted = True
        if self.process.returncode is not None:
            return
        self.kill_submission()
        proctree.kill_children(self.process.pid)
        try:
            os.kill(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def sweep(self) -> int:
        """Kill every process of the current container but the zygote: the strays a scenario left.
        Orphans come to the container's reaper (process 1 of its PID namespace) or, without one, to
        the warden (a subreaper), while the scenario processes, the next one included, are the
        zygote's children."""
        return self._sweep(with_zygote_children=False)

    def _sweep(self, with_zygote_children: bool) -> int:
        zygote = self._current
        if zygote is None or zygote.pid is None or zygote.ended is not None or self.process.poll() is not None:
            return 0
        roots = [zygote.reaper or self.process.pid] + ([zygote.pid] if with_zygote_children else [])
        return proctree.kill_children(roots, keep=frozenset({zygote.pid}))

    # ------------------------------------------------------------------ protocol

    def send_job(self, submission: Path, module: str, job: dict, source: bytes | None = None,
                 code: CodeType | None = None) -> None:
        """Start one submission: a fresh job folder holding only the submission, a fresh zygote.

        ``job`` holds the limits and forbidden imports (``commands.job()``); no program. They go to
        the zygote with its plan (it is isolated before its job comes), and its job pipe gets the
        submission alone, which the zygote writes into its job folder (the grader writes nothing
        there: the folder may be a tmpfs of the zygote's own). ``source`` is the submission's
        content as the grader checked it (default: the file's content now), and ``code`` the module
        compiled from it, which the zygote then runs instead of compiling the file again; its
        filename should be the submission's name."""
        if self._closed or self._aborted:
            raise RuntimeError("this sandbox is closed")
        if not self._prestarted_for(job):
            if self._current is not None or self.job_dir is not None:
                self._end_zygote()
                self._reset()
            self._start_zygote(job)
        self._prestarted_job = None
        zygote, job_dir = self._current, self.job_dir
        assert zygote is not None and job_dir is not None and self.plan is not None
        if source is None:
            source = submission.read_bytes()
        self.output_limit = job["output_limit"]
        # Programs go out one per run (see run_all()): no program sits in sandbox memory before it runs.
        # The source is the bytes the grader checked and compiled, not a later edit; its limits went with the plan.
        config = {"kind": "job", "submission": str(job_dir / submission.name), "module": module,
                  "source": binascii.b2a_base64(source, newline=False).decode("ascii")}
        if code is not None:
            config["code"] = pack_code(code)
        zygote.send(config)

    def prestart(self, job: dict) -> None:
        """Start the next submission's zygote now, in an empty job folder: a ``send_job`` with the
        same limits then only hands it its job. For a caller that waits between submissions
        (``--watch``); the zygote holds nothing of any submission until then."""
        if self._closed or self._aborted or self._current is not None or self.job_dir is not None:
            return
        self._start_zygote(job)
        self._prestarted_job = job

    def _prestarted_for(self, job: dict) -> bool:
        """Whether a zygote started by :meth:`prestart` waits, alive, for a job of these limits."""
        zygote = self._current
        if zygote is None or self._prestarted_job != job:
            return False
        for key, _ in self._selector.select(0):  # what came while nobody listened (its end, say)
            self._event(key.fd)
        return zygote.ended is None and not self._dead and not self._warden_dead and self.process.poll() is None

    def _start_zygote(self, job: dict) -> None:
        """A fresh, empty job folder and a fresh zygote (a new warden first, if it died), waiting
        for its job on its own pipe."""
        if self._warden_dead:
            self._reset()
            self._spawn()
        self.plan = self._plan_now()
        self._job_folder = job_folder = job_folders.JobFolder()
        self.plan.prepare_folder(job_folder.path)
        pipes = ZygotePipes(channels=self.at_once + QUEUED_AHEAD)  # those running, and those queued
        container = self._container_for(self.plan, job)
        self._current = zygote = ZygoteLink(pipes, Intake(self._budget, window=self.at_once), container,
                                            self._selector)
        plan = {**self.plan.child_config(job_folder.path), "memory_mb": job["memory_mb"],
                "forbidden": list(job["forbidden"])}
        if zygote.container is not None:
            plan["cgroup"] = zygote.container.joins
            moved, self._warden_move = self._warden_move, None
            if moved is not None and moved.done():  # the warden is in it already: it need not move itself
                for entry in plan["cgroup"]:
                    entry["warden_in"] = entry["procs"] == str(moved.folder / "cgroup.procs")
        # The plan (the job's limits and forbidden modules among it) goes to the warden, with the
        # zygote's pipes; the job (the submission's code, its name) goes into the zygote's own job
        # pipe: no warden holds a byte of it.
        if not self._warden.start(plan, pipes.child_ends()):
            self._dead = self._warden_dead = True
        pipes.close_child_ends()

    def _plan_now(self) -> IsolationPlan:
        """The isolation plan; as root, with the sandbox uid its warden holds machine-wide."""
        from grader.sandbox.isolation import plan_isolation
        if self._plan is not None:
            return self._plan
        if self.plan is not None and (self._claim is None or self.plan.uid == self._claim.uid):
            return self.plan
        return plan_isolation(self.slot, uid=self._claim.uid if self._claim else None)

    def _container_for(self, plan: IsolationPlan, job: dict) -> Container | None:
        """This sandbox's cgroup (made once, where the machine allows, and reused while it is found
        empty after each zygote), with the limits of this job."""
        if not plan.cgroups:
            return None
        container = self._sandbox_cgroup()
        if container is None:
            return None
        # Processes: the sandbox's own and a few more (a keeper, zombies). Memory: the submission's whole
        # container, zygote and page cache included, and (where the warden holds it, see child.py)
        # the warden's own.
        container.limit(pids=(plan.nproc or 0) + 4, memory_bytes=(job["memory_mb"] + 256) * 1024 * 1024)
        return container

    def _sandbox_cgroup(self) -> Container | None:
        """This sandbox's cgroup, made once where the machine lets the grader make one."""
        if self._cgroup is None:
            from grader.sandbox import cgroups
            where = cgroups.hierarchy()
            if where is None:
                return None
            self._cgroup = cgroups.Container(where, f"slot-{self.slot}-{time.monotonic_ns()}")
        return self._cgroup

    def wait_ready(self, import_seconds: float) -> ImportOutcome:
        """Wait for the submission's import (the import limit starts once the sandbox is up)."""
        begin = time.monotonic()
        self._begin_capture()
        outcome = ImportOutcome(ok=False)
        zygote = self._current
        startup = max(self._started + STARTUP_SECONDS, begin + 10.0)  # a warm warden answers at once
        if zygote is None or not self._pump(lambda: zygote.pid is not None, startup) or (zygote.pid or 0) <= 0:
            outcome.problem = self._death_or("the sandbox did not start")
            self._dead = True
        else:
            intake = zygote.intake
            self._pump(lambda: intake.imported is not None or intake.exceeded is not None,
                       time.monotonic() + import_seconds)
            if intake.exceeded is not None:
                outcome.problem = intake.exceeded
                self._kill_container()
            elif intake.imported is not None:
                outcome.ok = intake.imported["kind"] == "ready"
                outcome.error = intake.imported.get("error")
            elif self._dead:
                outcome.problem = self._death_or("the sandbox stopped before the import finished")
            else:
                outcome.timed_out = True
                outcome.problem = f"importing the submission took longer than {import_seconds:g} s"
                self._kill_container()
        outcome.duration = time.monotonic() - begin
        if zygote is not None:
            zygote.drain(results=False)
        outcome.stdout, outcome.stderr = self._end_capture()
        self._take_reports()
        if outcome.ok:  # no scenario has started yet: every other process, the zygote's children too, is a stray
            self._sweep(with_zygote_children=True)
        return outcome

    def run(self, index: int, seconds: float, scenario: dict) -> RunOutcome:
        """Run one ``scenario`` (a ``Program.payload``); see :meth:`run_all`."""
        return next(self.run_all([(index, seconds, scenario)]))[1]

    def run_all(self, runs: Iterable[tuple[int, float, dict]], at_once: int | None = None
                ) -> Iterator[tuple[int, RunOutcome]]:
        """Run each ``(index, seconds, scenario payload)`` of ``runs``, each in a fresh fork, up to
        ``at_once`` at the same time (default: the sandbox's ``at_once``; never more); yield
        ``(index, outcome)`` in the order of ``runs``. A run may take ``seconds`` of wall-clock
        time, counted from the end of the run before it in that order.

        The next commands (up to :data:`QUEUED_AHEAD`) wait in the job pipe while scenarios
        run, so the zygote goes on without a round trip through the grader (``runs`` is consumed
        ahead). Each run writes to its own channel, so what a scenario prints or sends is never
        taken for another's. After a timeout or a dead zygote the iteration ends (the zygote is
        killed, with any run beside it and the commands queued): the submission must be started
        again (``send_job``) for the runs that are left; the runner does that.
        """
        runs = iter(runs)
        at_once = self.at_once if at_once is None else max(1, min(at_once, self.at_once))
        queued: deque[_Queued] = deque()
        previous_end = 0.0
        while True:
            self._fill(runs, queued, at_once)
            if not queued:
                return
            current = queued.popleft()
            outcome = self._await(current, max(current.written, previous_end))
            previous_end = time.monotonic()
            if outcome.timed_out or outcome.sandbox_died:
                yield current.index, outcome
                return
            self._fill(runs, queued, at_once)  # the zygote has the next commands while the caller judges this one
            yield current.index, outcome

    def _fill(self, runs: Iterator[tuple[int, float, dict]], queued: deque[_Queued], at_once: int) -> None:
        """Queue commands until ``at_once`` run and QUEUED_AHEAD more wait in the job pipe (or none is left)."""
        while self._current is not None and len(queued) < min(len(self._current.channel_captures),
                                                                at_once + QUEUED_AHEAD) \
                and self._queue_next(runs, queued, at_once):
            pass

    def _queue_next(self, runs: Iterator[tuple[int, float, dict]], queued: deque[_Queued], at_once: int) -> bool:
        """Send the next run's command on a fresh output channel; False when there is none."""
        if self._current is None:
            return False
        following = next(runs, None)
        if following is None:
            return False
        index, seconds, scenario = following
        zygote = self._current
        channel = self._next_channel
        self._next_channel = (channel + 1) % len(zygote.channel_captures)
        zygote.channel_captures[channel] = self._fresh_captures()
        token = zygote.channel_tokens[channel] = zygote.intake.expect(index)
        command = {"run": index, "channel": channel, "scenario": scenario}
        if at_once > 1:
            command["at_once"] = at_once
        zygote.send(command)
        queued.append(_Queued(index, seconds, channel, written=time.monotonic(), token=token))
        return True

    def _await(self, run: _Queued, begin: float) -> RunOutcome:
        """Read until ``run`` has ended, or kill the container once its time is up."""
        outcome = RunOutcome()
        zygote = self._current
        if self._dead or zygote is None:
            outcome.sandbox_died = True
            return outcome
        zygote.captures = zygote.channel_captures[run.channel]
        intake = zygote.intake
        finished = self._pump(lambda: intake.exit(run.token) is not None or intake.exceeded is not None,
                              begin + run.seconds)
        outcome.duration = time.monotonic() - begin
        if intake.exceeded is not None and intake.exit(run.token) is None:
            outcome.problem = intake.exceeded
            outcome.sandbox_died = True
            self._kill_container()
        elif not finished and intake.exit(run.token) is None:
            if self._dead:
                outcome.sandbox_died = True
            else:
                outcome.timed_out = True
                self._ask_where(zygote, run.token)
                self._kill_container()  # the zygote too: it cannot be trusted to stop the program
        elif not self._dead:
            self.sweep()  # first: a stray's last words land here, not in a later run on this channel
        zygote.drain(results=False, channel=run.channel)  # its result may still be in its pipe
        self._collect(zygote, run.token, outcome)
        outcome.where = intake.where(run.token) if outcome.timed_out else None
        intake.forget(run.token)
        outcome.output_capped = any(capture.dropped for capture in zygote.captures)
        outcome.stdout, outcome.stderr = self._end_capture()
        return outcome

    def _ask_where(self, zygote: ZygoteLink, token: int) -> None:
        """Before the kill: ask the zygote's process group (its own session: the zygote, its scenario
        processes and what they forked) where the run is. The scenario process answers on its channel
        (plain text, shown as it is); the zygote ignores the signal. At most WHERE_SECONDS."""
        if zygote.pid is None or zygote.pid <= 0 or zygote.ended is not None:
            return
        try:
            os.killpg(zygote.pid, WHERE_SIGNAL)
        except (ProcessLookupError, PermissionError, OverflowError):
            return
        intake = zygote.intake
        self._pump(lambda: intake.where(token) is not None or intake.exit(token) is not None
                   or intake.exceeded is not None, time.monotonic() + WHERE_SECONDS)

    def _collect(self, zygote: ZygoteLink, token: int, outcome: RunOutcome) -> None:
        """Move what the intake kept for the run ``token`` into ``outcome``."""
        intake = zygote.intake
        result, ended = intake.result(token), intake.exit(token)
        if result is not None:
            outcome.has_result = True
            outcome.observations = result.get("observations")
            outcome.error = result.get("error")
        if ended is not None:
            outcome.exit = {k: v for k, v in ended.items() if k in ("code", "signal")}
        elif not outcome.timed_out:
            outcome.sandbox_died = True
        if outcome.problem is None:
            outcome.problem = intake.problem(token)
        self._take_reports()

    def _take_reports(self) -> None:
        if self._current is not None:
            self.isolation = self.isolation or self._current.intake.isolation
            self.forbidden_seen = self._current.intake.forbidden

    # ------------------------------------------------------------------ plumbing

    def _pump(self, done, deadline: float) -> bool:
        """Read every pipe until ``done()`` or the deadline; False on timeout or death."""
        while not done():
            if self._dead or self._warden_dead:
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
        elif self._current is not None and self._current.owns(fd):
            self._current.readable(fd)

    def _warden_reports(self) -> None:
        """The warden's reports (trusted): which pid the zygote has, and when its container is over."""
        reports, alive = self._warden.reports()
        if not alive:
            self._selector.unregister(self._control.fileno())
            self._dead = self._warden_dead = True
        zygote = self._current
        if zygote is None:
            return
        for report in reports:
            if "zygote" in report and zygote.pid is None:
                zygote.pid, zygote.reaper = report["zygote"], report.get("reaper")
                self._zygote = zygote.pid
            elif "exited" in report and report["exited"] == zygote.pid:
                # Everything the dead zygote wrote is in the pipes already: read it before concluding.
                zygote.drain(own=False)
                zygote.ended = report
                self._dead = True

    def _begin_capture(self) -> None:
        if self._current is not None:
            self._current.captures = self._fresh_captures()

    def _fresh_captures(self) -> tuple[Capture, Capture]:
        """Empty stdout and stderr captures, each bounded by the job's output limit."""
        return Capture(self.output_limit), Capture(self.output_limit)

    def _end_capture(self) -> tuple[str, str]:
        if self._current is None:
            return "", ""
        out, err = self._current.captures
        return out.text(), err.text()

    def _death_or(self, default: str) -> str:
        code = self.process.poll()
        if code is None:
            return default
        return default + (f" (killed by signal {-code})" if code < 0 else f" (exit code {code})")


_undumpable = False


def _make_grader_undumpable() -> None:
    """PR_SET_DUMPABLE 0: our /proc files become root's, so a sandbox with our uid cannot read
    /proc/<grader>/mem or /environ, nor ptrace us."""
    global _undumpable
    if not _undumpable:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
        _undumpable = True
