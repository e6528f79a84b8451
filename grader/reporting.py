"""The class report from an output folder: read OUT, render, write. The shell around the pure
report (:mod:`grader.class_data`, :mod:`grader.class_stats`, :mod:`grader.report.class_html`),
shared by ``grader report``, the end of ``grader grade`` and any tool that rebuilds OUT (a merge of
sharded batches): nothing is regraded, everything comes from the stored results.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import grader
from grader.class_data import ClassData, build_class, result_of
from grader.class_stats import class_statistics
from grader.errors import UsageError
from grader.outdir import REPORT_FILE, OutputFolder
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
from grader.roster import read_roster


@dataclass(frozen=True)
class ReportFiles:
    html: Path
    tables: Path                 # the folder of CSV files
    students: Path | None        # the folder of students' pages, when asked for


def load_class(out: Path) -> ClassData:
    """The class of the output folder ``out``, from its results, summary and identities."""
    folder = OutputFolder(out)
    summary = folder.summary()
    # Reading thousands of results makes millions of objects that all stay alive: the cyclic
    # collector's passes over them find nothing and cost a fifth of the time (benchmarks/README.md).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return build_class(folder.documents(), summary, folder.identities())
    finally:
        if collecting:
            gc.enable()


def write_report(out: Path, *, html_path: Path | None = None, with_students: bool = False,
                 now: datetime | None = None) -> ReportFiles:
    """Write ``out``'s report (``OUT/report.html``, or ``html_path``), its tables
    (``OUT/report/*.csv``) and, ``with_students``, the students' pages (``OUT/students/``)."""
    folder = OutputFolder(out)
    data = load_class(out)
    stats = class_statistics(data.rows, data.columns, {s.id: s.max_points for s in data.scenarios})
    tables = report_tables(data, stats, with_students)
    target = html_path or out / REPORT_FILE
    when = (now or datetime.now(UTC)).astimezone(UTC)
    html = render_report(data, stats, tables=tables, generated=f"Made {when:%Y-%m-%d %H:%M} UTC by autodiff-grader "
                                                f"{grader.__version__} from the results in {out.name or out}.",
                         with_students=with_students,
                         students_href=_relative(out / "students", target.parent),
                         csv_href=_relative(out / "report", target.parent))
    folder.save_report(html, ((t.name, t.header, t.csv_rows()) for t in tables.values()), target)
    students = folder.save_student_pages(_student_pages(folder, data)) if with_students else None
    return ReportFiles(target, out / "report", students)


def _student_pages(folder: OutputFolder, data: ClassData):
    """``(student_id, page)`` for every student, reading the results again one at a time."""
    with_result = set()
    for student_id, document, _ in folder.documents():
        result = result_of(document)
        if result is None:
            continue
        with_result.add(student_id)
        yield student_id, render_student_page(student_id, result, display_name=data.identity(student_id).display_name,
                                              title=data.title, hidden_shown_to=hidden_shown_as(document))
    for student in data.students:
        if student.student_id not in with_result:
            yield student.student_id, render_student_page(
                student.student_id, None, display_name=data.identity(student.student_id).display_name,
                title=data.title, error=student.row.error)


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
    ``lti-scores.jsonl``), from its stored results."""
    data = data or load_class(out)
    folder = OutputFolder(out)
    when = (now or datetime.now(UTC)).astimezone(UTC)
    written = []
    for lms in formats:
        book = lms_gradebooks.render(data, lms, options, when)
        written.append((folder.save_text(lms.file_name, book.text), book))
    return written
