"""A submission that changed the provided engine: every task scenario that did not pass says the change may
be the cause and names what was changed, in the result data itself, so that every report shows it (console,
its collapsed "same cause" block, JSON, Gradescope, JUnit, the notebook's page); where the scenario's
control failed, the result says so (`control_failed`) and names the engine's misconception, not the task's."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from buggy_fixtures import BUGGY

from grader import grade_submission, load_assignment
from grader.report import console, gradescope, json_report, junit
from grader.report.student_html import render_student_page
from grader.results import Feedback, Status

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def assignment():
    return load_assignment(ROOT / "exercises" / "autodiff", hidden=ROOT / "solutions" / "autodiff")


@pytest.fixture(scope="module")
def swapped(assignment):
    """The multiplication rule's operands swapped: every program of both tasks multiplies."""
    return grade_submission(BUGGY / "engine_mul_backward_swapped.py", assignment, seed=1, scope="all")


def test_every_failed_task_scenario_carries_the_note_naming_the_change(swapped):
    change, = swapped.provided_changes
    failed = [s for s in swapped.scenarios if not s.passed and s.max_points > 0]
    assert failed and all(s.feedback.provided_note for s in failed)
    note = failed[0].feedback.provided_note
    assert f"`Tensor.__mul__` (lines {change.first_line}-{change.last_line})" in note and "may be the cause" in note
    others = [s for s in swapped.scenarios if s.passed or s.max_points == 0]
    assert all(s.feedback.provided_note is None for s in others)   # engine checks and passes say nothing of it


def test_a_failed_control_says_the_engine_is_the_cause_not_the_task(swapped):
    failed = [s for s in swapped.scenarios if not s.passed and s.max_points > 0]
    assert all(s.feedback.control_failed for s in failed)
    assert all("provided engine gets this program wrong" in s.feedback.misconception for s in failed)
    assert all("with the provided code alone" in s.feedback.summary for s in failed)


def test_every_report_shows_the_note(swapped):
    note = next(s.feedback.provided_note for s in swapped.scenarios if s.feedback.provided_note)
    words = "that change may be the cause"
    assert words in " ".join(console.render(swapped, width=200).split())
    document = json.loads(json_report.dumps(swapped))
    assert any(s["feedback"]["provided_note"] == note for s in document["scenarios"])
    assert any(words in t["output"] for t in gradescope.to_results_json(swapped)["tests"])
    assert words in junit.to_junit_xml([("s", swapped)])
    assert words in render_student_page("s", swapped)


def test_the_collapsed_same_cause_block_shows_the_note_too(swapped):
    # Failures that share one message are explained once (any assignment: here, a hand-made copy of a result).
    note = next(s.feedback.provided_note for s in swapped.scenarios if s.feedback.provided_note)
    same = [replace(s, status=Status.ERROR, points=0.0, feedback=Feedback("raised ValueError: broken",
                                                                          provided_note=note))
            for s in swapped.scenarios]
    text = " ".join(console.render(replace(swapped, scenarios=tuple(same)), width=200).split())
    assert "stopped at the same place" in text and "`Tensor.__init__`" not in text
    assert "`Tensor.__mul__`" in text.split("stopped at the same place")[1] and "may be the cause" in text


def test_an_untouched_engine_has_no_note(assignment):
    result = grade_submission(BUGGY / "detach_returns_self.py", assignment, seed=1, scope="all")
    assert result.provided_changes == ()
    assert all(s.feedback.provided_note is None and not s.feedback.control_failed for s in result.scenarios)
