"""The files a batch's outputs write into ``OUT`` (and ``--junit``), each an
:class:`~grader.report.outputs.Output`: the result files, the Gradescope files, the gradebook and
the summary, the JUnit file. Each renders with a pure reporter and writes through
:class:`~grader.outdir.OutputFolder` (every file atomically).
"""

from __future__ import annotations

from pathlib import Path

import grader.atomic as atomic
from grader.outdir import OutputFolder
from grader.report import gradescope, json_report
from grader.report.junit import write_junit_xml
from grader.report.outputs import BatchEnd, BatchStart, Landed, Output
from grader.visibility import ShownTo


class ResultFiles(Output):
    """``results/<student>.json`` as each result lands: the ``grader check --json`` document, whose
    ``tests`` view shows hidden scenarios as ``hidden_visibility``. The options the files were
    rendered with are stored beside them (:meth:`~grader.outdir.OutputFolder.rendered_with`): a
    rerun with the same options leaves each reused result as it is; a rerun with others renders it
    again, and rewrites it only when its bytes change (a file rewritten gets a new time, which the
    LTI gradebook gives as the score's). The options are recorded once the class is finished, and
    forgotten as soon as a file may be rendered otherwise: an interrupted rerun leaves them unknown,
    and the next run looks at every file again."""

    def __init__(self, hidden_visibility: ShownTo):
        self.hidden_visibility = hidden_visibility
        self.same_as_stored = False
        self.folder: OutputFolder | None = None

    def started(self, start: BatchStart) -> None:
        self.folder = start.folder
        self.same_as_stored = start.folder.rendered_with() is self.hidden_visibility
        if not self.same_as_stored:
            start.folder.record_rendering(None)

    def landed(self, landed: Landed) -> None:
        assert self.folder is not None
        if landed.reused and self.same_as_stored:
            return
        text = json_report.dumps(landed.result, self.hidden_visibility)
        if landed.reused and self.folder.result_text(landed.student_id) == text:
            return
        self.folder.save_result(landed.student_id, text)

    def finished(self, end: BatchEnd) -> None:
        end.folder.record_rendering(self.hidden_visibility)


class GradescopeFiles(Output):
    """``gradescope/<student>.json`` (Gradescope's ``results.json``) as each result lands, hidden
    scenarios shown as ``hidden_visibility``."""

    def __init__(self, hidden_visibility: ShownTo):
        self.hidden_visibility = hidden_visibility
        self.folder: OutputFolder | None = None

    def started(self, start: BatchStart) -> None:
        self.folder = start.folder

    def landed(self, landed: Landed) -> None:
        assert self.folder is not None
        self.folder.save_gradescope(landed.student_id,
                                    gradescope.dumps(landed.result, hidden_visibility=self.hidden_visibility.value))


class NoGradescopeFiles(Output):
    """The Gradescope files of an earlier run removed, when this run is not asked for them: every
    file derived from the stored results is of this run's options."""

    def started(self, start: BatchStart) -> None:
        start.folder.drop_gradescope()


class NoAdjustments(Output):
    """The adjustments an earlier run recorded (``OUT/adjustments.json``) forgotten, when this run is
    given none: ``grader report`` then makes its outputs as the results are."""

    def started(self, start: BatchStart) -> None:
        start.folder.record_adjustments(None)


class GradebookFiles(Output):
    """``gradebook.csv`` and ``summary.json``, once the class is finished; with the columns of a late
    penalty and of overrides when the run applies them (:mod:`grader.report.adjusted` hands it the
    adjusted rows)."""

    def __init__(self, late_penalty: bool = False, overrides: bool = False):
        self.late_penalty, self.overrides = late_penalty, overrides

    def finished(self, end: BatchEnd) -> None:
        end.folder.save_gradebook(end.rows, end.summary, end.manifest.columns, late_penalty=self.late_penalty,
                                  overrides=self.overrides)


class JUnitFile(Output):
    """JUnit XML of every stored result (``--junit FILE``), once the class is finished; the results
    are read one at a time."""

    def __init__(self, path: Path):
        self.path = path

    def finished(self, end: BatchEnd) -> None:
        with atomic.replacing(self.path) as stream:
            write_junit_xml(end.folder.stored_results(end.rows), stream)
