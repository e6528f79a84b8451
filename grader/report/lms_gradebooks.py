"""Gradebooks each LMS imports as they are: Canvas's gradebook CSV, Moodle's grade import CSV and
LTI 1.3 Assignment and Grade Services scores. Pure functions over a class
(:class:`~grader.class_data.ClassData`), an optional roster and the options.

Which student each row is for comes from the download's names (:mod:`grader.lms_names`: a
Canvas user id, a Moodle participant id) or from a roster exported from the LMS
(:mod:`grader.roster`); a student no rule can match is left out of the file, and listed with why
(:attr:`Gradebook.left_out`), never guessed. Every student in the file has a score: an ungradable
submission scores 0 with its reason (Canvas and Moodle read an empty cell as "no grade", which
keeps an old grade or clears it), except in LTI, where it is ``gradingProgress: Failed``. With
``--missing zero`` the roster's students without a submission follow the class's
(:meth:`~grader.class_data.ClassData.gradebook_students`): 0 and "no submission"; the scores are the
final ones (:mod:`grader.adjustments`), the feedback saying what an override or a penalty did.

The importers' rules these files follow, from their code and specifications:

* **Canvas** (``GradebookImporter``): the header's first cells are ``Student``, ``ID``, ``SIS
  User ID``, ``SIS Login ID``, ``Section``; a row whose first cell holds ``Points Possible`` gives
  each assignment's points; a student is found by ``ID`` (the user id), else by SIS User ID, SIS
  Login ID, then name. An assignment column named ``Title (123)`` (a space, then the id in
  parentheses: ``/\\A(.*)\\s\\((\\d+)\\)\\z/``) updates assignment 123; any other name updates the
  assignment of that exact title, or creates one. Columns whose name contains ``Current Score``,
  ``Final Grade`` and the like are read-only totals and dropped. An empty cell changes nothing.
* **Moodle** (Grades > Import > CSV file): one column identifies the user ("Map from"), matched
  ("Map to") on the user's email address, ID number or username; an unknown user aborts the whole
  import, so every row here has one. The grade column maps to the assignment's grade item (points
  on its scale, at most the site's *gradepointmax*, 100 by default); the feedback column maps to
  "Feedback for" that item, which Moodle shows as HTML (so it is escaped).
* **Moodle's grading worksheet** (the assignment's *Download grading worksheet*, filled in and given
  back through *Upload grading worksheet*; :mod:`grader.report.moodle_worksheet`).
* **LTI AGS** (Score publish service, ``application/vnd.ims.lis.v1.score+json``): ``userId``,
  ``scoreGiven``, ``scoreMaximum`` (present when scoreGiven is), ``comment``, ``timestamp`` (ISO
  8601 with sub-second precision), ``activityProgress`` and ``gradingProgress``. A platform keeps
  a score only when ``gradingProgress`` is ``FullyGraded``; with ``Failed`` it ignores
  ``scoreGiven`` (Canvas documents this), and it refuses a score older than the one it holds. A
  student who submitted nothing has ``activityProgress: Initialized`` ("the user has not started the
  activity"); the spec's ``NotReady`` ("there is no grading process occurring; for example, the
  student has not yet made any submission") would leave the grade alone, which is the default
  (``--missing leave``: not in the file), so ``--missing zero``'s 0 is ``FullyGraded``, a grade given.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from html import escape

from grader.adjustments import NO_SUBMISSION, Missing
from grader.class_data import ClassData, StudentRecord
from grader.errors import UsageError
from grader.lms_names import Identity, NameSystem
from grader.records import record
from grader.report.gradebook import spreadsheet_safe
from grader.report.text import passed_words, points
from grader.roster import Roster, RosterEntry


class LmsFormat(str, Enum):
    CANVAS = "canvas"
    MOODLE = "moodle"
    LTI = "lti"
    MOODLE_WORKSHEET = "moodle-worksheet"   # the assignment's grading worksheet, filled in

    @property
    def file_name(self) -> str:
        return {"canvas": "canvas.csv", "moodle": "moodle.csv", "lti": "lti-scores.jsonl",
                "moodle-worksheet": "moodle-worksheet.csv"}[self.value]

    @property
    def label(self) -> str:
        """How the CLI names it."""
        return {"canvas": "Canvas gradebook", "moodle": "Moodle gradebook", "lti": "LTI AGS gradebook",
                "moodle-worksheet": "Moodle grading worksheet"}[self.value]


class MoodleIdentity(str, Enum):
    """The user field Moodle's CSV import matches a row on (its "Map to")."""

    EMAIL = "email"
    IDNUMBER = "idnumber"
    USERNAME = "username"

    @property
    def header(self) -> str:
        return {"email": "Email address", "idnumber": "ID number", "username": "Username"}[self.value]


CANVAS_STUDENT_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_RESERVED = (*CANVAS_STUDENT_COLUMNS, "LastName", "FirstName", "Integration ID", "Root Account")
CANVAS_READ_ONLY = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points", "Final Grade",
                    "Override Score", "Override Grade", "Override Status")
CANVAS_TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z", re.DOTALL)
MOODLE_GRADE_POINT_MAX = 100      # Moodle's default gradepointmax
_CANVAS_KEYS = ("canvas_id", "sis_user_id", "sis_login_id")   # what a plain student id may be, in a Canvas roster


@record
class GradebookOptions:
    canvas_column: str | None = None              # default: the assignment's title
    moodle_identity: MoodleIdentity = MoodleIdentity.EMAIL
    roster: Roster | None = None


@dataclass
class Gradebook:
    format: LmsFormat
    text: str
    rows: int                                                     # students in the file
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (student id, why)
    notes: list[str] = field(default_factory=list)
    written: bool = True                                          # False: it would hold no student, so it is not

    @property
    def why_empty(self) -> str:
        """The most common reason its students were left out (what to fix when it holds none)."""
        whys = Counter(why for _, why in self.left_out)
        return whys.most_common(1)[0][0] if whys else "there are no students"


def canvas_column_problem(column: str) -> str | None:
    """Why Canvas's importer would not read ``column`` as the one assignment's column, or None."""
    if not column.strip() or "\n" in column or "\r" in column:
        return "--canvas-column must be one line of text, the assignment's title, ideally 'Title (assignment id)'"
    if column.strip() in CANVAS_RESERVED:
        return f"--canvas-column {column!r} is one of Canvas's student columns; give the assignment's title"
    clash = next((name for name in CANVAS_READ_ONLY if name in column), None)
    if clash:
        return (f"--canvas-column {column!r} contains {clash!r}: Canvas's importer drops such columns as read-only "
                "totals; give the assignment's own title")
    if re.search(r"\S\(\d+\)\Z", column):
        spaced = re.sub(r"[(](\d+)[)]$", r" (\1)", column)
        return f"--canvas-column {column!r}: Canvas reads the assignment id only after a space, as in {spaced!r}"
    return None


def canvas(data: ClassData, options: GradebookOptions) -> Gradebook:
    column = options.canvas_column or data.title or data.assignment
    problem = canvas_column_problem(column)
    if problem:
        raise UsageError(problem)
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow([*CANVAS_STUDENT_COLUMNS, column])
    writer.writerow(["Points Possible", "", "", "", "", points(data.max_score)])
    book = Gradebook(LmsFormat.CANVAS, "", 0)
    for student, identity in data.gradebook_students():
        entry, why = canvas_entry(student.student_id, identity, options.roster)
        if entry is None:
            book.left_out.append((student.student_id, why))
            continue
        writer.writerow([spreadsheet_safe(entry.name), entry.canvas_id, entry.sis_user_id,
                         spreadsheet_safe(entry.sis_login_id), spreadsheet_safe(entry.section),
                         points(student.row.score)])
        book.rows += 1
    if not CANVAS_TITLE_AND_ID.match(column):
        book.notes.append(f"the column {column!r} names no assignment id, so Canvas updates the assignment of exactly "
                          "that title or creates a new one; pass --canvas-column 'Title (assignment id)' to be sure")
    book.text = stream.getvalue()
    return book


def canvas_entry(student_id: str, identity: Identity, roster: Roster | None) -> tuple[RosterEntry | None, str]:
    if identity.system is NameSystem.CANVAS and identity.lms_id:
        found = roster.by_canvas_id(identity.lms_id) if roster else None
        return found or RosterEntry(name=identity.display_name, canvas_id=identity.lms_id), ""
    if roster is not None and identity.system is NameSystem.PLAIN:
        found = roster.matching(student_id, _CANVAS_KEYS)
        if found is not None and found.canvas_id:
            return found, ""
        return None, f"not in {roster.source} as an ID, SIS User ID or SIS Login ID"
    if identity.system is NameSystem.CANVAS:
        return None, "an anonymous Canvas download has no user id; grade a download with names shown"
    if identity.system is NameSystem.MOODLE:
        return None, "a Moodle download's name, not a Canvas one"
    return None, "no Canvas user id in the name; pass --roster with the gradebook exported from Canvas"


def moodle(data: ClassData, options: GradebookOptions) -> Gradebook:
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    grade_column = data.title or data.assignment
    writer.writerow([options.moodle_identity.header, grade_column, "Feedback"])
    book = Gradebook(LmsFormat.MOODLE, "", 0)
    for student, identity in data.gradebook_students():
        value, why = moodle_value(student.student_id, identity, options)
        if not value:
            book.left_out.append((student.student_id, why))
            continue
        writer.writerow([spreadsheet_safe(value), points(student.row.score), feedback_line(student, html=True)])
        book.rows += 1
    if data.max_score > MOODLE_GRADE_POINT_MAX:
        book.notes.append(f"the maximum score {points(data.max_score)} is above Moodle's default gradepointmax "
                          f"({MOODLE_GRADE_POINT_MAX}): raise it, or the import stops at the first grade above it")
    if options.roster is None and any(data.identity(s.student_id).system is NameSystem.PLAIN for s in data.students):
        book.notes.append(f"the student ids are taken as the {options.moodle_identity.header} Moodle matches on; "
                          "pass --roster when they are not")
    book.text = stream.getvalue()
    return book


def moodle_value(student_id: str, identity: Identity, options: GradebookOptions) -> tuple[str, str]:
    """The user field Moodle's import matches this student on, or "" and why there is none."""
    field_name, roster = options.moodle_identity.value, options.roster
    if identity.system is NameSystem.MOODLE:
        entry = roster.by_participant(identity.lms_id or "") if roster else None
        if entry and getattr(entry, field_name):
            return getattr(entry, field_name), ""
        if roster:
            return "", f"participant {identity.lms_id} has no {options.moodle_identity.header} in {roster.source}"
        return "", ("Moodle's download names give participant ids, which its grade import cannot match; pass "
                    "--roster with the assignment's grading worksheet, or fill that worksheet in with --format "
                    "moodle-worksheet")
    if identity.system is NameSystem.PLAIN:
        if roster is None:
            return student_id, ""
        entry = roster.matching(student_id, (field_name,))
        return (getattr(entry, field_name), "") if entry else \
            ("", f"not in {roster.source} as an {options.moodle_identity.header}")
    return "", "a Canvas download's name, not a Moodle one"


def lti(data: ClassData, options: GradebookOptions, now: datetime) -> Gradebook:
    lines = []
    book = Gradebook(LmsFormat.LTI, "", 0)
    for student, identity in data.gradebook_students():
        user_id, why = lti_user(student.student_id, identity, options.roster)
        if not user_id:
            book.left_out.append((student.student_id, why))
            continue
        row = student.row
        when = datetime.fromtimestamp(student.modified, UTC) if student.modified is not None else now
        missing = row.error == NO_SUBMISSION and not row.has_result
        graded = row.graded or bool(row.override) or missing   # an instructor's decision is a grade
        score = {"userId": user_id, "scoreGiven": row.score, "scoreMaximum": row.max_score or data.max_score,
                 "comment": feedback_line(student, html=False), "timestamp": when.isoformat(timespec="milliseconds"),
                 "activityProgress": "Initialized" if missing else "Completed",
                 "gradingProgress": "FullyGraded" if graded else "Failed"}
        lines.append(json.dumps(score, ensure_ascii=False, allow_nan=False))
        book.rows += 1
    if options.roster is None and any(data.identity(s.student_id).system is NameSystem.PLAIN for s in data.students):
        book.notes.append("the student ids are taken as the LMS user ids; pass --roster (Canvas's gradebook export) "
                          "when they are not")
    book.text = "".join(line + "\n" for line in lines)
    return book


def lti_user(student_id: str, identity: Identity, roster: Roster | None) -> tuple[str, str]:
    """The LMS user id of a score, or "" and why there is none."""
    if identity.system is NameSystem.CANVAS and identity.lms_id:
        return identity.lms_id, ""
    if identity.system is NameSystem.PLAIN:
        if roster is None:
            return student_id, ""
        entry = roster.matching(student_id, _CANVAS_KEYS)
        return (entry.canvas_id, "") if entry and entry.canvas_id else ("", f"not in {roster.source}")
    if identity.system is NameSystem.MOODLE:
        return "", ("no LMS user id: a Moodle participant id is not one (for Moodle, use --format moodle-worksheet, "
                    "or moodle with --roster)")
    return "", "no LMS user id: an anonymous Canvas id is not one"


def participant_of(student_id: str, identity: Identity, roster: Roster | None) -> tuple[str, str]:
    """The Moodle participant id (digits) a grading worksheet knows this student by, or "" and why:
    a Moodle download's own, else the worksheet's row whose email, ID number or username is the id."""
    if identity.system is NameSystem.MOODLE and identity.lms_id:
        return identity.lms_id, ""
    if identity.system is NameSystem.PLAIN:
        if roster is None:
            return "", "no grading worksheet (--roster) to find the student in"
        entry = roster.matching(student_id, ("email", "idnumber", "username"))
        if entry and entry.participant:
            return entry.participant, ""
        return "", f"not in {roster.source} as an Email address, ID number or Username"
    return "", "a Canvas download's name, not a Moodle one"


def feedback_line(student: StudentRecord, html: bool) -> str:
    """One line: the score, and how many scenarios passed, or why it could not be graded; and what
    an override or a late penalty did to the score."""
    row = student.row
    if row.error == NO_SUBMISSION and not row.has_result:
        text = NO_SUBMISSION
    elif row.error is not None:
        text = f"{points(row.score)} points: could not be graded: {row.error}"
    else:
        text = (f"{points(row.score)}/{points(row.max_score or 0)} points, "
                + passed_words(zip(map(bool, row.passed), (column.points for column in row.columns))))
    if row.override:
        text += f"; set by the instructor: {row.override}"
    if row.before_penalty is not None and row.before_penalty != row.score:
        text += f"; late: {points(row.before_penalty)} before the penalty"
    return escape(text, quote=False) if html else text


CANVAS_TEST_STUDENT = "Student, Test"   # the test student every Canvas course has, in its gradebook export


def without_submission(roster: Roster, identities: dict[str, Identity]) -> tuple[Missing, ...]:
    """The roster's students whom no student of the class is (by the rules that place a student in
    a gradebook: a Canvas user id, a Moodle participant id, a plain id as a roster's field), each in
    the roster's identity, by name. Canvas's test student is nobody's and not listed."""
    matched: set[int] = set()
    for student, identity in identities.items():
        entry = _roster_entry(student, identity, roster)
        if entry is not None:
            matched.add(id(entry))
    missing = []
    for entry in roster.entries:
        if id(entry) in matched or entry.name == CANVAS_TEST_STUDENT:
            continue
        if entry.canvas_id:
            missing.append(Missing(entry.canvas_id, entry.name, Identity(NameSystem.CANVAS, entry.name,
                                                                          entry.canvas_id)))
        elif entry.participant:
            missing.append(Missing(f"Participant {entry.participant}", entry.name,
                                   Identity(NameSystem.MOODLE, entry.name, entry.participant)))
        else:
            key = entry.email or entry.idnumber or entry.username or entry.sis_user_id or entry.sis_login_id
            if key:
                missing.append(Missing(key, entry.name or key, Identity(NameSystem.PLAIN, key)))
    return tuple(sorted(missing, key=lambda m: (m.name.casefold(), m.key)))


def _roster_entry(student_id: str, identity: Identity, roster: Roster) -> RosterEntry | None:
    if identity.system is NameSystem.CANVAS:
        return roster.by_canvas_id(identity.lms_id) if identity.lms_id else None
    if identity.system is NameSystem.MOODLE:
        return roster.by_participant(identity.lms_id or "")
    return roster.matching(student_id, (*_CANVAS_KEYS, "email", "idnumber", "username"))
