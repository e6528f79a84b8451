"""The class report as an output of a batch: read OUT, build the report's view, render, write. The
shell around the pure report (:mod:`grader.class_data`, the view :mod:`grader.report.class_view`, its
renderers :mod:`grader.report.class_tables` and :mod:`grader.report.class_html`),
subscribed by ``grader grade``, ``grader report`` and ``grader merge`` alike
(:mod:`grader.report.outputs`): nothing is regraded, everything comes from the stored results.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from grader.class_data import UNREADABLE, ClassData
from grader.outdir import REPORT_FILE, OutputFolder
from grader.report.class_html import render_report
from grader.report.class_tables import report_tables
from grader.report.class_view import build_view
from grader.report.outputs import Completed, Output
from grader.report.student_html import render_student_page
from grader.results import SubmissionResult
from grader.scoring import StudentRow
from grader.summary import ClassSummary
from grader.version import __version__


@dataclass(frozen=True, slots=True)
class ReportFiles:
    html: Path
    tables: Path                 # the folder of CSV files
    students: Path | None        # the folder of students' pages, when asked for


class ClassReport(Output):
    """``OUT/report.html`` (or ``html_path``), its tables and, ``with_students``, the students'
    pages, once the class is whole; :attr:`files` says where."""

    def __init__(self, html_path: Path | None = None, with_students: bool = False, now: datetime | None = None):
        self.html_path, self.with_students, self.now = html_path, with_students, now
        self.files: ReportFiles | None = None

    def completed(self, done: Completed) -> None:
        # The students' pages are written while the results are read: each result is read once.
        data = None if self.with_students else done.class_data()
        self.files = write_report(done.folder, html_path=self.html_path, with_students=self.with_students,
                                  now=self.now, data=data, summary=done.summary, done=done)


def write_report(folder: OutputFolder, *, html_path: Path | None = None, with_students: bool = False,
                 now: datetime | None = None, data: ClassData | None = None,
                 summary: ClassSummary | None = None, done: Completed | None = None) -> ReportFiles:
    """Write ``folder``'s report (``OUT/report.html``, or ``html_path``), its tables
    (``OUT/report/*.csv``) and, ``with_students``, the students' pages (``OUT/students/``);
    ``data``: the class, when it is read already (not with students: their pages are written as
    it is read, and ``done`` adjusts the class and each page's score); ``summary``: the class's
    (None: the folder's ``summary.json``)."""
    out = folder.path
    pages = folder.student_pages() if with_students else None
    if summary is None:
        title = str(folder.summary().get("title") or "")
    else:
        title = summary.batch.title if summary.batch is not None else ""
    hidden_shown_to = folder.rendered_with()
    identities = folder.identities() if with_students else {}

    def page(student_id: str, result: SubmissionResult | None) -> None:
        if pages is not None and result is not None:
            identity = identities.get(student_id)
            late = identity is not None and identity.late
            adjusted = None
            if done is not None:
                row = StudentRow.of(student_id, result, None, late=late)
                shown = done.row_of(row)
                adjusted = shown if shown is not row else None
            pages.write(student_id, render_student_page(
                student_id, result, title=title, display_name=identity.display_name if identity else student_id,
                hidden_shown_to=None if hidden_shown_to is None else hidden_shown_to.value,
                late=late, late_by=identity.late_by if identity is not None else "", adjusted=adjusted))

    if data is None:
        data = folder.load_class(page, identities=identities, summary=summary)  # the report itself names no one
        if done is not None:
            data = done.adjusted(data)
    view = build_view(data, with_students)
    tables = report_tables(view)
    target = html_path or out / REPORT_FILE
    when = (now or datetime.now(UTC)).astimezone(UTC)
    html = render_report(view, tables=tables,
                         generated=f"Made {when:%Y-%m-%d %H:%M} UTC by autodiff-grader {__version__} "
                                   f"from the results in {out.name or out}.",
                         students_href=_relative(out / "students", target.parent),
                         csv_href=_relative(out / "report", target.parent))
    folder.save_report(html, ((t.name, t.header, t.csv_rows()) for t in tables.values()), target)
    if pages is not None:
        for student in data.students:      # those without a readable result: their error row
            if not student.row.has_result or student.row.error == UNREADABLE:
                pages.write(student.student_id, render_student_page(
                    student.student_id, None, display_name=data.identity(student.student_id).display_name,
                    title=data.title, error=student.row.error, late=student.row.late))
    return ReportFiles(target, out / "report", pages.finish() if pages is not None else None)


def _relative(path: Path, start: Path) -> str:
    """``path`` relative to the folder ``start``, as a URL path ending in '/'."""
    relative = os.path.relpath(path.resolve(), start.resolve())
    return "" if relative == "." else relative.replace(os.sep, "/") + "/"
