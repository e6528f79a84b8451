"""Grade a whole class: many submissions, in parallel, resumable, every result written as it lands.

Output folder layout (``OUT``)::

    batch.json              the batch's seed and assignment digest (so a rerun reuses the seed)
    results/<student>.json  one native result per submission (the ``grader check --json`` schema)
    gradescope/<student>.json  Gradescope results.json per submission (with --format gradescope)
    gradebook.csv           one row per student, one column per scenario
    summary.json            class statistics: mean, median, histogram, pass rate per scenario
    .work/                  the unpacked zip, when SUBMISSIONS is one

Every file is written atomically. A rerun skips each submission whose result exists for the same
submission content, assignment content, seed and grader version, so a batch killed at any moment
(SIGKILL included) and rerun ends with the same gradebook as an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import queue
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import grader
from grader import atomic
from grader.discovery import Found, discover
from grader.errors import UsageError
from grader.report import gradebook, json_report
from grader.report import gradescope as gradescope_report
from grader.results import SubmissionResult
from grader.runner import grade_submission, new_seed
from grader.sandbox.launcher import Sandbox
from grader.spec import Assignment
from grader.submission import sha256_of



@dataclass(frozen=True)
class BatchOptions:
    jobs: int = 1
    seed: int | None = None
    force: bool = False
    gradescope: bool = False                      # also write gradescope/<student>.json
    hidden_visibility: str = gradescope_report.DEFAULT_HIDDEN_VISIBILITY


@dataclass
class Progress:
    """What a progress display needs; the batch calls ``on_update`` after every submission."""

    total: int
    done: int = 0            # with a result or a problem, graded now or before
    graded: int = 0          # graded by this run (what the rate counts)
    reused: int = 0
    failures: int = 0        # submissions below full marks, or not gradable
    started: float = field(default_factory=time.monotonic)

    @property
    def rate(self) -> float:
        return self.graded / max(time.monotonic() - self.started, 1e-9)

    @property
    def eta(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None


@dataclass
class BatchReport:
    rows: list[gradebook.Row]      # one per student, sorted by id (results stay on disk, not in memory)
    summary: dict
    seed: int
    graded: int
    reused: int
    interrupted: bool = False


def grade_batch(source: Path, assignment: Assignment, out: Path, options: BatchOptions,
                on_update: Callable[[Progress], None] = lambda progress: None) -> BatchReport:
    """Grade every submission in ``source`` into ``out`` (see the module doc for the layout)."""
    if assignment.hidden_directory is None:
        raise UsageError("grading needs the hidden scenarios too (load the assignment with its solutions folder)")
    if options.gradescope:
        problem = gradescope_report.hidden_visibility_problem(
            options.hidden_visibility, sum(s.points for s in assignment.scenarios if s.visibility == "hidden"))
        if problem:
            raise UsageError(problem)
    out.mkdir(parents=True, exist_ok=True)
    results_dir = out / "results"
    for folder in (results_dir, out / "gradescope", out):
        atomic.remove_leftovers(folder)
    found = discover(source, assignment.submission, out / ".work" / "unpacked", exclude=out)
    seed = _batch_seed(out, assignment, options.seed)
    rows = {student: gradebook.Row.of(student, None, problem) for student, problem in found.problems.items()}
    progress = Progress(total=len(found.submissions) + len(found.problems), done=len(found.problems),
                        failures=len(found.problems))

    todo: list[Found] = []
    for item in found.submissions:
        previous = None if options.force else _reusable(results_dir / f"{item.student_id}.json", item, assignment, seed)
        if previous is None:
            todo.append(item)
        else:
            rows[item.student_id] = gradebook.Row.of(item.student_id, previous, None)
            progress.done += 1
            progress.reused += 1
            progress.failures += previous.score < previous.max_score
    on_update(progress)

    def finished(item: Found, result: SubmissionResult) -> None:
        atomic.write_text(results_dir / f"{item.student_id}.json", json_report.dumps(result))
        if options.gradescope:
            atomic.write_text(out / "gradescope" / f"{item.student_id}.json",
                              gradescope_report.dumps(result, hidden_visibility=options.hidden_visibility))
        rows[item.student_id] = gradebook.Row.of(item.student_id, result, None)
        progress.done += 1
        progress.graded += 1
        progress.failures += result.score < result.max_score
        on_update(progress)

    interrupted = False
    try:
        _run_parallel(todo, assignment, seed, options.jobs, finished)
    except KeyboardInterrupt:
        interrupted = True
    ordered = [rows[key] for key in sorted(rows)]
    summary = gradebook.summarize(ordered)
    summary.update(assignment=assignment.id, assignment_digest=assignment.digest, seed=seed,
                   grader_version=grader.__version__, complete=not interrupted,
                   ignored=[{"path": path, "why": why} for path, why in found.ignored])
    if not interrupted:
        _write_gradebook(out, ordered, summary)
    return BatchReport(ordered, summary, seed, graded=len(todo), reused=progress.reused, interrupted=interrupted)


def _run_parallel(todo: list[Found], assignment: Assignment, seed: int, jobs: int,
                  finished: Callable[[Found, SubmissionResult], None]) -> None:
    """Grade ``todo`` with ``jobs`` sandboxes, each in its own slot (its own sandbox user)."""
    # One warm sandbox per job: its interpreter imports numpy once and serves submission after
    # submission, each in a fresh zygote (or, where isolation cannot keep them apart, a fresh one).
    # A sandbox is lent only while programs run: one more thread than sandboxes checks the next
    # submission and judges the last, so no sandbox waits for the grader in between.
    sandboxes: queue.Queue[Sandbox] = queue.Queue()
    count = min(jobs, len(todo))
    for slot in range(count):
        sandboxes.put(Sandbox(slot))
    lock = threading.Lock()

    @contextlib.contextmanager
    def lend() -> Iterator[Sandbox]:
        box = sandboxes.get()
        try:
            yield box
        finally:
            sandboxes.put(box)

    def work(item: Found) -> None:
        result = grade_submission(item.path, assignment, seed=seed, visibility="all", lend=lend)
        with lock:  # results land one at a time: files, rows and progress stay consistent
            finished(item, result)

    try:
        _drive(todo, work, count + 1)
    finally:
        while not sandboxes.empty():
            sandboxes.get().close()


def _drive(todo: list[Found], work: Callable[[Found], None], threads: int) -> None:
    """Run ``work`` over ``todo`` on ``threads`` threads, never more than a few submissions queued,
    so the grader's memory does not grow with the class."""
    if not todo:
        return
    items = iter(todo)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="grader") as pool:
        pending = {pool.submit(work, item) for item in itertools.islice(items, 2 * threads)}
        try:
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    future.result()  # a bug of ours surfaces here rather than vanishing
                pending |= {pool.submit(work, item) for item in itertools.islice(items, len(done))}
        except BaseException:
            for future in pending:
                future.cancel()
            raise


def stored_results(out: Path, rows: list[gradebook.Row]):
    """``(student_id, result)`` for every row with a result file, read one at a time from ``out``."""
    for row in rows:
        path = out / "results" / f"{row.student_id}.json"
        if row.score is not None and path.is_file():
            yield row.student_id, json_report.from_document(json.loads(path.read_text(encoding="utf-8")))


def _write_gradebook(out: Path, rows: list[gradebook.Row], summary: dict) -> None:
    with atomic.replacing(out / "gradebook.csv") as stream:
        gradebook.write_csv(rows, stream)
    atomic.write_text(out / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


def _batch_seed(out: Path, assignment: Assignment, requested: int | None) -> int:
    """The seed: as requested, else the one this output folder already used, else a fresh one."""
    state_file = out / "batch.json"
    if requested is None and state_file.is_file():
        try:
            state = json.loads(state_file.read_text())
            if isinstance(state.get("seed"), int) and state.get("assignment") == assignment.id:
                return state["seed"]
        except (OSError, ValueError):
            pass
    seed = new_seed() if requested is None else requested
    atomic.write_text(state_file, json.dumps({"seed": seed, "assignment": assignment.id,
                                              "assignment_digest": assignment.digest}, indent=2) + "\n")
    return seed


def _reusable(path: Path, item: Found, assignment: Assignment, seed: int) -> SubmissionResult | None:
    """The stored result, when it is for this very content, assignment, seed and grader; else None."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        result = json_report.from_document(document)
    except (OSError, ValueError, TypeError, KeyError):
        return None
    same = (result.seed == seed and result.assignment_digest == assignment.digest and result.visibility == "all"
            and result.grader_version == grader.__version__
            and result.submission_sha256 == sha256_of(item.path))
    return result if same else None
