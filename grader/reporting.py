"""The class report from an output folder: read OUT, render, write. The shell around the pure
report (:mod:`grader.class_data`, :mod:`grader.class_stats`, :mod:`grader.report.class_html`),
shared by ``grader report``, the end of ``grader grade`` and any tool that rebuilds OUT (a merge of
sharded batches): nothing is regraded, everything comes from the stored results.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from grader.class_data import UNREADABLE, ClassBuilder, ClassData
from grader.class_stats import class_statistics
from grader.errors import UsageError
from grader.lms_names import Identity
from grader.outdir import REPORT_FILE, OutputFolder
from grader.records import record
from grader.report import lms_gradebooks
from grader.report.class_html import render_report
from grader.report.class_tables import report_tables
from grader.report.json_report import hidden_shown_as
from grader.report.lms_gradebooks import (
    Gradebook,
    GradebookOptions,
    LmsFormat,
    MoodleIdentity,
    canvas_column_problem,
)
from grader.report.student_html import render_student_page
from grader.results import SubmissionResult
from grader.roster import read_roster
from grader.version import __version__


@record
class ReportFiles:
    html: Path
    tables: Path                 # the folder of CSV files
    students: Path | None        # the folder of students' pages, when asked for


def load_class(out: Path, on_result: Callable[[str, SubmissionResult | None, dict], None] | None = None, *,
               identities: dict[str, Identity] | None = None) -> ClassData:
    """The class of the output folder ``out``, from its results, its summary and the students'
    ``identities`` (None: read from ``out``; a caller that names no one passes ``{}``);
    ``on_result(student_id, result, document)`` is called for each stored result as it is read
    (None when the document holds no result), so that a caller needing each result reads it once."""
    folder = OutputFolder(out)
    builder = ClassBuilder(folder.summary(), folder.identities() if identities is None else identities)
    # Reading thousands of results makes millions of objects that all stay alive: the cyclic
    # collector's passes over them find nothing and cost a fifth of the time (benchmarks/README.md).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for student_id, document, modified in folder.documents():
            result = builder.add(student_id, document, modified)
            if on_result is not None:
                on_result(student_id, result, document)
    finally:
        if collecting:
            gc.enable()
    return builder.build()


def write_report(out: Path, *, html_path: Path | None = None, with_students: bool = False,
                 now: datetime | None = None) -> ReportFiles:
    """Write ``out``'s report (``OUT/report.html``, or ``html_path``), its tables
    (``OUT/report/*.csv``) and, ``with_students``, the students' pages (``OUT/students/``)."""
    folder = OutputFolder(out)
    pages = folder.student_pages() if with_students else None
    title = str(folder.summary().get("title") or "")
    identities = folder.identities() if with_students else {}

    def page(student_id: str, result: SubmissionResult | None, document: dict) -> None:
        if pages is not None and result is not None:
            identity = identities.get(student_id)
            pages.write(student_id, render_student_page(student_id, result, title=title,
                                                        display_name=identity.display_name if identity else student_id,
                                                        hidden_shown_to=hidden_shown_as(document),
                                                        late=identity is not None and identity.late))

    data = load_class(out, page, identities=identities)  # the class report itself names no one
    stats = class_statistics(data.rows, data.columns, {s.id: s.max_points for s in data.scenarios})
    tables = report_tables(data, stats, with_students)
    target = html_path or out / REPORT_FILE
    when = (now or datetime.now(UTC)).astimezone(UTC)
    html = render_report(data, stats, tables=tables,
                         generated=f"Made {when:%Y-%m-%d %H:%M} UTC by autodiff-grader {__version__} "
                                   f"from the results in {out.name or out}.",
                         with_students=with_students,
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


def gradebook_options(canvas_column: str | None, roster: Path | None, moodle_identity: str) -> GradebookOptions:
    """The options of the LMS gradebooks, the roster file read (a UsageError when it cannot be)."""
    if canvas_column is not None:
        problem = canvas_column_problem(canvas_column)
        if problem:
            raise UsageError(problem)
    read = None
    if roster is not None:
        try:
            text = roster.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"--roster {roster}: cannot be read ({error}); export it again as CSV (UTF-8)") from None
        read = read_roster(text, str(roster))
    return GradebookOptions(canvas_column, MoodleIdentity(moodle_identity), read)


def write_gradebooks(out: Path, formats: list[LmsFormat], options: GradebookOptions,
                     now: datetime | None = None, data: ClassData | None = None) -> list[tuple[Path, Gradebook]]:
    """Write each of ``formats``' gradebook into ``out`` (``canvas.csv``, ``moodle.csv``,
    ``lti-scores.jsonl``, ``moodle-worksheet.csv``), from its stored results; one that would hold no
    student is not written (``Gradebook.written``), and an earlier run's is removed."""
    data = data or load_class(out)
    folder = OutputFolder(out)
    when = (now or datetime.now(UTC)).astimezone(UTC)
    written = []
    for lms in formats:
        book = lms_gradebooks.render(data, lms, options, when)
        if book.rows == 0:   # a file its LMS would import nothing from: not written (nor one of an earlier run)
            book.written = False
            (out / lms.file_name).unlink(missing_ok=True)
            written.append((out / lms.file_name, book))
            continue
        written.append((folder.save_text(lms.file_name, book.text), book))
    return written


def gradebook_refusals(formats: list[LmsFormat], identities: Mapping[str, Identity],
                       options: GradebookOptions) -> list[str]:
    """Why each of ``formats`` would hold none of the students of ``identities`` (before anything
    is graded or written)."""
    return [problem for lms in formats if (problem := lms_gradebooks.placement_problem(lms, identities, options))]
