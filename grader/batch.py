"""Grade a whole class: many submissions, in parallel, resumable, every result written as it lands.

A pipeline of small steps: find the submissions (:mod:`grader.discovery`), keep the results a rerun
can reuse, grade the rest on an executor (:mod:`grader.executor`), and write each result as it
arrives into the output folder (:mod:`grader.outdir`, which documents the layout); then the
gradebook and the summary (:mod:`grader.scoring`). A rerun skips each submission whose result exists
for the same submission content, assignment content, seed and grader version, so a batch killed at
any moment (SIGKILL included) and rerun ends with the same gradebook as an uninterrupted one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from grader.discovery import Discovery, Found, discover
from grader.errors import UsageError
from grader.executor import Executor, GradingJob, LocalExecutor
from grader.lms_names import Identity
from grader.manifest import Manifest, class_summary
from grader.outdir import OutputFolder
from grader.progress import Progress
from grader.records import record
from grader.report import gradescope as gradescope_report
from grader.report import json_report
from grader.results import SubmissionResult
from grader.runner import new_seed
from grader.scoring import StudentRow, columns_of, max_score_of
from grader.shard import Shard
from grader.spec import Assignment
from grader.submission import sha256_of
from grader.version import __version__
from grader.visibility import DEFAULT_HIDDEN_SHOWN_TO, Scope, ShownTo, Visibility


@record
class BatchOptions:
    jobs: int = 1
    seed: int | None = None
    force: bool = False
    gradescope: bool = False                      # also write gradescope/<student>.json
    hidden_visibility: ShownTo = DEFAULT_HIDDEN_SHOWN_TO
    shard: Shard | None = None                    # grade only this shard's students (grader.shard)


@dataclass
class BatchReport:
    rows: list[StudentRow]         # one per student, sorted by id (results stay on disk, not in memory)
    summary: dict
    seed: int
    graded: int                    # by this run
    reused: int                    # from an earlier run
    interrupted: bool = False
    left: int = 0                  # not graded yet (an interrupted run)


def grade_batch(source: Path, assignment: Assignment, out: Path, options: BatchOptions,
                on_update: Callable[[Progress], None] = lambda progress: None,
                executor: Executor | None = None,
                before_grading: Callable[[Mapping[str, Identity]], None] = lambda identities: None) -> BatchReport:
    """Grade every submission in ``source`` into ``out``, on ``executor`` (default: this machine's,
    with ``options.jobs`` sandboxes). Every output derived from the stored results (the Gradescope
    files, the results' Gradescope view, the gradebook, the summary) is rendered with this run's
    options, whether its submission was graded now or before. ``before_grading`` is told every
    student's identity once the submissions are found, before any is graded: it may refuse (raise)."""
    if assignment.hidden_directory is None:
        raise UsageError("grading needs the hidden scenarios too (load the assignment with its solutions folder)")
    if options.gradescope:
        problem = gradescope_report.hidden_visibility_problem(
            options.hidden_visibility.value,
            sum(s.points for s in assignment.scenarios if s.visibility is Visibility.HIDDEN))
        if problem:
            raise UsageError(problem)
    folder = OutputFolder(out)
    folder.prepare()
    found = discover(source, assignment.submission, folder.unpacked, exclude=out)
    if options.shard is not None:
        found = _only(found, options.shard)
    before_grading(found.identities)
    folder.save_identities(found.identities)
    problems, ignored = found.problems, tuple(found.ignored)
    late = {student for student, identity in found.identities.items() if identity.late}
    # Each submission found is let go once it is reused or handed to the executor (and the
    # identities once saved): what the batch holds per student is its row alone.
    pending = deque(found.submissions)
    del found
    seed = folder.seed(assignment, options.seed, new_seed())
    max_score = max_score_of(assignment)
    rows = {student: StudentRow.of(student, None, problem, max_score, late=student in late)
            for student, problem in problems.items()}
    progress = Progress(total=len(pending) + len(problems), done=len(problems), ungradable=len(problems))
    if not options.gradescope:
        folder.drop_gradescope()

    todo: deque[Found] = deque()
    while pending:
        item = pending.popleft()
        previous = None if options.force else _reusable(folder, item, assignment, seed)
        if previous is None:
            todo.append(item)
            continue
        result, document = previous
        _render_derived(folder, item.student_id, result, options, document)
        rows[item.student_id] = StudentRow.of(item.student_id, result, None, late=item.student_id in late)
        progress.done += 1
        progress.reused += 1
        progress.ungradable += result.error is not None
        progress.below_full += result.error is None and result.score < result.max_score
    on_update(progress)

    def finished(student_id: str, result: SubmissionResult) -> None:
        result = replace(result, student_id=student_id)
        _render_derived(folder, student_id, result, options)
        rows[student_id] = StudentRow.of(student_id, result, None, late=student_id in late)
        progress.graded_one(below_full=result.score < result.max_score, ungradable=result.error is not None)
        progress.running = [item for item in progress.running if item[0] != student_id]
        on_update(progress)

    def waiting(running: list[tuple[str, float]]) -> None:
        progress.running = running
        on_update(progress)

    interrupted = False
    jobs = (GradingJob(item.student_id, item.path, seed) for item in _drained(todo))
    own = executor is None and bool(todo)
    runner = LocalExecutor(assignment, min(options.jobs, len(todo))) if own else executor
    try:
        if todo:
            assert runner is not None
            for graded in runner.grade(jobs, Scope.ALL, on_wait=waiting):
                finished(graded.job.key, graded.result)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if own and runner is not None:
            runner.close()  # at once: sandboxes still running are killed, their results never written
    ordered = [rows[key] for key in sorted(rows)]
    manifest = Manifest(assignment.id, assignment.digest, seed, __version__, max_score, columns_of(assignment),
                        {row.student_id: None if row.has_result else row.error for row in ordered},
                        ignored, options.shard, title=assignment.title)
    summary = class_summary(manifest, ordered, complete=not interrupted)
    if not interrupted:
        folder.save_gradebook(ordered, summary, manifest.columns)
        folder.save_manifest(manifest)  # last: a manifest says the gradebook beside it is whole
    return BatchReport(ordered, summary, seed, graded=progress.graded, reused=progress.reused,
                       interrupted=interrupted, left=progress.total - progress.done)


def _drained(items: deque[Found]) -> Iterator[Found]:
    """``items``, each taken out of the deque as it is yielded."""
    while items:
        yield items.popleft()


def _only(found: Discovery, shard: Shard) -> Discovery:
    """``found`` cut down to ``shard``'s students. Ignored files are nobody's: every shard lists them all."""
    return Discovery([item for item in found.submissions if shard.holds(item.student_id)],
                     {student: why for student, why in found.problems.items() if shard.holds(student)},
                     found.ignored,
                     {student: who for student, who in found.identities.items() if shard.holds(student)})


def _render_derived(folder: OutputFolder, student_id: str, result: SubmissionResult, options: BatchOptions,
                    stored: dict | None = None) -> None:
    """Write ``result`` (unless ``stored`` already shows it as this run's options would) and, when
    asked, its Gradescope file."""
    if stored is None or _shown_hidden_as(stored) not in (None, options.hidden_visibility.value):
        folder.save(student_id, result, options.hidden_visibility)
    if options.gradescope:
        folder.save_gradescope(student_id, result, options.hidden_visibility)


_shown_hidden_as = json_report.hidden_shown_as


def _reusable(folder: OutputFolder, item: Found, assignment: Assignment,
              seed: int) -> tuple[SubmissionResult, dict] | None:
    """The stored result (and its document), when it is for this very content, assignment, seed and
    grader; else None."""
    stored = folder.stored_document(item.student_id)
    if stored is None:
        return None
    result = stored[0]
    same = (result.seed == seed and result.assignment_digest == assignment.digest and result.visibility is Scope.ALL
            and result.grader_version == __version__ and result.submission_sha256 == sha256_of(item.path))
    return stored if same else None
