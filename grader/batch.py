"""Grade a whole class: many submissions, in parallel, resumable, every result announced as it lands.

A pipeline of small steps: find the submissions (:mod:`grader.discovery`), keep the results a rerun
can reuse, grade the rest on an executor (:mod:`grader.executor`), and announce each result as it
arrives, then the end of the class, to the batch's outputs (:mod:`grader.report.outputs`: the
result files, the gradebook, the class report... subscribe; the batch names none of them). What it
keeps itself in the output folder (:mod:`grader.outdir`, which documents the layout) is its record:
the seed, the students' identities, and the manifest of a finished class. A rerun skips each
submission whose result exists for the same submission content, assignment content, seed and
grader version, so a batch killed at any moment (SIGKILL included) and rerun ends with the same
outputs as an uninterrupted one. Which submissions a run grades is decided per submission by
:func:`_stored_for` (``--force``: all; ``--only``: those named, every other result taken as stored).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from grader.discovery import Discovery, Found, discover
from grader.errors import UsageError
from grader.executor import Executor, GradingJob, LocalExecutor
from grader.lateness import Lateness, marked_late
from grader.manifest import Manifest
from grader.outdir import OutputFolder
from grader.progress import Progress
from grader.report.outputs import BatchEnd, BatchStart, Completed, Landed, Output, Outputs
from grader.results import SubmissionResult
from grader.runner import new_seed
from grader.scoring import StudentRow, columns_of, max_score_of
from grader.shard import Shard
from grader.spec import Assignment
from grader.submission import sha256_of
from grader.summary import ClassSummary, class_summary
from grader.version import __version__
from grader.visibility import Scope


@dataclass(frozen=True, slots=True)
class BatchOptions:
    jobs: int = 1
    seed: int | None = None
    force: bool = False
    shard: Shard | None = None                    # grade only this shard's students (grader.shard)
    only: frozenset[str] | None = None            # grade only these students; take every other result as stored
    lateness: Lateness | None = None              # --deadline: late marks for names that carry none


@dataclass(frozen=True, slots=True)
class BatchReport:
    summary: ClassSummary
    seed: int
    graded: int                    # by this run
    reused: int                    # from an earlier run
    interrupted: bool = False
    left: int = 0                  # not graded yet (an interrupted run)


def grade_batch(source: Path, assignment: Assignment, out: Path, options: BatchOptions,
                outputs: Iterable[Output] = (), executor: Executor | None = None) -> BatchReport:
    """Grade every submission in ``source`` into ``out``, on ``executor`` (default: this machine's,
    with ``options.jobs`` sandboxes), announcing to ``outputs`` as :mod:`grader.report.outputs`
    says: each result, graded now or reused (so every output is made with this run's options),
    then the end of the class. An output may refuse the class once its students are found, before
    anything is graded (a :class:`~grader.errors.UsageError` with every output's problems)."""
    if assignment.hidden_directory is None:
        raise UsageError("grading needs the hidden scenarios too (load the assignment with its solutions folder)")
    announce = Outputs(outputs)
    folder = OutputFolder(out)
    folder.prepare()
    found = discover(source, assignment.submission, folder.unpacked, exclude=out)
    if options.shard is not None:
        found = _only(found, options.shard)
    if options.lateness is not None:
        found = marked_late(found, options.lateness)
    start = BatchStart(folder, found.identities)
    refusals = [*_selection_problems(options, found, folder), *announce.check(start)]
    if refusals:
        raise UsageError("\n".join(refusals))
    folder.save_identities(found.identities)
    seed = folder.seed(assignment, options.seed, new_seed())
    announce.started(start)
    problems, ignored = found.problems, tuple(found.ignored)
    late = {student for student, identity in found.identities.items() if identity.late}
    # Each submission found is let go once it is reused or handed to the executor (and the
    # identities once saved and announced): what the batch holds per student is its row alone.
    pending = deque(found.submissions)
    del found, start
    max_score = max_score_of(assignment)
    rows = {student: StudentRow.of(student, None, problem, max_score, late=student in late)
            for student, problem in problems.items()}
    progress = Progress(total=len(pending) + len(problems), done=len(problems), ungradable=len(problems))

    todo: deque[Found] = deque()
    while pending:
        item = pending.popleft()
        previous = _stored_for(folder, item, assignment, seed, options)
        if previous is None:
            todo.append(item)
            continue
        rows[item.student_id] = StudentRow.of(item.student_id, previous, None, late=item.student_id in late)
        progress.done += 1
        progress.reused += 1
        progress.ungradable += previous.error is not None
        progress.below_full += previous.error is None and previous.score < previous.max_score
        announce.landed(Landed(item.student_id, previous, reused=True))
    announce.progress(progress)

    def finished(student_id: str, result: SubmissionResult) -> None:
        result = replace(result, student_id=student_id)
        announce.landed(Landed(student_id, result, reused=False))
        rows[student_id] = StudentRow.of(student_id, result, None, late=student_id in late)
        progress.graded_one(below_full=result.score < result.max_score, ungradable=result.error is not None)
        progress.running = [item for item in progress.running if item[0] != student_id]
        announce.progress(progress)

    def waiting(running: list[tuple[str, float]]) -> None:
        progress.running = running
        announce.progress(progress)

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
    report = BatchReport(summary, seed, graded=progress.graded, reused=progress.reused, interrupted=interrupted,
                         left=progress.total - progress.done)
    if interrupted:
        announce.interrupted(progress)
        return report
    announce.finished(BatchEnd(folder, ordered, manifest, summary))
    folder.save_manifest(manifest)  # after the gradebook: a manifest says the gradebook beside it is whole
    rows.clear()                    # the outputs made from OUT alone read the results again
    del ordered
    announce.completed(Completed(folder, summary))
    return report


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


def _stored_for(folder: OutputFolder, item: Found, assignment: Assignment, seed: int,
                options: BatchOptions) -> SubmissionResult | None:
    """The stored result this run takes for ``item`` (None: grade it). A student ``--only`` does not
    name keeps the result stored (it is not graded, nor its file rewritten), whatever it was graded
    from; one it names, or every student with ``--force``, is graded again; else a result is reused
    when it is for this very content, assignment, seed and grader."""
    if options.only is not None and item.student_id not in options.only:
        return folder.stored(item.student_id)   # None only for a file that cannot be read: then it is graded
    return None if options.force else _reusable(folder, item, assignment, seed)


def _selection_problems(options: BatchOptions, found: Discovery, folder: OutputFolder) -> list[str]:
    """Why ``--only`` cannot be carried out: a student SUBMISSIONS does not have (with "did you mean"),
    or others without a result in OUT (an --only run grades none of them)."""
    if options.only is None:
        return []
    from grader.spec_yaml import did_you_mean
    graded = {item.student_id for item in found.submissions}
    known = graded | set(found.problems)
    problems = [f"--only {student}: no such student in the submissions{did_you_mean(student, sorted(known))}"
                for student in sorted(options.only - known)]
    missing = sorted(student for student in graded - options.only if not folder.result_file(student).is_file())
    if missing and not problems:
        listed = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        problems.append(f"--only grades only the students it names, and {listed} "
                        f"{'have' if len(missing) > 1 else 'has'} no result in {folder.path} yet: grade the class "
                        "without --only first")
    return problems


def _reusable(folder: OutputFolder, item: Found, assignment: Assignment, seed: int) -> SubmissionResult | None:
    """The stored result, when it is for this very content, assignment, seed and grader; else None."""
    result = folder.stored(item.student_id)
    if result is None:
        return None
    same = (result.seed == seed and result.assignment_digest == assignment.digest and result.visibility is Scope.ALL
            and result.grader_version == __version__ and result.submission_sha256 == sha256_of(item.path))
    return result if same else None
