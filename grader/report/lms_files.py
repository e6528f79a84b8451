"""The LMS gradebooks as an output of a batch (``--format canvas moodle moodle-worksheet lti``):
refused when the class is found if one would hold none of its students, written from the stored
results once the class is whole. Which renderer makes each format's file
(:mod:`grader.report.lms_gradebooks`, :mod:`grader.report.moodle_worksheet`) is decided here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from grader.class_data import ClassData
from grader.errors import UsageError
from grader.lms_names import Identity
from grader.outdir import OutputFolder
from grader.report import lms_gradebooks as books
from grader.report.lms_gradebooks import Gradebook, GradebookOptions, LmsFormat, MoodleIdentity, canvas_column_problem
from grader.report.moodle_worksheet import fill_worksheet, worksheet_problem
from grader.report.outputs import BatchStart, Completed, Output
from grader.roster import read_roster


def gradebook_options(canvas_column: str | None, roster: Path | None, moodle_identity: str) -> GradebookOptions:
    """The options of the LMS gradebooks, the roster file read (a UsageError when it cannot be, or
    when ``--canvas-column`` is one Canvas would not read)."""
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


def render(data: ClassData, lms: LmsFormat, options: GradebookOptions, now: datetime) -> Gradebook:
    """The gradebook of ``lms`` for ``data``; ``now``: the timestamp of scores without a result file."""
    if lms is LmsFormat.CANVAS:
        return books.canvas(data, options)
    if lms is LmsFormat.MOODLE:
        return books.moodle(data, options)
    if lms is LmsFormat.MOODLE_WORKSHEET:
        return fill_worksheet(data, options)
    return books.lti(data, options, now)


def placement_problem(lms: LmsFormat, identities: Mapping[str, Identity], options: GradebookOptions) -> str | None:
    """Why ``lms``'s gradebook would hold none of these students (the download's identities, known
    before anything is graded), and what to pass instead; None when some student has a place in it.
    A gradebook that imports nothing is refused rather than written: its LMS would change no grade,
    and say nothing."""
    if lms is LmsFormat.MOODLE_WORKSHEET:
        problem = worksheet_problem(options.roster)
        if problem:
            return problem
    if not identities or any(not why_left_out(lms, student, identity, options)
                             for student, identity in identities.items()):
        return None
    whys = Counter(why_left_out(lms, student, identity, options) for student, identity in identities.items())
    why = whys.most_common(1)[0][0]
    return (f"--format {lms.value}: none of the {len(identities)} students could be put in {lms.file_name} "
            f"({why}); nothing was written")


def why_left_out(lms: LmsFormat, student_id: str, identity: Identity, options: GradebookOptions) -> str:
    """Why ``lms``'s gradebook leaves this student out ("" when it does not)."""
    if lms is LmsFormat.CANVAS:
        return books.canvas_entry(student_id, identity, options.roster)[1]
    if lms is LmsFormat.MOODLE:
        return books.moodle_value(student_id, identity, options)[1]
    if lms is LmsFormat.LTI:
        return books.lti_user(student_id, identity, options.roster)[1]
    return books.participant_of(student_id, identity, options.roster)[1]


def write_gradebooks(folder: OutputFolder, formats: Iterable[LmsFormat], options: GradebookOptions, data: ClassData,
                     now: datetime | None = None) -> list[tuple[Path, Gradebook]]:
    """Write each of ``formats``' gradebook of ``data`` into ``folder`` (``canvas.csv``, ``moodle.csv``,
    ``lti-scores.jsonl``, ``moodle-worksheet.csv``); one that would hold no student is not written
    (``Gradebook.written``), and an earlier run's is removed."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    written = []
    for lms in formats:
        book = render(data, lms, options, when)
        target = folder.path / lms.file_name
        if book.rows == 0:   # a file its LMS would import nothing from: not written (nor one of an earlier run)
            book.written = False
            target.unlink(missing_ok=True)
            written.append((target, book))
            continue
        written.append((folder.save_text(lms.file_name, book.text), book))
    return written


class LmsGradebooks(Output):
    """The gradebooks of ``formats``; :attr:`written` says what was written where, once the class is
    whole. ``now``: the time of scores without a result file (default: when they are written)."""

    def __init__(self, formats: Iterable[LmsFormat], options: GradebookOptions, now: datetime | None = None):
        self.formats = tuple(dict.fromkeys(formats))
        self.options, self.now = options, now
        self.written: list[tuple[Path, Gradebook]] = []

    def check(self, start: BatchStart) -> list[str]:
        return [problem for lms in self.formats
                if (problem := placement_problem(lms, start.identities, self.options))]

    def completed(self, done: Completed) -> None:
        if self.formats:
            self.written = write_gradebooks(done.folder, self.formats, self.options, done.class_data(), self.now)
