"""grader.scoring on hand-built data: a submission's points per task and in all, and a student's
gradebook row (the error-row convention included). Pure: no sandbox, no files."""

from __future__ import annotations

import math
from types import SimpleNamespace

from grader.results import Feedback, ProvidedChange, ScenarioResult, Status, SubmissionResult, TaskScore
from grader.scoring import STATUS_CODES, StudentRow, columns_of, max_score_of, task_scores, total
from grader.visibility import Scope, Visibility


def scenario(sid: str, task: str, status: Status, points: float) -> ScenarioResult:
    return ScenarioResult(sid, sid.upper(), task, points if status is Status.PASSED else 0.0, points, status,
                          Feedback("s"), 0.1, Visibility.PUBLIC)


SCENARIOS = (scenario("a", "t1", Status.PASSED, 0.1), scenario("b", "t1", Status.PASSED, 0.2),
             scenario("c", "t2", Status.FAILED, 1 / 3), scenario("d", "t2", Status.NOT_RUN, 0.0))
PLAN = SimpleNamespace(tasks=(SimpleNamespace(id="t2", title="Second"), SimpleNamespace(id="t1", title="First"),
                              SimpleNamespace(id="t3", title="No scenario ran")),
                       scenarios=(SimpleNamespace(id="a", title="A", task="t1", points=0.1),
                                  SimpleNamespace(id="b", title="B", task="t1", points=0.2),
                                  SimpleNamespace(id="c", title="C", task="t2", points=1 / 3)))


def test_points_per_task_follow_the_spec_and_are_rounded():
    assert task_scores(PLAN, SCENARIOS) == (TaskScore("t2", "Second", 0.0, 0.333333),
                                            TaskScore("t1", "First", 0.3, 0.3))
    assert total(SCENARIOS) == (0.3, 0.633333)      # 0.1 + 0.2 is 0.30000000000000004 before rounding
    assert max_score_of(PLAN) == 0.633333


def test_a_results_row_keeps_a_status_byte_per_scenario():
    result = SubmissionResult("x", "d", "p", "s", 1, Scope.ALL, 0.3, 0.633333, (), SCENARIOS, "v", (),
                              provided_changes=(ProvidedChange("Tensor.backward", "changed", 1, 2),
                                                ProvidedChange("ones", "removed", 5, 6)))
    row = StudentRow.of("ann", result, None, late=True)
    assert row.graded and row.has_result and row.late and row.error is None
    assert [STATUS_CODES[code] for code in row.statuses] == [s.status for s in SCENARIOS]
    assert row.passed == bytes([1, 1, 0, 0])
    points = list(row.points)
    assert points[:3] == [0.1, 0.2, 0.0] and math.isnan(points[3])       # not run: no points at all
    assert row.provided_changes == "Tensor.backward; ones (removed)"
    assert StudentRow.of("bo", result, None).columns is row.columns        # one shared tuple per scenario list


def test_an_error_row_scores_zero_of_the_maximum_with_its_reason():
    missing = StudentRow.of("cy", None, "two submissions for student id cy", 10.0)
    assert (missing.score, missing.max_score, missing.has_result) == (0.0, 10.0, False)
    assert missing.error == "two submissions for student id cy"
    assert not missing.graded and missing.statuses == b"" and StudentRow.of("dee", None, None).error == "not graded"
    broken = SubmissionResult("x", "d", "p", "s", 1, Scope.ALL, 0.0, 0.633333, (), (), "v", (),
                              error="SyntaxError: invalid syntax\n  line 3")
    row = StudentRow.of("eve", broken, None)
    assert row.has_result and not row.graded and row.error == "SyntaxError: invalid syntax"   # its first line


def test_the_gradebook_columns_are_the_spec_scenarios_in_order():
    assert [(c.id, c.task, c.points) for c in columns_of(PLAN)] == [("a", "t1", 0.1), ("b", "t1", 0.2),
                                                                    ("c", "t2", 1 / 3)]
