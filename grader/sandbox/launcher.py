"""The grader's side of the sandbox: start it, feed it, time it, read it, kill it.

:class:`Sandbox` owns one warden (see ``child.py``) and, per zygote, that zygote's container and
fresh pipes. It never interprets what a scenario observed; it only returns raw, bounded, strictly
decoded outcomes (:class:`ImportOutcome`, :class:`RunOutcome`) for the runner to judge. Wall-clock
limits are enforced here: the zygote's whole container is killed (its PID namespace, its cgroup,
its subtree) and the warden is reused only once it reports that container provably empty.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Iterable, Iterator

from grader.outcomes import ImportOutcome, RunOutcome
from grader.sandbox import proctree
from grader.sandbox.cleanup import remove_tree
from grader.sandbox.framing import frame, pack_code
from grader.sandbox.intake import Budget, Intake
from grader.sandbox.safe_text import printable
from grader.sandbox.spawn import Warden, ZygotePipes

if TYPE_CHECKING:
    from grader.sandbox.cgroups import Container
    from grader.sandbox.isolation import IsolationPlan
    from grader.sandbox.uids import UidClaim

STARTUP_SECONDS = 60.0  # a clean interpreter plus numpy, even on a loaded machine
CONTAINER_SECONDS = 10.0  # for a killed zygote's container to be reported empty
_CHUNK = 65536


@dataclass
class Capture:
    """The first ``limit`` bytes of a stream; the rest is counted and dropped, never held."""

    limit: int
    data: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        self.data += chunk[:max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        text = printable(self.data.decode("utf-8", errors="replace"))
        return text + (f"\n... [{self.dropped:,} more bytes not shown]" if self.dropped else "")


@dataclass
class _Queued:
    """A run whose command is in the job pipe: which scenario, its limit, its output channel."""

    index: int
    seconds: float
    channel: int
    written: float


class _Zygote:
    """One zygote as the grader sees it: its pipes, its container, what it has sent."""

    def __init__(self, pipes: ZygotePipes, intake: Intake, container: Container | None) -> None:
        self.pipes, self.intake, self.container = pipes, intake, container
        self.pid: int | None = None        # as the warden reported it (None: not started yet)
        self.reaper: int | None = None     # process 1 of its container (None: the zygote is the warden's child)
        self.ended: dict | None = None     # the warden's report that its container is over
        self.outbox = bytearray()          # bytes for the job pipe, written as it takes them

    @property
    def namespaced(self) -> bool:
        return "pid-namespace" in self.intake.isolation


class Sandbox:
    """A warden process that serves submissions one at a time, each in a fresh zygote.

    Start it early: the interpreter and numpy load while you prepare. Per submission: ``send_job``,
    ``wait_ready``, ``run_all`` (or ``run`` per scenario), then ``stop`` (kills that submission's
    processes and deletes its job folder; the warden stays warm for the next one when the isolation
    level keeps submissions apart, see :attr:`IsolationPlan.reusable`). ``close`` ends it all. A
    warden that died is started again by the next ``send_job``.
    """

    def __init__(self, slot: int = 0, plan: IsolationPlan | None = None, warden: Warden | None = None):
        _make_grader_undumpable()
        self.slot, self._plan = slot, plan
        self.plan: IsolationPlan | None = plan
        self.job_dir: Path | None = None
        self.output_limit = 65536
        self._closed = False
        self._claim: UidClaim | None = None
        self._budget = Budget()
        self._zygotes = 0
        self._current: _Zygote | None = None
        self._reset()
        self._spawn(warden)  # a warden started earlier (spawn.Warden) is adopted as it is

    def _reset(self) -> None:
        """Forget everything about the previous zygote."""
        self.isolation: tuple[str, ...] = ()
        self.forbidden_seen: list[str] = []
        self._zygote: int | None = None
        self._dead = False  # the current zygote is gone (or the whole warden)
        self._next_channel = 0
        # Where output read now goes, per stream: the zygote's own pipes (import time, and anything
        # the zygote prints later, charged to the scenario running) and each output channel's.
        self._captures = (Capture(0), Capture(0))
        self._channel_captures: list[tuple[Capture, Capture]] = []
        self._fd_role: dict[int, tuple] = {}

    # ------------------------------------------------------------------ lifecycle

    def _spawn(self, warden: Warden | None = None) -> None:
        warden = warden or Warden()
        self.process = warden.process
        self._control = warden.control
        self._control.setblocking(False)
        self._warden_dead = False
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._control.fileno(), selectors.EVENT_READ)
        self._started = time.monotonic()

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
        self._retire_warden()
        self._remove_job_dir()
        if self._claim is not None:
            self._claim.release()
            self._claim = None

    def stop(self) -> None:
        """End the current submission: kill its processes, delete its job folder, keep the warden
        warm when that is safe (else retire it; the next ``send_job`` spawns a fresh one)."""
        self._end_zygote()
        self._budget = Budget()
        if self.plan is not None and not self.plan.reusable and not self._warden_dead:
            self._retire_warden()
        self._reset()

    def _end_zygote(self) -> None:
        """Kill the current zygote's container and wait until the warden reports it empty (else
        the warden is retired, with everything under it); then close its pipes, remove its cgroup
        and the job folder."""
        zygote = self._current
        if zygote is not None and not self._warden_dead:
            if zygote.ended is None:
                deadline = time.monotonic() + CONTAINER_SECONDS
                self._pump(lambda: zygote.pid is not None or zygote.ended is not None, deadline)
                self._kill_container()
                self._dead = False  # pump on until the warden reports the container over
                self._pump(lambda: zygote.ended is not None, deadline)
            if not self._container_empty(zygote):
                self._retire_warden()
        if self._current is not None:
            self._close_zygote()
        self._remove_job_dir()

    def _container_empty(self, zygote: _Zygote) -> bool:
        if zygote.ended is None:
            return False
        empty = bool(zygote.ended.get("empty"))
        if zygote.container is not None and not zygote.container.empty():
            zygote.container.kill()
            empty = zygote.container.wait_empty(1.0) and empty
        return empty

    def _close_zygote(self) -> None:
        self._drain(*(fd for fd, role in self._fd_role.items() if role[0] != "job"))
        zygote, self._current = self._current, None
        for fd in zygote.pipes.grader_ends():
            if fd in self._fd_role:
                try:
                    self._selector.unregister(fd)
                except (KeyError, ValueError, OSError):
                    pass
            try:
                os.close(fd)
            except OSError:
                pass
        self._fd_role = {}
        if zygote.container is not None:
            zygote.container.remove()

    def _remove_job_dir(self) -> None:
        if self.job_dir is not None:
            remove_tree(self.job_dir)  # never raises: a folder it could not remove stays in the temp folder
            self.job_dir = None

    def __enter__(self) -> "Sandbox":
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
            zygote.container.kill()

    def kill_submission(self) -> None:
        """SIGKILL the current submission's container, without waiting for it to die. On its own: for
        a caller about to ``close``, which then finds it gone (and still sweeps, in order)."""
        self._kill_container()

    def sweep(self) -> int:
        """Kill every process of the current container but the zygote: the strays a scenario left.
        Orphans come to the container's reaper (or, without one, to the warden: both are subreapers),
        while the scenario processes, the next one included, are the zygote's children."""
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

        ``job`` holds the limits and forbidden imports (``Rubric.job()``); no program. ``source``
        is the submission's content as the grader checked it (default: the file's content now),
        and ``code`` the module compiled from it, which the zygote then runs instead of compiling
        the file again; its filename should be the submission's name."""
        if self._closed:
            raise RuntimeError("this sandbox is closed")
        if self._current is not None or self.job_dir is not None:
            self._end_zygote()
            self._reset()
        if self._warden_dead:
            self._reset()
            self._spawn()
        self.plan = self._plan_now()
        self.job_dir = Path(tempfile.mkdtemp(prefix="grader-job-"))
        target = self.job_dir / submission.name
        if source is None:
            target.write_bytes(submission.read_bytes())
        else:
            target.write_bytes(source)  # the bytes the grader checked and compiled, not a later edit
        self.plan.prepare(self.job_dir, target)
        self.output_limit = job["output_limit"]
        pipes = ZygotePipes()
        self._current = zygote = _Zygote(pipes, Intake(self._budget), self._new_container(job))
        self._register(pipes)
        plan = self.plan.child_config(self.job_dir)
        if zygote.container is not None:
            plan["cgroup"] = zygote.container.joins
        # The plan goes to the warden, with the zygote's pipes; the job (the submission's code, its
        # name, its limits) goes into the zygote's own job pipe: no warden holds a byte of it.
        self._tell_warden({"kind": "start", "plan": plan}, pipes.child_ends())
        pipes.close_child_ends()
        # Programs go out one per run (see run_all()): no program sits in sandbox memory before it runs.
        config = {**job, "kind": "job", "submission": str(target), "module": module, "job_dir": str(self.job_dir)}
        if code is not None:
            config["code"] = pack_code(code)
        self._write(config)

    def _plan_now(self) -> IsolationPlan:
        """The isolation plan; as root, with a sandbox uid this process holds machine-wide."""
        from grader.sandbox import uids
        from grader.sandbox.isolation import plan_isolation, uid_base
        if self._plan is not None:
            if self._plan.uid is not None and (self._claim is None or self._claim.uid != self._plan.uid):
                self._claim = uids.claim_exactly(self._plan.uid)
            return self._plan
        if os.geteuid() == 0 and self._claim is None:
            self._claim = uids.claim(uid_base() + self.slot)
        if self.plan is not None and (self._claim is None or self.plan.uid == self._claim.uid):
            return self.plan
        return plan_isolation(self.slot, uid=self._claim.uid if self._claim else None)

    def _new_container(self, job: dict) -> Container | None:
        if not self.plan.cgroups:
            return None
        from grader.sandbox import cgroups
        where = cgroups.hierarchy()
        if where is None:
            return None
        self._zygotes += 1
        headroom = (self.plan.nproc or 0) + 4  # its reaper and keeper, and room for a zombie or two
        return cgroups.Container(where, f"{self.slot}-{self._zygotes}", pids_max=headroom,
                                 memory_bytes=(job["memory_mb"] + 128) * 1024 * 1024)

    def _register(self, pipes: ZygotePipes) -> None:
        self._channel_captures = [(Capture(0), Capture(0)) for _ in pipes.channels_r]
        roles = {pipes.results_r: ("results",), pipes.out_r: ("capture", 0), pipes.err_r: ("capture", 1)}
        for number, (out_r, err_r) in enumerate(pipes.channels_r):
            roles[out_r], roles[err_r] = ("channel", number, 0), ("channel", number, 1)
        for fd in roles:
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ)
        os.set_blocking(pipes.job_w, False)
        roles[pipes.job_w] = ("job",)
        self._fd_role = roles

    def wait_ready(self, import_seconds: float) -> ImportOutcome:
        """Wait for the submission's import (the import limit starts once the sandbox is up)."""
        begin = time.monotonic()
        self._begin_capture()
        outcome = ImportOutcome(ok=False)
        zygote = self._current
        startup = max(self._started + STARTUP_SECONDS, begin + 10.0)  # a warm warden answers at once
        if zygote is None or not self._pump(lambda: zygote.pid is not None, startup) or zygote.pid <= 0:
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
        self._drain_zygote_output()
        outcome.stdout, outcome.stderr = self._end_capture()
        self._take_reports()
        if outcome.ok:  # no scenario has started yet: every other process, the zygote's children too, is a stray
            self._sweep(with_zygote_children=True)
        return outcome

    def run(self, index: int, seconds: float, scenario: dict) -> RunOutcome:
        """Run one ``scenario`` (a ``Program.payload``); see :meth:`run_all`."""
        return next(self.run_all([(index, seconds, scenario)]))[1]

    def run_all(self, runs: Iterable[tuple[int, float, dict]]) -> Iterator[tuple[int, RunOutcome]]:
        """Run each ``(index, seconds, scenario payload)`` of ``runs`` in turn, each in a fresh
        fork; yield ``(index, outcome)`` as each ends. A run may take ``seconds`` of wall-clock
        time, counted from the end of the run before it.

        The next command waits in the job pipe while a scenario runs, so the zygote goes on
        without a round trip through the grader (``runs`` is consumed one ahead). Each run
        writes to its own output channel, so what a scenario prints is never taken for the next
        one's. After a timeout or a dead zygote the iteration ends: the submission must be
        started again (``send_job``) for the runs that are left; the runner does that.
        """
        runs = iter(runs)
        queued: deque[_Queued] = deque()
        previous_end = 0.0
        while True:
            while len(queued) < len(self._channel_captures) and self._queue_next(runs, queued):
                pass
            if not queued:
                return
            current = queued.popleft()
            outcome = self._await(current, max(current.written, previous_end))
            previous_end = time.monotonic()
            yield current.index, outcome
            if outcome.timed_out or outcome.sandbox_died:
                return

    def _queue_next(self, runs: Iterator[tuple[int, float, dict]], queued: deque[_Queued]) -> bool:
        """Send the next run's command on a fresh output channel; False when there is none."""
        if self._current is None:
            return False
        following = next(runs, None)
        if following is None:
            return False
        index, seconds, scenario = following
        channel = self._next_channel
        self._next_channel = (channel + 1) % len(self._channel_captures)
        self._channel_captures[channel] = self._fresh_captures()
        self._current.intake.expect(index)
        self._write({"run": index, "channel": channel, "scenario": scenario})
        queued.append(_Queued(index, seconds, channel, written=time.monotonic()))
        return True

    def _await(self, run: _Queued, begin: float) -> RunOutcome:
        """Read until ``run`` has ended, or kill the container once its time is up."""
        outcome = RunOutcome()
        zygote = self._current
        if self._dead or zygote is None:
            outcome.sandbox_died = True
            return outcome
        self._captures = self._channel_captures[run.channel]
        intake = zygote.intake
        finished = self._pump(lambda: intake.exit(run.index) is not None or intake.exceeded is not None,
                              begin + run.seconds)
        outcome.duration = time.monotonic() - begin
        if intake.exceeded is not None and intake.exit(run.index) is None:
            outcome.problem = intake.exceeded
            outcome.sandbox_died = True
            self._kill_container()
        elif not finished and intake.exit(run.index) is None:
            if self._dead:
                outcome.sandbox_died = True
            else:
                outcome.timed_out = True
                self._kill_container()  # the zygote too: it cannot be trusted to stop the program
        elif not self._dead:
            self.sweep()  # first: a stray's last words land here, not in a later run on this channel
        self._collect(run.index, outcome)
        intake.forget(run.index)
        self._drain(*(fd for fd, role in self._fd_role.items()
                      if role[0] == "capture" or role[:2] == ("channel", run.channel)))
        outcome.stdout, outcome.stderr = self._end_capture()
        return outcome

    def _collect(self, index: int, outcome: RunOutcome) -> None:
        """Move what the intake kept for scenario ``index`` into ``outcome``."""
        intake = self._current.intake
        result, ended = intake.result(index), intake.exit(index)
        if result is not None:
            outcome.has_result = True
            outcome.observations = result.get("observations")
            outcome.error = result.get("error")
        if ended is not None:
            outcome.exit = {k: v for k, v in ended.items() if k in ("code", "signal")}
        elif not outcome.timed_out:
            outcome.sandbox_died = True
        if outcome.problem is None:
            outcome.problem = intake.problem(index)
        self._take_reports()

    def _take_reports(self) -> None:
        if self._current is not None:
            self.isolation = self.isolation or self._current.intake.isolation
            self.forbidden_seen = self._current.intake.forbidden

    # ------------------------------------------------------------------ plumbing

    def _tell_warden(self, message: dict, fds: list[int]) -> None:
        import _socket
        body = json.dumps(message).encode()
        try:
            self._control.setblocking(True)
            self._control.sendmsg([body], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _ints(fds))])
        except OSError:
            self._dead = self._warden_dead_now()
        finally:
            if not self._warden_dead:
                self._control.setblocking(False)

    def _warden_dead_now(self) -> bool:
        self._warden_dead = True
        return True

    def _write(self, message: dict) -> None:
        """Queue a message for the zygote's job pipe; what the pipe takes now is written now, the
        rest by the pump as the zygote reads (a blocking write could wait on a zygote that waits on us)."""
        zygote = self._current
        if zygote is None:
            return
        zygote.outbox += frame(message)
        self._flush(zygote)

    def _flush(self, zygote: _Zygote) -> None:
        job_w = zygote.pipes.job_w
        try:
            while zygote.outbox:
                written = os.write(job_w, zygote.outbox[:_CHUNK * 4])
                del zygote.outbox[:written]
        except BlockingIOError:
            pass
        except OSError:  # the zygote is gone
            zygote.outbox.clear()
        self._want_write(zygote, bool(zygote.outbox))

    def _want_write(self, zygote: _Zygote, wanted: bool) -> None:
        job_w = zygote.pipes.job_w
        registered = job_w in self._selector.get_map()
        if wanted and not registered:
            self._selector.register(job_w, selectors.EVENT_WRITE)
        elif not wanted and registered:
            self._selector.unregister(job_w)

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
            return
        role = self._fd_role.get(fd)
        if role is None:
            return
        if role[0] == "job":
            self._flush(self._current)
            return
        try:
            chunk = os.read(fd, _CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # every writer is gone: the zygote and whatever held a copy
            self._selector.unregister(fd)
            del self._fd_role[fd]
            return
        self._take(fd, role, chunk)

    def _take(self, fd: int, role: tuple, chunk: bytes) -> None:
        if role[0] == "results":
            self._current.intake.feed(chunk)
        elif role[0] == "capture":
            self._captures[role[1]].add(chunk)
        else:
            self._channel_captures[role[1]][role[2]].add(chunk)

    def _warden_reports(self) -> None:
        """The warden's reports (trusted): which pid the zygote has, and when its container is over."""
        while True:
            try:
                body = self._control.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                body = b""
            if not body:
                self._selector.unregister(self._control.fileno())
                self._dead = self._warden_dead = True
                return
            report = json.loads(body)
            zygote = self._current
            if zygote is None:
                continue
            if "zygote" in report and zygote.pid is None:
                zygote.pid, zygote.reaper = report["zygote"], report.get("reaper")
                self._zygote = zygote.pid
            elif "exited" in report and report["exited"] == zygote.pid:
                # Everything the dead zygote wrote is in the pipes already: read it before concluding.
                self._drain(zygote.pipes.results_r)
                zygote.ended = report
                self._dead = True

    def _drain(self, *fds: int) -> None:
        """Read what dead writers left in these pipes, without waiting for more."""
        for fd in fds:
            role = self._fd_role.get(fd)
            if role is None or role[0] == "job":
                continue
            for _ in range(64):
                try:
                    chunk = os.read(fd, _CHUNK)
                except (BlockingIOError, OSError):
                    break
                if not chunk:
                    break
                self._take(fd, role, chunk)

    def _drain_zygote_output(self) -> None:
        self._drain(*(fd for fd, role in self._fd_role.items() if role[0] == "capture"))

    def _begin_capture(self) -> None:
        self._captures = self._fresh_captures()

    def _fresh_captures(self) -> tuple[Capture, Capture]:
        """Empty stdout and stderr captures, each bounded by the job's output limit."""
        return Capture(self.output_limit), Capture(self.output_limit)

    def _end_capture(self) -> tuple[str, str]:
        return self._captures[0].text(), self._captures[1].text()

    def _death_or(self, default: str) -> str:
        code = self.process.poll()
        if code is None:
            return default
        return default + (f" (killed by signal {-code})" if code < 0 else f" (exit code {code})")


def _ints(fds: list[int]) -> bytes:
    import struct
    return struct.pack(f"={len(fds)}i", *fds)


_undumpable = False


def _make_grader_undumpable() -> None:
    """PR_SET_DUMPABLE 0: our /proc files become root's, so a sandbox with our uid cannot read
    /proc/<grader>/mem or /environ, nor ptrace us."""
    global _undumpable
    if not _undumpable:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
        _undumpable = True
