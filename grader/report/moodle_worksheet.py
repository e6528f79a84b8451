"""Moodle's grading worksheet, filled in: the CSV a teacher downloads from the assignment (*View all
submissions* > *Download grading worksheet*, with the *Offline grading worksheet* feedback type on),
given back with the grades and feedback, for *Upload grading worksheet*. Pure, over the worksheet's
text (``--roster FILE``) and the class.

The rules, from Moodle's code (``mod/assign/gradingtable.php`` writes it,
``mod/assign/feedback/offline`` reads it back):

* the upload finds its columns by their header, in the language the teacher's Moodle speaks:
  ``Identifier`` (``Participant <id>``: the unique id in the assignment of each student, the same as
  in *Download all submissions*' names), ``Grade`` and ``Last modified (grade)`` must all be there,
  or the whole file is refused; each feedback plugin's column (``Feedback comments``) is read when
  present. Every other column (``Full name``, ``Status``, ``Maximum Grade``...) is ignored;
* a row's grade is taken when it is a number from 0 to the assignment's maximum (the worksheet's
  ``Maximum Grade``; an assignment graded on a scale has a ``Scale`` column instead, and takes a
  scale's word), and differs from the grade Moodle holds; an empty grade changes nothing, nor does a
  row whose grade was changed in Moodle after the worksheet's ``Last modified (grade)`` (unless the
  teacher ticks "Allow updating records that have been modified more recently in Moodle"), nor one
  whose ``Grade can be changed`` is ``No`` (locked, or released through a marking workflow).

So the worksheet is written back as it was downloaded, column for column and row for row, with only
``Grade`` and ``Feedback comments`` filled in for the students of the class: the ``Last modified``
columns untouched, and the rows of students not in the class as they were (Moodle skips them). A
grade is scaled to the worksheet's ``Maximum Grade`` when the assignment's points differ (said so).
"""

from __future__ import annotations

import csv
import io
import math
import re

from grader.class_data import ClassData
from grader.report.lms_gradebooks import Gradebook, GradebookOptions, LmsFormat, feedback_line, participant_of
from grader.report.text import points
from grader.roster import Roster

IDENTIFIER, GRADE, MODIFIED = "Identifier", "Grade", "Last modified (grade)"   # what the upload needs
MAXIMUM, SCALE, CHANGEABLE, FEEDBACK = "Maximum Grade", "Scale", "Grade can be changed", "Feedback comments"
_PARTICIPANT = re.compile(r"^\s*\S+\s*(\d+)\s*$")   # "Participant 123457" (the word is Moodle's language's)
_DOWNLOAD = ("download it from the assignment: View all submissions > Download grading worksheet (the "
             "assignment's feedback types must include Offline grading worksheet), with Moodle's language "
             "set to English")


def worksheet_problem(roster: Roster | None) -> str | None:
    """Why ``roster`` cannot be filled in as a grading worksheet (None when it can)."""
    if roster is None:
        return ("--format moodle-worksheet fills in the assignment's grading worksheet: pass the one you downloaded "
                f"as --roster FILE ({_DOWNLOAD})")
    header = [name.strip() for name in roster.header]
    missing = [name for name in (IDENTIFIER, GRADE, MODIFIED) if name not in header]
    if missing:
        return (f"--roster {roster.source} is not Moodle's grading worksheet: it has no "
                f"{' and no '.join(repr(name) for name in missing)} column, which Moodle's upload needs; {_DOWNLOAD}")
    if SCALE in header and MAXIMUM not in header:
        return (f"--roster {roster.source}: the assignment is graded on a scale (its worksheet has a Scale column), "
                "which takes a scale's words, not points; set the assignment's grade type to Point")
    return None


def fill_worksheet(data: ClassData, options: GradebookOptions) -> Gradebook:
    """The worksheet of ``options.roster`` with the grades and feedback of ``data``'s students."""
    roster = options.roster
    problem = worksheet_problem(roster)
    if problem:
        from grader.errors import UsageError
        raise UsageError(problem)
    assert roster is not None
    book = Gradebook(LmsFormat.MOODLE_WORKSHEET, "", 0)
    ours = {}
    for student, identity in data.gradebook_students():
        participant, why = participant_of(student.student_id, identity, roster)
        if participant:
            ours[participant] = student
        else:
            book.left_out.append((student.student_id, why))
    bom = "\ufeff" if roster.text.startswith("\ufeff") else ""
    rows = list(csv.reader(io.StringIO(roster.text.removeprefix("\ufeff"))))
    header = [name.strip() for name in rows[0]]
    column = {name: header.index(name) for name in (IDENTIFIER, GRADE, MAXIMUM, CHANGEABLE, FEEDBACK) if name in header}
    found: set[str] = set()
    scaled: set[str] = set()
    for row in rows[1:]:
        match = _PARTICIPANT.match(_cell(row, column[IDENTIFIER]))
        if match is None or match.group(1) not in ours:
            continue   # not a student of this class: as downloaded, which Moodle's upload skips
        found.add(match.group(1))
        student = ours[match.group(1)]
        if CHANGEABLE in column and _cell(row, column[CHANGEABLE]).strip().lower() == "no":
            book.left_out.append((student.student_id, "the worksheet says its grade cannot be changed (locked, or "
                                                       "released by the marking workflow)"))
            continue
        maximum = _number(_cell(row, column[MAXIMUM])) if MAXIMUM in column else None
        score = student.row.score
        if maximum is not None and data.max_score > 0 and not math.isclose(maximum, data.max_score):
            score = score * maximum / data.max_score
            scaled.add(points(maximum))
        _set(row, column[GRADE], _grade(score))
        if FEEDBACK in column:
            _set(row, column[FEEDBACK], feedback_line(student, html=True))
        book.rows += 1
    for participant, student in ours.items():
        if participant not in found:
            book.left_out.append((student.student_id, f"participant {participant} is not in {roster.source}"))
    book.left_out.sort()
    if scaled:
        book.notes.append(f"the assignment's {points(data.max_score)} points are scaled to the worksheet's maximum "
                          f"grade ({', '.join(sorted(scaled))})")
    if FEEDBACK not in column:
        book.notes.append("the worksheet has no Feedback comments column, so only grades go back: turn on the "
                          "assignment's Feedback comments and download the worksheet again to send feedback too")
    stream = io.StringIO()
    stream.write(bom)
    csv.writer(stream, lineterminator="\n").writerows(rows)
    book.text = stream.getvalue()
    return book


def _cell(row: list[str], index: int) -> str:
    return row[index] if index < len(row) else ""


def _set(row: list[str], index: int, value: str) -> None:
    row.extend([""] * (index + 1 - len(row)))
    row[index] = value


def _number(text: str) -> float | None:
    try:
        value = float(text.strip().replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _grade(value: float) -> str:
    """A grade as Moodle writes one (two decimals, the worksheet's style)."""
    return f"{round(value, 2):.2f}"
