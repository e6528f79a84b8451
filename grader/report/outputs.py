"""The output seam of a batch: the batch announces, every output subscribes (as pytest's runner
announces each test's report, and its terminal reporter and JUnit writer each take it).

A batch (:func:`grader.batch.grade_batch`) names no output. It calls each hook below on every
:class:`Output` it was handed, in the order it was handed them:

1. ``check(start)``: the students are found, nothing is graded or written yet; the problems an
   output returns (a gradebook that could hold none of these students, say) stop the batch as one
   :class:`~grader.errors.UsageError` listing them all;
2. ``started(start)``: the batch goes ahead;
3. ``landed(landed)``: one student's result, graded by this run or reused from an earlier one, in
   the order they come; ``progress(progress)`` after each, and as the running submissions change;
4. ``finished(end)``: every student has a row; the class's rows, manifest and summary;
5. ``completed(done)``: ``OUT`` holds the whole class (its manifest written): outputs made from
   the stored results alone (the class report, the LMS gradebooks) go now;

or, on Ctrl-C, ``interrupted(progress)`` and nothing more: no output writes what only a whole
class may. An output overrides the hooks it needs; the others do nothing. ``grader merge``
announces 4 and 5 for the merged folder, ``grader report`` 1 and 5 for a folder as it is
(:func:`report_folder`): every file is written by one output, whatever made the results.

Where a new output plugs in: a class of this module's :class:`Output` overriding the hooks it
needs (a new gradebook format writes its file at ``completed``, as the LMS gradebooks do), listed
by :meth:`grader.grading.OutputOptions.outputs` or handed to the batch; its options and their
rules sit with :class:`~grader.grading.OutputOptions`, its refusals in its ``check``. An output
that must see results otherwise than as stored (an override, a late penalty) is an output
wrapping the others, changing each event before it passes it on (:mod:`grader.report.adjusted`:
the rows of ``finished``, and the class of ``completed`` through :meth:`Completed.adjusted`). A
rerun whose results are all reused already makes every output again from the stored results
through these hooks, as does a regrade of a few students (``grade --only``), the others reused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grader.errors import UsageError

if TYPE_CHECKING:  # the seam names its vocabulary; a display of progress imports none of it
    from grader.class_data import ClassData
    from grader.lms_names import Identity
    from grader.manifest import Manifest
    from grader.outdir import OutputFolder
    from grader.progress import Progress
    from grader.results import SubmissionResult
    from grader.scoring import StudentRow
    from grader.summary import ClassSummary


@dataclass(frozen=True, slots=True)
class BatchStart:
    folder: OutputFolder
    identities: Mapping[str, Identity]     # every student found, by id


@dataclass(frozen=True, slots=True)
class Landed:
    student_id: str
    result: SubmissionResult
    reused: bool                           # stored by an earlier run for the same content, assignment and seed


@dataclass(frozen=True, slots=True)
class BatchEnd:
    folder: OutputFolder
    rows: Sequence[StudentRow]             # one per student, by id
    manifest: Manifest
    summary: ClassSummary


class Completed:
    """A whole class in ``folder``, with its ``summary`` (None: the folder's ``summary.json``);
    :meth:`class_data` reads its stored results, once for every output that asks, and gives them as
    :meth:`adjusted` (as stored here; an adjusting output's event adjusts them,
    :mod:`grader.report.adjusted`)."""

    def __init__(self, folder: OutputFolder, summary: ClassSummary | None = None):
        self.folder, self.summary = folder, summary
        self._data: ClassData | None = None

    def class_data(self) -> ClassData:
        """The class as :meth:`grader.outdir.OutputFolder.load_class` reads it (identities included),
        :meth:`adjusted`."""
        if self._data is None:
            self._data = self.adjusted(self.folder.load_class(summary=self.summary))
        return self._data

    def adjusted(self, data: ClassData) -> ClassData:
        """``data`` (read from the stored results) as the outputs are to show it."""
        return data

    def row_of(self, row: StudentRow) -> StudentRow:
        """One student's row (made from a stored result) as the outputs are to show it."""
        return row


class Output:
    """One output of a batch. Every hook does nothing unless overridden (see the module)."""

    def check(self, start: BatchStart) -> Iterable[str]:
        return ()

    def started(self, start: BatchStart) -> None:
        pass

    def landed(self, landed: Landed) -> None:
        pass

    def progress(self, progress: Progress) -> None:
        pass

    def finished(self, end: BatchEnd) -> None:
        pass

    def completed(self, done: Completed) -> None:
        pass

    def interrupted(self, progress: Progress) -> None:
        pass


class Outputs(Output):
    """Several outputs as one: each hook called on each, in order."""

    def __init__(self, outputs: Iterable[Output]):
        self.outputs = tuple(outputs)

    def check(self, start: BatchStart) -> list[str]:
        return [problem for output in self.outputs for problem in output.check(start)]

    def refuse_or_start(self, start: BatchStart) -> None:
        """``check`` every output (a :class:`UsageError` with every problem), then ``started``."""
        problems = self.check(start)
        if problems:
            raise UsageError("\n".join(problems))
        self.started(start)

    def started(self, start: BatchStart) -> None:
        self._tell("started", start)

    def landed(self, landed: Landed) -> None:
        self._tell("landed", landed)

    def progress(self, progress: Progress) -> None:
        self._tell("progress", progress)

    def finished(self, end: BatchEnd) -> None:
        self._tell("finished", end)

    def completed(self, done: Completed) -> None:
        self._tell("completed", done)

    def interrupted(self, progress: Progress) -> None:
        self._tell("interrupted", progress)

    def _tell(self, hook: str, event: object) -> None:
        for output in self.outputs:
            getattr(output, hook)(event)


def report_folder(folder: OutputFolder, outputs: Iterable[Output]) -> None:
    """Announce a finished ``folder`` as it is to ``outputs`` (``grader report``): checked against its
    students' identities, then completed."""
    every = Outputs(outputs)
    every.refuse_or_start(BatchStart(folder, folder.identities()))
    every.completed(Completed(folder))
