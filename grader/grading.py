"""``grader grade`` and ``grader report`` as library calls: a request of plain options in, checked
where they are made, the outputs chosen from them (:mod:`grader.report.outputs`), one call.

The CLI only parses its options into a :class:`GradeRequest` (or a report's), calls
:func:`grade_class` (:func:`report_class`) and renders what comes back. Every refusal is a
:class:`~grader.errors.UsageError` raised before anything is graded or written.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grader.atomic as atomic
from grader.adjustments import Adjustments
from grader.batch import BatchOptions, BatchReport, grade_batch
from grader.errors import UsageError
from grader.isolation_level import Requirement, predicted, shown
from grader.lateness import Lateness
from grader.loading import find_solutions, load_assignment
from grader.outdir import OutputFolder
from grader.overrides import Override, read_overrides
from grader.report.adjusted import AdjustedOutputs, recorded
from grader.report.lms_files import LmsGradebooks
from grader.report.lms_gradebooks import Gradebook, GradebookOptions, LmsFormat
from grader.report.output_files import (
    GradebookFiles,
    GradescopeFiles,
    JUnitFile,
    NoAdjustments,
    NoGradescopeFiles,
    ResultFiles,
)
from grader.report.outputs import Output, report_folder
from grader.reporting import ClassReport, ReportFiles
from grader.scoring import max_score_of
from grader.shard import Shard
from grader.spec import Assignment
from grader.summary import ClassSummary
from grader.visibility import DEFAULT_HIDDEN_SHOWN_TO, ShownTo, Visibility, hidden_visibility_problem


@dataclass(frozen=True, slots=True)
class OutputOptions:
    """What a batch writes beside its result files: ``gradescope/<id>.json`` (with hidden scenarios
    shown ``hidden_visibility``, as the result files' ``tests`` view shows them), the LMS gradebooks
    of ``lms``, and the JUnit file ``junit``; and the adjustments of the grades its gradebooks, summary
    and report show (``overrides``: a CSV file, ``late_penalty``: percent, ``missing_zero``: the
    roster's students without a submission get 0; :mod:`grader.adjustments`)."""

    gradescope: bool = False
    hidden_visibility: ShownTo = DEFAULT_HIDDEN_SHOWN_TO
    lms: tuple[LmsFormat, ...] = ()
    gradebook: GradebookOptions = field(default_factory=GradebookOptions)
    junit: Path | None = None
    overrides: Path | None = None
    late_penalty: float | None = None
    missing_zero: bool = False

    def problems(self, assignment: Assignment) -> list[str]:
        """Why these options cannot be given to a batch of ``assignment``."""
        problems = []
        if self.gradescope:
            hidden = sum(s.points for s in assignment.scenarios if s.visibility is Visibility.HIDDEN)
            problem = hidden_visibility_problem(self.hidden_visibility.value, hidden)
            problems += [problem] if problem else []
        if self.missing_zero and self.gradebook.roster is None:
            problems.append("--missing zero gives 0 to the students of the LMS's roster who submitted nothing: pass "
                            "that roster as --roster (Canvas's gradebook export, or Moodle's grading worksheet)")
        return problems

    def adjustments(self, assignment: Assignment) -> Adjustments:
        """The adjustments asked for, the overrides file read and checked against ``assignment``
        (a :class:`UsageError` listing every problem in it)."""
        overrides: tuple[Override, ...] = ()
        if self.overrides is not None:
            try:
                text = self.overrides.read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError) as error:
                raise UsageError(f"--overrides {self.overrides}: cannot be read ({error}); save it as CSV (UTF-8)"
                                 ) from None
            overrides = read_overrides(text, str(self.overrides), {s.id: s.points for s in assignment.scenarios},
                                       max_score_of(assignment))
        return Adjustments(overrides, self.late_penalty, self.missing_zero,
                           None if self.overrides is None else str(self.overrides))

    def outputs(self, derived: Sequence[Output] = (), adjustments: Adjustments | None = None) -> list[Output]:
        """The outputs of a batch with these options, in the order they are told; ``derived``: the
        outputs made from the whole class (the class report, the LMS gradebooks), shown the grades
        as ``adjustments`` make them, as are the gradebook and the summary."""
        adjustments = adjustments or Adjustments()
        gradebook = GradebookFiles(late_penalty=adjustments.late_penalty is not None,
                                   overrides=adjustments.overrides_file is not None)
        outputs: list[Output] = [ResultFiles(self.hidden_visibility),
                                 GradescopeFiles(self.hidden_visibility) if self.gradescope else NoGradescopeFiles()]
        if adjustments.given:
            outputs.append(AdjustedOutputs(adjustments, [gradebook, *derived], self.gradebook.roster))
        else:
            outputs += [NoAdjustments(), gradebook, *derived]
        if self.junit is not None:
            outputs.append(JUnitFile(self.junit))
        return outputs


@dataclass(frozen=True, slots=True)
class GradeRequest:
    """``grader grade``'s options (see its help for each)."""

    submissions: Path
    assignment: Path
    out: Path
    solutions: Path | None = None
    jobs: int | None = None                 # default: the CPUs
    seed: int | None = None
    force: bool = False
    outputs: OutputOptions = field(default_factory=OutputOptions)
    scheduler: str | None = None            # a Dask scheduler's address: grade on its workers
    require_isolation: Requirement | None = None
    shard: Shard | None = None
    only: tuple[str, ...] = ()              # grade only these students (with force, again); the rest as stored
    lateness: Lateness | None = None        # --deadline: which submissions whose names say nothing are late

    def problems(self) -> list[str]:
        """Why the request cannot be carried out, seen before the assignment is read."""
        problems = []
        if self.shard is not None and self.seed is None:
            problems.append(f"--shard {self.shard} needs --seed: every shard of a class must use the same seed, "
                            "or grader merge refuses them (any number, e.g. --seed 2026)")
        problems += [problem for problem in (atomic.refusal(self.out, "--out", folder=True),
                                             self.outputs.junit and atomic.refusal(self.outputs.junit, "--junit"))
                     if problem]
        if self.scheduler is not None and self.jobs is not None:
            problems.append("-j has no meaning with --scheduler: each worker grades as many submissions at once as "
                            "it has threads (dask worker --nthreads N), or its sandbox resource where it declares "
                            "one (--resources sandbox=N)")
        return problems


@dataclass(frozen=True, slots=True)
class GradedClass:
    batch: BatchReport
    report: ReportFiles | None                  # None: the batch was interrupted
    gradebooks: list[tuple[Path, Gradebook]]    # each LMS gradebook asked for, and where
    summary: ClassSummary                       # the class's, as summary.json holds it (adjusted, when asked)


def grade_class(request: GradeRequest, also: Sequence[Output] = ()) -> GradedClass:
    """Grade the class of ``request`` with every output it asks for (the class report always),
    and the outputs ``also`` (a progress display), told first."""
    _refuse(request.problems())
    assignment = load_assignment(request.assignment, hidden=request.solutions or find_solutions(request.assignment))
    _refuse(request.outputs.problems(assignment))
    requirement = request.require_isolation
    if request.scheduler is None and requirement is not None and not requirement.met_by(predicted()):
        raise UsageError(f"--require-isolation {requirement}: this machine's sandboxes reach "
                         f"{shown(predicted())} (docs/security.md says how to run at a stronger level)")
    adjustments = request.outputs.adjustments(assignment)
    report, gradebooks = ClassReport(), LmsGradebooks(request.outputs.lms, request.outputs.gradebook)
    outputs = request.outputs.outputs([report, gradebooks], adjustments)
    options = BatchOptions(jobs=request.jobs or os.cpu_count() or 1, seed=request.seed, force=request.force,
                           shard=request.shard, only=frozenset(request.only) if request.only else None,
                           lateness=request.lateness)
    with contextlib.ExitStack() as stack:
        executor = None
        if request.scheduler is not None:
            from grader.cluster.executor import DaskExecutor  # the [dask] extra: only --scheduler imports it
            executor = stack.enter_context(DaskExecutor(assignment, request.scheduler, requirement))
            executor.connect()  # every refusal before any grading
        batch = grade_batch(request.submissions, assignment, request.out, options, [*also, *outputs],
                            executor=executor)
    adjusted = next((output.summary for output in outputs if isinstance(output, AdjustedOutputs)), None)
    return GradedClass(batch, report.files, gradebooks.written, adjusted or batch.summary)


def report_class(out: Path, *, html_path: Path | None = None, with_students: bool = False,
                 lms: Iterable[LmsFormat] = (), gradebook: GradebookOptions | None = None
                 ) -> tuple[ReportFiles, list[tuple[Path, Gradebook]]]:
    """``grader report``: the class report (and the LMS gradebooks of ``lms``) of the finished
    batch in ``out``, from its stored results, by the outputs a batch uses."""
    _refuse([problem for problem in [html_path and atomic.refusal(html_path, "--out")] if problem])
    report = ClassReport(html_path, with_students)
    options = gradebook or GradebookOptions()
    gradebooks = LmsGradebooks(lms, options)
    folder = OutputFolder(out)
    report_folder(folder, recorded(folder, [report, gradebooks], options.roster))
    assert report.files is not None
    return report.files, gradebooks.written


def _refuse(problems: list[str]) -> None:
    if problems:
        raise UsageError("\n".join(problems))
