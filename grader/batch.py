"""Grade a whole class: many submissions, in parallel, resumable, every result written as it lands.

A pipeline of small steps: find the submissions (:mod:`grader.discovery`), keep the results a rerun
can reuse, grade the rest on an executor (:mod:`grader.executor`), and write each result as it
arrives into the output folder (:mod:`grader.outdir`, which documents the layout); then the
gradebook and the summary (:mod:`grader.scoring`). A rerun skips each submission whose result exists
for the same submission content, assignment content, seed and grader version, so a batch killed at
any moment (SIGKILL included) and rerun ends with the same gradebook as an uninterrupted one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import grader
from grader.discovery import Found, discover
from grader.errors import UsageError
from grader.executor import Executor, GradingJob, LocalExecutor
from grader.outdir import OutputFolder
from grader.progress import Progress
from grader.results import SubmissionResult
from grader.runner import new_seed
from grader.scoring import StudentRow, summarize
from grader.spec import Assignment
from grader.submission import sha256_of
from grader.visibility import DEFAULT_HIDDEN_SHOWN_TO, Scope, ShownTo


@dataclass(frozen=True)
class BatchOptions:
    jobs: int = 1
    seed: int | None = None
    force: bool = False
    gradescope: bool = False                      # also write gradescope/<student>.json
    hidden_visibility: ShownTo = DEFAULT_HIDDEN_SHOWN_TO


@dataclass
class BatchReport:
    rows: list[StudentRow]         # one per student, sorted by id (results stay on disk, not in memory)
    summary: dict
    seed: int
    graded: int
    reused: int
    interrupted: bool = False


def grade_batch(source: Path, assignment: Assignment, out: Path, options: BatchOptions,
                on_update: Callable[[Progress], None] = lambda progress: None,
                executor: Executor | None = None) -> BatchReport:
    """Grade every submission in ``source`` into ``out``, on ``executor`` (default: this machine's,
    with ``options.jobs`` sandboxes)."""
    if assignment.hidden_directory is None:
        raise UsageError("grading needs the hidden scenarios too (load the assignment with its solutions folder)")
    folder = OutputFolder(out)
    folder.prepare()
    found = discover(source, assignment.submission, folder.unpacked)
    seed = folder.seed(assignment, options.seed, new_seed())
    rows = {student: StudentRow.of(student, None, problem) for student, problem in found.problems.items()}
    progress = Progress(total=len(found.submissions) + len(found.problems), done=len(found.problems),
                        failures=len(found.problems))

    todo: list[Found] = []
    for item in found.submissions:
        previous = None if options.force else _reusable(folder, item, assignment, seed)
        if previous is None:
            todo.append(item)
        else:
            rows[item.student_id] = StudentRow.of(item.student_id, previous, None)
            progress.done += 1
            progress.reused += 1
            progress.failures += previous.score < previous.max_score
    on_update(progress)

    def finished(student_id: str, result: SubmissionResult) -> None:
        folder.save(student_id, result, options.hidden_visibility)
        if options.gradescope:
            folder.save_gradescope(student_id, result, options.hidden_visibility)
        rows[student_id] = StudentRow.of(student_id, result, None)
        progress.done += 1
        progress.graded += 1
        progress.failures += result.score < result.max_score
        on_update(progress)

    interrupted = False
    jobs = (GradingJob(item.student_id, item.path, seed) for item in todo)
    own = executor is None and bool(todo)
    runner = LocalExecutor(assignment, min(options.jobs, len(todo))) if own else executor
    try:
        if todo:
            assert runner is not None
            for graded in runner.grade(jobs, Scope.ALL):
                finished(graded.job.key, graded.result)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if own and runner is not None:
            runner.close()
    ordered = [rows[key] for key in sorted(rows)]
    summary = summarize(ordered)
    summary.update(assignment=assignment.id, assignment_digest=assignment.digest, seed=seed,
                   grader_version=grader.__version__, complete=not interrupted)
    if not interrupted:
        folder.save_gradebook(ordered, summary)
    return BatchReport(ordered, summary, seed, graded=progress.graded, reused=progress.reused,
                       interrupted=interrupted)


def _reusable(folder: OutputFolder, item: Found, assignment: Assignment, seed: int) -> SubmissionResult | None:
    """The stored result, when it is for this very content, assignment, seed and grader; else None."""
    result = folder.stored(item.student_id)
    if result is None:
        return None
    same = (result.seed == seed and result.assignment_digest == assignment.digest and result.visibility is Scope.ALL
            and result.grader_version == grader.__version__ and result.submission_sha256 == sha256_of(item.path))
    return result if same else None
