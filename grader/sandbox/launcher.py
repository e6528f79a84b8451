"""The grader's side of the sandbox: start it, feed it, time it, read it, kill it.

:class:`Sandbox` owns one sandbox process tree (see ``child.py``) and every pipe to it. It never
interprets what a scenario observed; it only returns raw, size-limited, strictly decoded
outcomes (:class:`ImportOutcome`, :class:`RunOutcome`) for the runner to judge. Wall-clock limits
are enforced here with SIGKILL to the whole tree, found through the warden's /proc children.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
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
from grader.sandbox.decoding import decode
from grader.sandbox.framing import FrameReader, ProtocolError, frame, pack_code
from grader.sandbox.safe_text import printable
from grader.values import Raised
from grader.sandbox.spawn import Warden

if TYPE_CHECKING:
    from grader.sandbox.isolation import IsolationPlan

STARTUP_SECONDS = 60.0  # a clean interpreter plus numpy, even on a loaded machine
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
        self._reset()
        self._spawn(warden)  # a warden started earlier (spawn.Warden) is adopted as it is

    def _reset(self) -> None:
        """Forget everything about the previous submission."""
        self.isolation: tuple[str, ...] = ()
        self.forbidden_seen: list[str] = []
        self._reader = FrameReader()
        self._messages: list[dict] = []
        self._problems: list[str] = []
        self._zygote: int | None = None
        self._dead = False  # the current zygote is gone (or the whole warden)
        # Where output read now goes, per stream: the zygote's own pipes (import time, and anything
        # the zygote prints later, charged to the scenario running) and each output channel's.
        self._captures = (Capture(0), Capture(0))

    # ------------------------------------------------------------------ lifecycle

    def _spawn(self, warden: Warden | None = None) -> None:
        warden = warden or Warden()
        self.process = warden.process
        self._job_w, self._results_r, self._lifeline_w = warden.job_w, warden.results_r, warden.lifeline_w
        self._status_r, self._out_r, self._err_r = warden.status_r, warden.out_r, warden.err_r
        self._channels = warden.channels_r
        self._channel_of = {fd: (number, stream) for number, pair in enumerate(self._channels)
                            for stream, fd in enumerate(pair)}
        self._channel_captures = [(Capture(0), Capture(0)) for _ in self._channels]
        self._next_channel = 0
        self._status_reader = FrameReader(4096)
        self._warden_dead = False
        self._selector = selectors.DefaultSelector()
        for fd in (self._results_r, self._status_r, self._out_r, self._err_r, *self._channel_of):
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ)
        self._started = time.monotonic()

    def _retire_warden(self) -> None:
        """Kill the warden and its whole tree, reap it, close its pipes."""
        self._kill_tree()
        try:
            self.process.kill()
        except ProcessLookupError:
            pass
        self.process.wait()
        self._selector.close()
        for fd in (self._job_w, self._results_r, self._lifeline_w, self._status_r, self._out_r, self._err_r,
                   *self._channel_of):
            try:
                os.close(fd)
            except OSError:
                pass
        self._warden_dead = True

    def close(self) -> None:
        """End the current submission and the warden. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._retire_warden()
        self._remove_job_dir()

    def stop(self) -> None:
        """End the current submission: kill its processes, delete its job folder, keep the warden
        warm when that is safe (else retire it; the next ``send_job`` spawns a fresh one)."""
        if not self._warden_dead and self._zygote is not None:
            self._kill_tree()
            # The warden reports the zygote's exit once it has reaped it; then it reads jobs again.
            self._pump(lambda: self._dead, time.monotonic() + 10.0)
            if not self._dead:
                self._retire_warden()
        self._drain(self._results_r, self._out_r, self._err_r, *self._channel_of)
        self._remove_job_dir()
        if self.plan is not None and not self.plan.reusable and not self._warden_dead:
            self._retire_warden()
        self._reset()

    def _remove_job_dir(self) -> None:
        if self.job_dir is not None:
            remove_tree(self.job_dir)  # never raises: a folder it could not remove stays in the temp folder
            self.job_dir = None

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _kill_tree(self) -> None:
        """SIGKILL everything below the warden: the zygote first, then every orphan."""
        if self.process.poll() is not None:
            return
        self.kill_submission()
        proctree.kill_children(self.process.pid)

    def kill_submission(self) -> None:
        """SIGKILL the current submission's zygote, without waiting for it to die. On its own: for
        a caller about to ``close``, which then finds it gone (and still sweeps, in order)."""
        if self._zygote is not None and self.process.poll() is None:
            try:
                os.kill(self._zygote, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def sweep(self) -> int:
        """Kill every process in the tree except the warden and the zygote (strays of a scenario)."""
        if self._zygote is None or self.process.poll() is not None:
            return 0
        return proctree.kill_children(self.process.pid, keep=frozenset({self._zygote}))

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
        if self._zygote is not None or self.job_dir is not None:
            self.stop()
        if self._warden_dead:
            self._reset()
            self._spawn()
        self.job_dir = Path(tempfile.mkdtemp(prefix="grader-job-"))
        target = self.job_dir / submission.name
        if source is None:
            shutil.copyfile(submission, target)
        else:
            target.write_bytes(source)  # the bytes the grader checked and compiled, not a later edit
        from grader.sandbox.isolation import plan_isolation  # decided now: the interpreter is already starting
        self.plan = self._plan or plan_isolation(self.slot)
        self.plan.prepare(self.job_dir, target)
        self.output_limit = job["output_limit"]
        # Programs go out one per run (see run_all()): no program sits in sandbox memory before it runs.
        config = {**job, "kind": "job", **self.plan.child_config(self.job_dir),
                  "submission": str(target), "module": module, "job_dir": str(self.job_dir)}
        if code is not None:
            config["code"] = pack_code(code)
        self._write(config)

    def wait_ready(self, import_seconds: float) -> ImportOutcome:
        """Wait for the submission's import (the import limit starts once the sandbox is up)."""
        begin = time.monotonic()
        self._begin_capture()
        outcome = ImportOutcome(ok=False)
        startup = max(self._started + STARTUP_SECONDS, begin + 10.0)  # a warm warden answers at once
        if not self._pump(lambda: self._zygote is not None, startup):
            outcome.problem = self._death_or("the sandbox did not start")
        else:
            found: list[dict] = []

            def arrived() -> bool:
                if not found:
                    found.extend(self._take({"ready", "import_error"}))
                return bool(found)

            if self._pump(arrived, time.monotonic() + import_seconds) and found:
                outcome.ok = found[0]["kind"] == "ready"
                outcome.error = found[0].get("error")
            elif self._dead:
                outcome.problem = self._death_or("the sandbox stopped before the import finished")
            else:
                outcome.timed_out = True
                outcome.problem = f"importing the submission took longer than {import_seconds:g} s"
                self._kill_tree()
        outcome.duration = time.monotonic() - begin
        self._drain(self._out_r, self._err_r)
        outcome.stdout, outcome.stderr = self._end_capture()
        self.sweep()
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
            while len(queued) < len(self._channels) and self._queue_next(runs, queued):
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
        following = next(runs, None)
        if following is None:
            return False
        index, seconds, scenario = following
        channel = self._next_channel
        self._next_channel = (channel + 1) % len(self._channels)
        self._channel_captures[channel] = self._fresh_captures()
        self._write({"run": index, "channel": channel, "scenario": scenario})
        queued.append(_Queued(index, seconds, channel, written=time.monotonic()))
        return True

    def _await(self, run: _Queued, begin: float) -> RunOutcome:
        """Read until ``run`` has ended, or kill the tree once its time is up."""
        outcome = RunOutcome()
        if self._dead:
            outcome.sandbox_died = True
            return outcome
        self._captures = self._channel_captures[run.channel]
        finished = self._pump(lambda: self._collect(run.index, outcome), begin + run.seconds)
        outcome.duration = time.monotonic() - begin
        if not finished:
            outcome.timed_out = True
            self._kill_tree()  # the zygote too: it cannot be trusted to stop the program
        elif not self._dead:
            self.sweep()  # first: a stray's last words land here, not in a later run on this channel
        self._drain(self._out_r, self._err_r, *self._channels[run.channel])
        outcome.stdout, outcome.stderr = self._end_capture()
        return outcome

    def _collect(self, index: int, outcome: RunOutcome) -> bool:
        """Move the messages for scenario ``index`` into ``outcome``; True once its exit is known."""
        while self._messages:
            message = self._messages.pop(0)
            kind = message["kind"]
            if kind == "result" and message.get("index") == index:
                if outcome.has_result:
                    outcome.problem = "the scenario sent more than one result"
                    continue
                outcome.has_result = True
                outcome.observations = message.get("observations")
                outcome.error = message.get("error")
            elif kind == "exit" and message.get("index") == index:
                outcome.exit = {k: v for k, v in message.items() if k in ("code", "signal")}
                return True
        if self._problems and outcome.problem is None:
            outcome.problem = self._problems.pop(0)
        if self._dead:
            outcome.sandbox_died = True
            return True
        return False

    # ------------------------------------------------------------------ plumbing

    def _write(self, message: dict) -> None:
        data = frame(message)
        while data:
            try:
                data = data[os.write(self._job_w, data):]
            except BrokenPipeError:
                self._dead = self._warden_dead = True
                return

    def _pump(self, done, deadline: float) -> bool:
        """Read every pipe until ``done()`` or the deadline; False on timeout or death."""
        while not done():
            if self._dead:
                return done()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            for key, _ in self._selector.select(remaining):
                self._read(key.fd)
        return True

    def _read(self, fd: int) -> None:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        if fd == self._out_r or fd == self._err_r or fd in self._channel_of:
            if chunk:
                self._capture_of(fd).add(chunk)
            else:
                self._selector.unregister(fd)
        elif fd == self._status_r:  # the warden's own reports: trusted
            if not chunk:
                self._warden_gone(fd)
            for body in self._status_reader.feed(chunk):
                if isinstance(body, bytes):
                    self._warden_says(json.loads(body))
        elif not chunk:  # results: the warden holds a writer, so this is the warden's death
            self._warden_gone(fd)
        else:
            for body in self._reader.feed(chunk):
                self._accept(body)

    def _warden_says(self, report: dict) -> None:
        if "zygote" in report:
            self._zygote = report["zygote"]
        elif report.get("exited") == self._zygote and self._zygote is not None:
            # Everything the dead zygote wrote is in the pipes already: read it before concluding.
            self._drain(self._results_r)
            self._dead = True

    def _warden_gone(self, fd: int) -> None:
        self._selector.unregister(fd)
        self._dead = self._warden_dead = True

    def _accept(self, body: bytes | ProtocolError) -> None:
        try:
            if isinstance(body, ProtocolError):
                raise body
            message = _checked_envelope(decode(body, numpy_now=False))  # numpy: at judging
        except ProtocolError as error:
            self._problems.append(f"the sandbox sent an unreadable message: {error}")
            return
        if message["kind"] == "sandbox" and not self.isolation:
            self.isolation = tuple(message["isolation"])  # sent before any student code ran
        elif message["kind"] == "forbidden":
            self.forbidden_seen.append(message["module"])
        else:
            self._messages.append(message)

    def _take(self, kinds: set[str]) -> list[dict]:
        """Remove and return the first queued message of one of ``kinds`` (as a 0/1-item list)."""
        for message in self._messages:
            if message["kind"] in kinds:
                self._messages.remove(message)
                return [message]
        return []

    def _drain(self, *fds: int) -> None:
        """Read what dead writers left in these pipes, without waiting for more."""
        for fd in fds:
            for _ in range(64):
                try:
                    chunk = os.read(fd, _CHUNK)
                except (BlockingIOError, OSError):
                    break
                if not chunk:
                    break
                if fd == self._results_r:
                    for body in self._reader.feed(chunk):
                        self._accept(body)
                else:
                    self._capture_of(fd).add(chunk)

    def _capture_of(self, fd: int) -> Capture:
        if fd in self._channel_of:
            channel, stream = self._channel_of[fd]
            return self._channel_captures[channel][stream]
        return self._captures[fd == self._err_r]

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


# The messages a sandbox may send, and the fields each must have (of these types).
_SHAPES = {"sandbox": {"isolation": list}, "ready": {}, "import_error": {"error": Raised},
           "result": {"index": int}, "exit": {"index": int}, "forbidden": {"module": str}}


def _checked_envelope(message) -> dict:
    """Accept only the message shapes the sandbox may send; anything else is a protocol error."""
    if not isinstance(message, dict) or not isinstance(message.get("kind"), str):
        raise ProtocolError("a message must be an object with a kind")
    kind = message["kind"]
    if kind not in _SHAPES:
        raise ProtocolError(f"unknown message kind {kind[:40]!r}")
    for name, kind_of in _SHAPES[kind].items():
        if not isinstance(message.get(name), kind_of) or isinstance(message.get(name), bool):
            raise ProtocolError(f"a {kind} message needs {name}")
    if kind == "result":
        if ("observations" in message) == ("error" in message) or set(message) - {"kind", "index", "observations", "error"}:
            raise ProtocolError("a result holds either observations or an error")
        if "error" in message and not isinstance(message["error"], Raised):
            raise ProtocolError("a result's error must be an exception record")
    if kind == "exit" and not (isinstance(message.get("code"), int) or isinstance(message.get("signal"), int)):
        raise ProtocolError("an exit message needs a code or a signal")
    if kind == "sandbox" and not all(isinstance(item, str) for item in message["isolation"]):
        raise ProtocolError("isolation must be a list of names")
    return message


_undumpable = False


def _make_grader_undumpable() -> None:
    """PR_SET_DUMPABLE 0: our /proc files become root's, so a sandbox with our uid cannot read
    /proc/<grader>/mem or /environ, nor ptrace us."""
    global _undumpable
    if not _undumpable:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
        _undumpable = True
