"""The outputs a batch makes of the grades as adjusted (``grade --overrides --late-penalty --missing
zero``): an :class:`~grader.report.outputs.Output` wrapping the others (the gradebook and summary,
the class report, the LMS gradebooks), changing each event before it passes it on. The stored
results are never changed: the outputs that write them (result files, Gradescope files, JUnit) are
not wrapped, and every adjustment is made again from them, run after run (the arithmetic:
:mod:`grader.adjustments`).

* ``check``: an override of a student the class does not have is refused, with the wrapped
  outputs' own refusals, before anything is graded or written;
* ``started``: the adjustments are recorded in ``OUT/adjustments.json``, so that ``grader report``
  makes its outputs alike (:func:`recorded`);
* ``finished``: the rows adjusted, the summary made of them, with what was adjusted listed;
* ``completed``: the class, as its outputs read it, adjusted the same way, and the roster's students
  without a submission added where ``--missing zero`` asks (:class:`AdjustedClass`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from grader.adjustments import Adjusted, Adjustments, Missing, Notes, adjust_row, adjust_rows
from grader.class_data import ClassData
from grader.class_stats import distribution
from grader.lms_names import Identity
from grader.outdir import OutputFolder
from grader.overrides import unknown_students
from grader.progress import Progress
from grader.report.lms_gradebooks import without_submission
from grader.report.outputs import BatchEnd, BatchStart, Completed, Landed, Output, Outputs
from grader.roster import Roster
from grader.scoring import StudentRow
from grader.summary import ClassSummary, class_summary


class AdjustedOutputs(Output):
    """``outputs``, told of the class as ``adjustments`` make it (see the module); ``roster``: the
    LMS export whose students without a submission ``--missing zero`` gives 0.
    :attr:`summary`: the adjusted summary, once the class is finished."""

    def __init__(self, adjustments: Adjustments, outputs: Iterable[Output], roster: Roster | None = None):
        self.adjustments, self.roster = adjustments, roster
        self.inner = Outputs(outputs)
        self.summary: ClassSummary | None = None
        self._identities: Mapping[str, Identity] = {}

    def check(self, start: BatchStart) -> list[str]:
        problems = unknown_students(self.adjustments.overrides, start.identities,
                                    self.adjustments.overrides_file or "--overrides")
        return [*problems, *self.inner.check(start)]

    def started(self, start: BatchStart) -> None:
        self._identities = start.identities
        start.folder.record_adjustments(self.adjustments)
        self.inner.started(start)

    def landed(self, landed: Landed) -> None:
        self.inner.landed(landed)

    def progress(self, progress: Progress) -> None:
        self.inner.progress(progress)

    def finished(self, end: BatchEnd) -> None:
        adjusted = adjust_rows(end.rows, self.adjustments)
        notes = Notes.of(self.adjustments, adjusted, self._missing(self._identities))
        self.summary = adjusted_summary(end, adjusted, notes)
        self.inner.finished(BatchEnd(end.folder, adjusted.rows, end.manifest, self.summary))

    def completed(self, done: Completed) -> None:
        self.inner.completed(AdjustedClass(done.folder, self.summary or done.summary, self.adjustments,
                                           self._missing))

    def interrupted(self, progress: Progress) -> None:
        self.inner.interrupted(progress)

    def _missing(self, identities: Mapping[str, Identity]) -> tuple[Missing, ...]:
        if not self.adjustments.missing_zero or self.roster is None:
            return ()
        return without_submission(self.roster, dict(identities))


class AdjustedClass(Completed):
    """A whole class whose outputs show it adjusted: its rows (and each student's), the notes of what
    was done, the roster's students without a submission."""

    def __init__(self, folder: OutputFolder, summary: ClassSummary | None, adjustments: Adjustments,
                 missing_of) -> None:
        super().__init__(folder, summary)
        self.adjustments, self.missing_of = adjustments, missing_of

    def adjusted(self, data: ClassData) -> ClassData:
        adjusted = adjust_rows(data.rows, self.adjustments)
        students = [replace(student, row=row) for student, row in zip(data.students, adjusted.rows)]
        return replace(data, students=students,
                       notes=Notes.of(self.adjustments, adjusted, self.missing_of(data.identities)))

    def row_of(self, row: StudentRow) -> StudentRow:
        shown = adjust_row(row, self.adjustments)
        return shown if shown.score != row.score or shown.override else row


def adjusted_summary(end: BatchEnd, adjusted: Adjusted, notes: Notes) -> ClassSummary:
    """The summary of the adjusted rows: its figures of the final scores (the item statistics stay
    those of the scenarios as graded: they describe the rubric), and what was adjusted."""
    summary = class_summary(end.manifest, adjusted.rows)
    statistics = dict(summary.statistics or {})
    graded = [row.score for row in adjusted.rows if row.graded]
    statistics["scores"] = distribution(graded, float(end.manifest.max_score)).to_dict()
    return replace(summary, statistics=statistics, adjustments=notes.to_dict())


def recorded(folder: OutputFolder, outputs: Iterable[Output], roster: Roster | None) -> list[Output]:
    """``outputs`` as ``grader report`` makes them of ``folder``: adjusted as its last batch's were
    (``OUT/adjustments.json``), or as they are."""
    adjustments = folder.adjustments()
    if adjustments is None:
        return list(outputs)
    return [_Recorded(adjustments, outputs, roster)]


class _Recorded(AdjustedOutputs):
    """For ``grader report``: the folder's summary is the batch's, adjusted already; the record stays."""

    def started(self, start: BatchStart) -> None:
        self._identities = start.identities
        self.inner.started(start)
