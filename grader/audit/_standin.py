"""STAND-IN, deleted when issue 14 lands on main: the executor contract and ``task.functions``.

Written against the lead's announced interface (``grader.executor``: ``GradingJob``, ``Graded``,
``LocalExecutor(assignment, workers)`` with ``.grade(jobs, scope)``, ``Scope``), over today's
``grade_submission`` with warm sandboxes lent per submission, as ``batch._run_parallel`` does.
"""

from __future__ import annotations

import contextlib
import queue
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Iterable, Iterator

from grader.results import SubmissionResult
from grader.runner import grade_submission
from grader.sandbox.launcher import Sandbox
from grader.spec import Assignment


class Scope(str, Enum):
    PUBLIC = "public"
    ALL = "all"


@dataclass(frozen=True)
class GradingJob:
    key: str
    path: Path
    seed: int


@dataclass(frozen=True)
class Graded:
    job: GradingJob
    result: SubmissionResult


class LocalExecutor:
    def __init__(self, assignment: Assignment, workers: int):
        self.assignment, self.workers = assignment, max(1, workers)
        self._sandboxes: queue.Queue[Sandbox] = queue.Queue()

    def __enter__(self) -> "LocalExecutor":
        for slot in range(self.workers):
            self._sandboxes.put(Sandbox(slot))
        return self

    def __exit__(self, *exc) -> None:
        while not self._sandboxes.empty():
            self._sandboxes.get().close()

    @contextlib.contextmanager
    def _lend(self) -> Iterator[Sandbox]:
        box = self._sandboxes.get()
        try:
            yield box
        finally:
            self._sandboxes.put(box)

    def grade(self, jobs: Iterable[GradingJob], scope: Scope) -> Iterator[Graded]:
        def work(job: GradingJob) -> Graded:
            return Graded(job, grade_submission(job.path, self.assignment, seed=job.seed,
                                                visibility=scope.value, lend=self._lend))

        with ThreadPoolExecutor(max_workers=self.workers + 1) as pool:
            pending = {pool.submit(work, job) for job in jobs}
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield future.result()
            finally:
                for future in pending:
                    future.cancel()


def task_functions(assignment: Assignment) -> dict[str, tuple[str, ...]]:
    """Each task's student functions (``functions:`` in assignment.yaml), by task id."""
    return {task.id: tuple(getattr(task, "functions", ()) or ()) for task in assignment.tasks}
