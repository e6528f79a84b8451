"""Overrides, late penalties and the rows they make (grader/overrides.py, grader/adjustments.py):
pure, on hand-built rows."""

from __future__ import annotations

import math

import pytest

from grader.adjustments import Adjustments, Notes, adjust_rows
from grader.errors import UsageError
from grader.overrides import Override, read_overrides, unknown_students
from grader.results import Status
from grader.scoring import CODE_OF, Column, StudentRow

POINTS = {"first": 6.0, "second": 4.0, "check": 0.0}


def row(student: str, passed: tuple[bool, ...], late: bool = False) -> StudentRow:
    columns = tuple(Column(sid, sid, "t", worth) for sid, worth in POINTS.items())
    statuses = bytes(CODE_OF[Status.PASSED if ok else Status.FAILED] for ok in passed)
    score = sum(column.points for column, ok in zip(columns, passed) if ok)
    return StudentRow(student, score, 10.0, None, True, columns, statuses, late=late)


def read(text: str) -> tuple[Override, ...]:
    return read_overrides(text, "overrides.csv", POINTS, 10.0)


def test_an_overrides_file_is_read_with_or_without_a_scenario_column():
    found = read("Student_ID , Points,comment\nalice,7.5,regrade request\n")
    assert found == (Override("alice", 7.5, "regrade request", None, 2),)
    found = read("\ufeffstudent_id,scenario,points,comment\nbob,first,3,partial credit\nbob,,9,\"late, excused\"\n")
    assert [(o.student_id, o.scenario, o.points, o.comment) for o in found] == [
        ("bob", "first", 3.0, "partial credit"), ("bob", None, 9.0, "late, excused")]


def test_every_problem_of_an_overrides_file_is_said_with_its_line():
    with pytest.raises(UsageError) as refused:
        read("student_id,points,coment\n")
    assert str(refused.value) == ("overrides.csv:1: column 'coment' is not one of student_id, points, comment, "
                                  "scenario (did you mean 'comment'?)\n"
                                  "overrides.csv:1: no comment column (the columns: "
                                  "student_id,points,comment[,scenario])")
    with pytest.raises(UsageError) as refused:
        read("student_id,points,comment,scenario\n"
             "alice,3,ok,frist\n"          # an unknown scenario
             "bob,5,ok,second\n"           # more than the scenario's 4
             "carol,eleven,ok,\n"          # not a number
             "dave,2,,\n"                  # no why
             ",2,ok,\n"                    # no one
             "erin,2,ok,\n"
             "erin,3,again,\n")            # the same twice
    assert str(refused.value).splitlines() == [
        "overrides.csv:2: alice: scenario 'frist' is not one of the assignment's (did you mean 'first'?)",
        "overrides.csv:3: bob: points '5' must be a number from 0 to 4 (the scenario's points; extra credit belongs "
        "in the LMS)",
        "overrides.csv:4: carol: points 'eleven' must be a number from 0 to 10 (the assignment's points; extra "
        "credit belongs in the LMS)",
        "overrides.csv:5: dave: no comment: say why (it is listed with the override)",
        "overrides.csv:6: no student_id",
        "overrides.csv:8: erin: the score is overridden on line 7 already"]


def test_an_override_of_a_student_not_in_the_class_is_a_problem():
    overrides = read("student_id,points,comment\nalcie,3,typo\nbob,4,ok\n")
    assert unknown_students(overrides, ["alice", "bob"], "overrides.csv") == [
        "overrides.csv:2: alcie is not a student of this class (did you mean 'alice'?)"]


def test_scenario_overrides_then_the_score_then_the_late_penalty():
    rows = [row("alice", (True, False, True)), row("bob", (False, True, True), late=True),
            row("carol", (True, True, True), late=True)]
    overrides = read("student_id,scenario,points,comment\nalice,second,2,half credit\n"
                     "bob,,8,regrade\nbob,first,3,ignored by the score's\n")
    adjusted = adjust_rows(rows, Adjustments(overrides, 25.0, overrides_file="overrides.csv"))
    alice, bob, carol = adjusted.rows
    assert (alice.score, alice.before_penalty, alice.late) == (8.0, 8.0, False)   # on time: no penalty
    assert list(alice.points) == [6.0, 2.0, 0.0] and alice.override == "second 0 -> 2: half credit"
    assert (bob.score, bob.before_penalty) == (6.0, 8.0)                            # the score's override, then 25% off
    assert bob.override == "first 0 -> 3: ignored by the score's; score 7 -> 8: regrade"
    assert (carol.score, carol.before_penalty) == (7.5, 10.0)
    assert [(p.student_id, p.before, p.penalty, p.after) for p in adjusted.penalised] == [
        ("bob", 8.0, 2.0, 6.0), ("carol", 10.0, 2.5, 7.5)]
    assert [(c.student_id, c.scenario, c.before, c.after) for c in adjusted.changed] == [
        ("alice", "second", 0.0, 2.0), ("bob", "first", 0.0, 3.0), ("bob", None, 7.0, 8.0)]
    assert rows[0].score == 6.0 and not rows[0].points_set, "the rows given are not changed"


def test_nothing_asked_changes_nothing_and_a_scenario_that_did_not_run_counts_as_zero():
    rows = [row("alice", (True, True, True))]
    assert adjust_rows(rows, Adjustments()).rows == rows
    ran_nothing = StudentRow.of("dan", None, "a syntax error", 10.0)
    [dan] = adjust_rows([ran_nothing], Adjustments(read("student_id,scenario,points,comment\ndan,first,4,ok\n"),
                                                    overrides_file="o.csv")).rows
    assert dan.score == 4.0 and dan.error == "a syntax error" and not math.isnan(dan.score)


def test_the_notes_list_only_what_was_asked():
    rows = [row("bob", (True, True, True), late=True)]
    only_penalty = Adjustments(late_penalty=10.0)
    notes = Notes.of(only_penalty, adjust_rows(rows, only_penalty), ())
    assert notes.to_dict() == {"late_penalty": {"percent": 10.0, "penalised": [
        {"student_id": "bob", "score": 10.0, "penalty": 1.0, "final_score": 9.0}]}}
    assert Adjustments.from_dict(only_penalty.to_dict()) == only_penalty
    everything = Adjustments(read("student_id,points,comment\nbob,5,ok\n"), 10.0, True, "o.csv")
    assert Adjustments.from_dict(everything.to_dict()) == everything
    assert set(Notes.of(everything, adjust_rows(rows, everything), ()).to_dict()) == {
        "late_penalty", "overrides", "no_submission"}
