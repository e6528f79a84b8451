"""Executors: grade many submissions and stream each result back as it lands.

An executor takes :class:`GradingJob` s (a submission file, the key it is known by, a seed) and
yields a :class:`Graded` for each, in the order they finish. It never writes a file: the caller (a
batch, an audit) decides what to keep. :class:`LocalExecutor` grades on this machine, in warm
sandboxes; an executor elsewhere needs what :class:`grader.loading.AssignmentFiles` holds.
Closing an executor stops what it is running at once (Ctrl-C): what had not finished is not yielded.
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from grader.formats import ReadContext
from grader.records import record
from grader.results import SubmissionResult
from grader.runner import Run, execute, judge_run
from grader.sandbox.launcher import End, Sandbox
from grader.spec import Assignment
from grader.submission import read_submission
from grader.visibility import Scope


@record
class GradingJob:
    key: str      # what the caller knows it by: a student id, a mutant id...
    path: Path    # the submission file
    seed: int


@record
class Graded:
    job: GradingJob
    result: SubmissionResult


Running = list[tuple[str, float]]  # (job key, seconds it has been running), longest first


class Executor(Protocol):
    def grade(self, jobs: Iterable[GradingJob], scope: Scope,
              on_wait: Callable[[Running], None] | None = None) -> Iterator[Graded]:
        """Grade every job on the ``scope`` scenarios; yield each as it finishes. While nothing
        finishes, ``on_wait`` hears about once a second what is running (for a progress display)."""
        ...

    def close(self) -> None:
        """Stop everything still running, at once; idempotent."""
        ...


Lend = Callable[[], AbstractContextManager[Sandbox]]


def grade_lent(path: Path, assignment: Assignment, lend: Lend, *, seed: int, scope: Scope) -> SubmissionResult:
    """Grade one submission, borrowing a sandbox (``with lend() as sandbox``) only while its programs
    run: it is handed back, ready for the next submission, before this one is judged, so sandboxes
    never wait for the grader. A file that cannot run borrows none."""
    submission = read_submission(path, assignment.forbidden_imports, ReadContext.of(assignment))
    if submission.problem is not None:
        return judge_run(Run(submission, seed, scope, error=submission.problem), assignment)
    with lend() as sandbox:
        try:
            run = execute(submission, assignment, sandbox, seed=seed, scope=scope,
                          inputs=lambda planned: assignment.inputs(planned.id, seed))
        finally:
            sandbox.end(End.SUBMISSION)
    return judge_run(run, assignment)


class SandboxPool:
    """Up to ``size`` warm sandboxes, each in its own slot, lent to one submission at a time.

    A sandbox is started when a submission needs one and none is idle: its interpreter imports numpy
    once and serves submission after submission, each in a fresh zygote. Its slots (and so its
    sandbox users) are ``first_slot`` to ``first_slot + size - 1``: two pools of one machine must not
    share one (a cluster worker claims its own, :mod:`grader.cluster.slots`)."""

    def __init__(self, size: int, first_slot: int = 0):
        self.size = size
        self.first_slot = first_slot
        self._idle: queue.Queue[Sandbox] = queue.Queue()
        self._all: list[Sandbox] = []
        self._lock = threading.Lock()
        self._aborted = False

    @contextlib.contextmanager
    def lend(self) -> Iterator[Sandbox]:
        box = self._take()
        try:
            yield box
        finally:
            self._idle.put(box)

    def _take(self) -> Sandbox:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._aborted:
                raise RuntimeError("the sandbox pool was stopped")
            if len(self._all) < self.size:
                box = Sandbox(slot=self.first_slot + len(self._all))
                self._all.append(box)
                return box
        return self._idle.get()

    def abort(self) -> None:
        """Kill every sandbox's processes now, from any thread; the threads using them see them die."""
        with self._lock:
            self._aborted = True
            boxes = list(self._all)
        for box in boxes:
            box.end(End.ABORT)

    def close(self) -> None:
        with self._lock:
            boxes, self._all = self._all, []
        for box in boxes:
            box.end(End.CLOSE)


class LocalExecutor:
    """This machine's executor: ``workers`` warm sandboxes, and one more thread than sandboxes, which
    reads the next submission and judges the last while every sandbox runs programs."""

    def __init__(self, assignment: Assignment, workers: int):
        self.assignment = assignment
        self.workers = max(1, workers)
        self._pool = SandboxPool(self.workers)
        self._threads = ThreadPoolExecutor(max_workers=self.workers + 1, thread_name_prefix="grader")
        self._closed = False
        self._started: dict[str, float] = {}  # key -> when its grading began (not its wait)

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def grade(self, jobs: Iterable[GradingJob], scope: Scope,
              on_wait: Callable[[Running], None] | None = None) -> Iterator[Graded]:
        """Never more than a few submissions queued, so the grader's memory does not grow with the
        class. A bug of ours in one submission's grading surfaces here rather than vanishing."""
        scope = Scope(scope)
        items = iter(jobs)
        ahead = 2 * (self.workers + 1)
        pending: dict[Future, GradingJob] = {}

        def submit(count: int) -> None:
            for job in itertools.islice(items, count):
                pending[self._threads.submit(self._grade_one, job, scope)] = job

        submit(ahead)
        try:
            while pending and not self._closed:
                done, _ = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                if not done and on_wait is not None:
                    on_wait(self.running())
                for future in done:
                    job = pending.pop(future)
                    if self._closed:  # stopped while it ran: its result is the sandbox's death, not its own
                        return
                    yield Graded(job, future.result())
                submit(len(done))
        except BaseException:
            self.close()
            raise

    def _grade_one(self, job: GradingJob, scope: Scope) -> SubmissionResult:
        self._started[job.key] = time.monotonic()
        try:
            return grade_lent(job.path, self.assignment, self._pool.lend, seed=job.seed, scope=scope)
        finally:
            self._started.pop(job.key, None)

    def running(self) -> Running:
        """What is being graded now, longest first (read from any thread)."""
        now = time.monotonic()
        return sorted(((key, now - began) for key, began in list(self._started.items())), key=lambda item: -item[1])

    def close(self) -> None:
        """Stop at once: nothing more starts, every sandbox is killed, threads wind down."""
        if self._closed:
            return
        self._closed = True
        self._pool.abort()
        self._threads.shutdown(wait=True, cancel_futures=True)  # their sandboxes are dead: quick
        self._pool.close()
