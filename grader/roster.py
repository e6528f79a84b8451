"""A roster exported from an LMS (``--roster FILE``), read to match students to the ids its grade
import needs: pure, over the file's text.

Two exports are understood, told apart by their header (names compared without case or spaces
around them):

* **Canvas**, the gradebook's *Export Entire Gradebook* CSV: ``Student``, ``ID`` (the user id),
  ``SIS User ID``, ``SIS Login ID``, ``Section``, then assignment columns (ignored). Its
  ``Points Possible`` row and its ``Manual Posting`` / ``Muted`` rows are not students.
* **Moodle**, the assignment's *Download grading worksheet* CSV: ``Identifier`` (``Participant
  <id>``, the participant id of the *Download all submissions* names), ``Full name``, then the
  identity fields the site shows (``Email address``, ``ID number``, ``Username``) and the grading
  columns (ignored, but for ``Last modified (submission)``: when the student handed in, which
  ``--deadline`` reads). A participants export with ``Email address``, ``ID number`` or
  ``Username`` columns also does, for submissions named by one of those.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field

from grader.errors import UsageError
from grader.records import record

_CANVAS = {"student": "name", "id": "canvas_id", "sis user id": "sis_user_id", "sis login id": "sis_login_id",
           "section": "section"}
_MOODLE = {"identifier": "participant", "full name": "name", "email address": "email", "email": "email",
           "id number": "idnumber", "idnumber": "idnumber", "username": "username",
           "last modified (submission)": "submitted"}
_PARTICIPANT = re.compile(r"^\s*(?:participant\s*)?(\d+)\s*$", re.IGNORECASE)


@record
class RosterEntry:
    name: str = ""
    canvas_id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    participant: str = ""          # Moodle's participant id, digits only
    email: str = ""
    idnumber: str = ""
    username: str = ""
    submitted: str = ""            # a grading worksheet's "Last modified (submission)", as written (grader.lateness)


@dataclass
class Roster:
    source: str                                  # the file, for messages
    entries: list[RosterEntry] = field(default_factory=list)
    text: str = ""                               # the file's content (a grading worksheet is filled in as it is)
    header: tuple[str, ...] = ()                 # its first row, as written

    def by_canvas_id(self, user_id: str) -> RosterEntry | None:
        return next((e for e in self.entries if e.canvas_id == user_id), None)

    def by_participant(self, participant: str) -> RosterEntry | None:
        return next((e for e in self.entries if e.participant == participant), None)

    def matching(self, student_id: str, fields: tuple[str, ...]) -> RosterEntry | None:
        """The one entry whose value in one of ``fields`` is ``student_id`` (compared in NFC, and
        without case for logins, emails and usernames); None when none, or more than one, is."""
        wanted = unicodedata.normalize("NFC", student_id)
        found = {id(e): e for e in self.entries for name in fields if _same(getattr(e, name), wanted, name)}
        return next(iter(found.values())) if len(found) == 1 else None


def read_roster(text: str, source: str) -> Roster:
    """The roster in ``text`` (the content of the file ``source``); a UsageError saying what is
    wrong, and what to export, when it is neither a Canvas nor a Moodle export."""
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    if not rows:
        raise UsageError(f"{source}: the roster is empty; export the gradebook (Canvas) or the grading worksheet "
                         "(Moodle) and pass that file")
    header = [cell.strip().lower() for cell in rows[0]]
    columns = {i: _CANVAS.get(name) or _MOODLE.get(name) or "" for i, name in enumerate(header)}
    columns = {i: name for i, name in columns.items() if name}
    if not ({"canvas_id", "participant", "email", "idnumber", "username"} & set(columns.values())):
        raise UsageError(f"{source}:1: no column names a student (expected Canvas's ID, SIS User ID, SIS Login ID "
                         "or Moodle's Identifier, Email address, ID number, Username); got "
                         + ", ".join(repr(cell) for cell in rows[0][:8]))
    roster = Roster(source, text=text, header=tuple(rows[0]))
    for line, row in enumerate(rows[1:], start=2):
        values: dict[str, str] = {}
        for i, name in columns.items():
            if i < len(row) and name not in values:
                values[name] = row[i].strip()
        if not any(values.values()) or _not_a_student(row, values):
            continue
        if "participant" in values:
            match = _PARTICIPANT.match(values["participant"])
            if not match:
                raise UsageError(f"{source}:{line}: Identifier {values['participant']!r} is not 'Participant <id>'")
            values["participant"] = match.group(1)
        roster.entries.append(RosterEntry(**values))
    return roster


def _not_a_student(row: list[str], values: dict[str, str]) -> bool:
    """Canvas's export rows that describe the assignments, as its importer tells them."""
    first = row[0] if row else ""
    return "Points Possible" in first or all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", cell, re.IGNORECASE)
                                             for cell in row if cell)


def _same(value: str, wanted: str, name: str) -> bool:
    if not value:
        return False
    value = unicodedata.normalize("NFC", value)
    if name in ("sis_login_id", "email", "username"):
        return value.casefold() == wanted.casefold()
    return value == wanted
