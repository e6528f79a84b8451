"""grader.results on hand-built results: the round trip through the result file's document, and
what a result says of itself. Pure: no sandbox, no files."""

from __future__ import annotations

import json

import pytest

from grader.results import Feedback, ProvidedChange, ScenarioResult, Status, SubmissionResult, TaskScore
from grader.visibility import Scope, Visibility


def scenario(sid: str, status: Status, points: float = 2.0, task: str = "t1") -> ScenarioResult:
    return ScenarioResult(sid, f"title of {sid}", task, points if status is Status.PASSED else 0.0, points, status,
                          Feedback("s", what="w", expected="e", got="g", misconception="m", stdout="out"), 0.25,
                          Visibility.PUBLIC, program=f"def {sid}(m):\n    pass\n")


def result(*scenarios: ScenarioResult, **changes) -> SubmissionResult:
    score = sum(s.points for s in scenarios)
    made = SubmissionResult("a", "d" * 64, "/x/autodiff.py", "f" * 64, 7, Scope.ALL, score,
                            sum(s.max_points for s in scenarios), (TaskScore("t1", "Task one", score, 4.0),),
                            scenarios, "0.2.0", ("rlimits",))
    return SubmissionResult(**{**{name: getattr(made, name) for name in SubmissionResult.field_names()}, **changes})


def test_a_result_survives_its_document():
    made = result(scenario("s1", Status.PASSED), scenario("s2", Status.TIMEOUT),
                  provided_changes=(ProvidedChange("Tensor.backward", "changed", 3, 9),),
                  warnings=("cell 4: %timeit",), import_stdout="printed\n")
    document = json.loads(json.dumps(made.to_dict(), allow_nan=False))   # as a result file holds it
    assert SubmissionResult.from_dict(document) == made


def test_passed_and_all_passed():
    mixed = result(scenario("s1", Status.PASSED), scenario("s2", Status.FAILED))
    assert [s.passed for s in mixed.scenarios] == [True, False] and not mixed.all_passed
    assert result(scenario("s1", Status.PASSED)).all_passed
    assert not result(scenario("s1", Status.PASSED), error="SyntaxError: x").all_passed


def test_a_result_with_every_provided_part_missing_holds_no_engine():
    gone = tuple(ProvidedChange(name, "removed", 1, 1) for name in ("Tensor", "GradientTape", "ones"))
    assert result(scenario("s1", Status.PASSED), provided_changes=gone).holds_no_engine
    assert not result(scenario("s1", Status.PASSED), provided_changes=gone[:2]).holds_no_engine   # two: not "several"
    one_kept = (*gone, ProvidedChange("Tensor.backward", "changed", 3, 9))
    assert not result(scenario("s1", Status.PASSED), provided_changes=one_kept).holds_no_engine
    assert not result(scenario("s1", Status.PASSED)).holds_no_engine


def test_a_document_of_another_shape_is_refused():
    document = result(scenario("s1", Status.PASSED)).to_dict()
    document["scenarios"][0]["status"] = "exploded"
    with pytest.raises(ValueError):
        SubmissionResult.from_dict(document)
