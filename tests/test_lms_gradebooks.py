"""Rosters (grader.roster) and the LMS gradebooks (grader.report.lms_gradebooks) on classes made by
hand: who is matched by which rule, who is left out and why, and the importers' rules."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

import pytest

from grader.class_data import build_class
from grader.errors import UsageError
from grader.lms_names import Identity, NameSystem
from grader.report.lms_files import render
from grader.report.lms_gradebooks import (
    CANVAS_TITLE_AND_ID,
    GradebookOptions,
    LmsFormat,
    MoodleIdentity,
    canvas_column_problem,
)
from grader.results import Feedback, ScenarioResult, Status, SubmissionResult
from grader.roster import read_roster
from grader.visibility import Scope, Visibility

NOW = datetime(2030, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


def _document(score: float, error: str | None = None) -> dict:
    scenario = ScenarioResult("s1", "one", "t", score, 10.0, Status.PASSED if score else Status.FAILED,
                              Feedback(misconception=None if score else "wrong"), 0.01, Visibility.PUBLIC)
    return SubmissionResult("a", "d", "x.py", "h", 1, Scope.ALL, score, 10.0, (), (scenario,), "0", ("rlimits",),
                            error=error).to_dict()


IDENTITIES = {
    "smithjane_4242": Identity(NameSystem.CANVAS, "smithjane", "4242", "9"),
    "anon_x1": Identity(NameSystem.CANVAS, "anon_x1"),
    "Jane Doe_123457": Identity(NameSystem.MOODLE, "Jane Doe", "123457"),
    "alice": Identity(NameSystem.PLAIN, "alice"),
}


@pytest.fixture
def data():
    documents = [("smithjane_4242", _document(10), 1.9e9), ("anon_x1", _document(0), 1.9e9),
                 ("Jane Doe_123457", _document(10), 1.9e9), ("alice", _document(0, error="SyntaxError: x"), None)]
    summary = {"assignment": "a", "title": "Autodiff", "max_score": 10.0,
               "ungradable": [{"student_id": "alice", "reason": "SyntaxError: x"},
                              {"student_id": "bob", "reason": "no autodiff.py in bob/"}]}
    return build_class(documents, summary, {**IDENTITIES, "bob": Identity(NameSystem.PLAIN, "bob")})


def test_canvas_roster_skips_its_points_possible_and_posting_rows():
    text = ("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Quiz (1)\n    Points Possible,,,,,10\n"
            ",,,,,Manual Posting\n\"Smith, Jane\",4242,S1,JSmith,Sec A,7\n")
    roster = read_roster(text, "export.csv")
    assert [(e.name, e.canvas_id, e.sis_login_id) for e in roster.entries] == [("Smith, Jane", "4242", "JSmith")]
    assert roster.matching("jsmith", ("sis_login_id",)).canvas_id == "4242"      # logins without case
    assert roster.matching("s1", ("sis_user_id",)) is None                        # SIS ids exactly


def test_moodle_worksheet_gives_participants_their_identity_fields():
    roster = read_roster("Identifier,Full name,Email address,ID number\nParticipant 12,A B,a@x.edu,77\n", "w.csv")
    entry = roster.by_participant("12")
    assert (entry.email, entry.idnumber, entry.name) == ("a@x.edu", "77", "A B")
    with pytest.raises(UsageError, match=r"w.csv:2: Identifier 'Someone' is not 'Participant <id>'"):
        read_roster("Identifier,Email address\nSomeone,a@x.edu\n", "w.csv")
    with pytest.raises(UsageError, match=r"x.csv:1: no column names a student"):
        read_roster("name,points\n", "x.csv")
    ambiguous = read_roster("Email address,Username\na@x.edu,ann\nb@x.edu,ANN\n", "p.csv")
    assert ambiguous.matching("ann", ("username",)) is None                      # two could be it: none


@pytest.mark.parametrize(("column", "fine"), [
    ("Autodiff (55)", True), ("Autodiff", True), ("Week 3 (final) (12)", True),
    ("Autodiff(55)", False), ("Final Score", False), ("Autodiff Current Points", False), ("Section", False),
    ("", False), ("two\nlines", False),
])
def test_canvas_column_rules(column, fine):
    assert (canvas_column_problem(column) is None) is fine
    if fine and column.endswith(")") and column[-2].isdigit():
        assert CANVAS_TITLE_AND_ID.match(column)        # Canvas reads the id out of it


def test_canvas_rows_come_from_user_ids_and_others_are_left_out(data):
    book = render(data, LmsFormat.CANVAS, GradebookOptions(canvas_column="Autodiff (55)"), NOW)
    rows = list(csv.reader(io.StringIO(book.text)))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Autodiff (55)"]
    assert rows[1] == ["Points Possible", "", "", "", "", "10"]
    assert rows[2:] == [["smithjane", "4242", "", "", "", "10"]]
    assert dict(book.left_out) == {
        "anon_x1": "an anonymous Canvas download has no user id; grade a download with names shown",
        "Jane Doe_123457": "a Moodle download's name, not a Canvas one",
        "alice": "no Canvas user id in the name; pass --roster with the gradebook exported from Canvas",
        "bob": "no Canvas user id in the name; pass --roster with the gradebook exported from Canvas"}
    roster = read_roster("Student,ID,SIS User ID,SIS Login ID,Section\nA Lice,31,,alice,S\nB Ob,32,B7,,S\n", "r.csv")
    book = render(data, LmsFormat.CANVAS, GradebookOptions(roster=roster), NOW)
    rows = list(csv.reader(io.StringIO(book.text)))
    assert rows[0][-1] == "Autodiff" and any("names no assignment id" in note for note in book.notes)
    assert {row[1]: row[-1] for row in rows[2:]} == {"31": "0", "4242": "10"}   # ungradable: 0, never empty


def test_moodle_rows_need_an_identity_moodle_can_find(data):
    worksheet = read_roster("Identifier,Full name,Email address\nParticipant 123457,Jane Doe,jane@x.edu\n", "w.csv")
    book = render(data, LmsFormat.MOODLE, GradebookOptions(roster=worksheet), NOW)
    rows = list(csv.reader(io.StringIO(book.text)))
    assert rows == [["Email address", "Autodiff", "Feedback"],
                    ["jane@x.edu", "10", "10/10 points, 1 of 1 scenarios passed"]]
    assert "alice" in dict(book.left_out) and "smithjane_4242" in dict(book.left_out)
    book = render(data, LmsFormat.MOODLE, GradebookOptions(moodle_identity=MoodleIdentity.USERNAME), NOW)
    rows = list(csv.reader(io.StringIO(book.text)))
    assert rows[0][0] == "Username"
    assert {row[0]: row[1] for row in rows[1:]} == {"alice": "0", "bob": "0"}   # plain ids taken as usernames
    assert "pass --roster with the assignment's grading worksheet" in dict(book.left_out)["Jane Doe_123457"]


def test_lti_scores(data):
    book = render(data, LmsFormat.LTI, GradebookOptions(), NOW)
    scores = {score["userId"]: score for score in map(json.loads, book.text.splitlines())}
    assert set(scores) == {"4242", "alice", "bob"}
    assert scores["4242"]["gradingProgress"] == "FullyGraded"
    assert scores["4242"]["timestamp"] == datetime.fromtimestamp(1.9e9, UTC).isoformat(timespec="milliseconds")
    assert scores["bob"] == {"userId": "bob", "scoreGiven": 0.0, "scoreMaximum": 10.0,
                             "comment": "0 points: could not be graded: no autodiff.py in bob/",
                             "timestamp": "2030-01-02T03:04:05.678+00:00", "activityProgress": "Completed",
                             "gradingProgress": "Failed"}
    assert "Jane Doe_123457" in dict(book.left_out) and "anon_x1" in dict(book.left_out)


WORKSHEET = ('Identifier,"Full name","Email address",Status,Grade,"Maximum Grade","Grade can be changed",'
             '"Last modified (submission)","Last modified (grade)","Feedback comments"\n'
             '"Participant 123457","Jane Doe",jane@x.edu,"Submitted for grading",,20.00,Yes,'
             '"Friday, 4 December 2026, 9:12 AM",-,\n'
             '"Participant 5","Al Ice",alice,"Submitted for grading",3.00,20.00,No,"Friday, 4 December 2026, 9:13 AM",'
             '"Friday, 4 December 2026, 9:20 AM",ok\n'
             '"Participant 7","No Body",nobody@x.edu,"No submission",,20.00,Yes,-,-,\n')


def moodle_worksheet_upload(text: str) -> dict[str, tuple[float, str]]:
    """What Moodle's Upload grading worksheet (mod/assign/feedback/offline) takes from a file, restated:
    the columns are found by their header (Identifier, Grade and Last modified (grade) must all be there,
    or the file is refused); each row's participant is the number after the 'Participant ' prefix; an
    empty or negative grade is skipped; a grade above the row's maximum is skipped (out of range)."""
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    header = rows[0]
    assert {"Identifier", "Grade", "Last modified (grade)"} <= set(header), "invalidgradeimport"
    taken = {}
    for row in rows[1:]:
        cells = dict(zip(header, row))
        participant = cells["Identifier"][len("Participant "):]
        grade = cells["Grade"].strip()
        if not grade or float(grade) < 0 or float(grade) > float(cells["Maximum Grade"]):
            continue
        taken[participant] = (float(grade), cells.get("Feedback comments", ""))
    return taken


def test_the_grading_worksheet_is_filled_in_as_moodle_takes_it_back(data):
    from grader.report.moodle_worksheet import worksheet_problem
    roster = read_roster(WORKSHEET, "worksheet.csv")
    assert worksheet_problem(roster) is None
    book = render(data, LmsFormat.MOODLE_WORKSHEET, GradebookOptions(roster=roster), NOW)
    assert book.rows == 1
    taken = moodle_worksheet_upload(book.text)
    assert taken["123457"] == (20.0, "10/10 points, 1 of 1 scenarios passed")   # scaled to the maximum, 20
    assert taken["5"] == (3.0, "ok")                     # locked (Grade can be changed: No): as downloaded
    assert "7" not in taken                              # not in the class: as downloaded, no grade
    left_out = dict(book.left_out)
    assert left_out["alice"].startswith("the worksheet says its grade cannot be changed")
    assert "smithjane_4242" in left_out and any("scaled to the worksheet's maximum grade (20)" in n for n in book.notes)
    filled, original = (list(csv.reader(io.StringIO(text))) for text in (book.text, WORKSHEET))
    assert filled[0] == original[0] and filled[2:] == original[2:]   # every other cell as it was downloaded
    assert [a == b for a, b in zip(filled[1], original[1])] == [True] * 4 + [False] + [True] * 4 + [False]


def test_a_file_that_is_no_grading_worksheet_is_refused_saying_what_to_download():
    from grader.report.moodle_worksheet import worksheet_problem
    assert "pass the one you downloaded as --roster FILE" in worksheet_problem(None)
    canvas = read_roster("Student,ID,SIS User ID,SIS Login ID,Section\nA,1,,,S\n", "export.csv")
    assert worksheet_problem(canvas).startswith("--roster export.csv is not Moodle's grading worksheet: it has no "
                                                "'Identifier' and no 'Grade' and no 'Last modified (grade)' column")
    participants = read_roster("Identifier,Full name,Email address,Grade\nParticipant 1,A,a@x,\n", "p.csv")
    assert "no 'Last modified (grade)' column" in worksheet_problem(participants)
