"""GitHub Classroom's runner result (grader/report/github_classroom.py), read back as the
``autograding-grading-reporter`` action reads it.

The reporter's reading, restated from its code (education/autograding-grading-reporter, the same
functions as github-education-resources/autograding-grading-reporter's src/):

* ``parseRunnerResults`` (src/main.js): for each id of ``runners`` split on ",", trimmed, the
  environment variable ``${runner.trim().toUpperCase()}_RESULTS``, decoded with
  ``Buffer.from(value, "base64").toString("utf-8")`` and ``JSON.parse``d;
* ``NotifyClassroom`` (src/notify-classroom.js): over the runners whose ``results.max_score`` is
  truthy, ``maxPoints += results.max_score`` and, for each of ``results.tests``, ``totalPoints +=
  score``: the points GitHub Classroom records;
* ``main`` (src/main.js): the step fails when some runner's ``results.status`` is ``"fail"`` or
  ``"error"``; ``ConsoleResults`` (src/console-results.js) shows a test as passed when its
  ``status`` is ``"pass"``, else its ``message``.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path

from grader.report import github_classroom
from grader.results import Status

MINI = Path(__file__).parent / "fixtures" / "mini"


def parse_runner_results(environment: dict[str, str], runners: str) -> list[dict]:
    """src/main.js, parseRunnerResults."""
    found = []
    for runner in runners.split(","):
        value = environment[f"{runner.strip().upper()}_RESULTS"]
        found.append({"runner": runner.strip(), "results": json.loads(base64.b64decode(value).decode("utf-8"))})
    return found


def notify_classroom_points(runner_results: list[dict]) -> tuple[float, float]:
    """src/notify-classroom.js: (totalPoints, maxPoints)."""
    total = maximum = 0.0
    for entry in runner_results:
        results = entry["results"]
        if not results.get("max_score"):
            continue
        maximum += results["max_score"]
        for test in results["tests"]:
            total += test["score"]   # a missing score would make it NaN
    return total, maximum


def step_fails(runner_results: list[dict]) -> bool:
    """src/main.js: core.setFailed when a runner failed or errored."""
    return any(entry["results"]["status"] in ("fail", "error") for entry in runner_results)


def read(result, plan) -> dict:
    [entry] = parse_runner_results({"MINI_RESULTS": github_classroom.encoded(result, plan)}, "mini")
    return entry["results"]


def test_the_reporter_reads_the_rubrics_points_and_the_failures(assignment, wrong):
    results = read(wrong, assignment)
    assert results["version"] == 1 and results["status"] == "fail"
    assert notify_classroom_points([{"results": results}]) == (wrong.score, wrong.max_score) == (4, 6)
    assert step_fails([{"results": results}])
    tests = {test["name"].split(":")[0]: test for test in results["tests"]}
    assert set(tests) == {s.id for s in wrong.scenarios}
    failed = tests["square_values"]
    assert failed["status"] == "fail" and failed["score"] == 0 and failed["max_score"] == 2
    assert "returned 2x, the gradient" in failed["message"]          # the misconception, as grader check says it
    assert tests["grad_values"]["status"] == "pass" and tests["grad_values"]["message"] == "passed"
    for test in results["tests"]:
        assert isinstance(test["score"], (int, float)) and test["execution_time"].endswith("s")
        lines = (MINI / test["filename"]).read_text().splitlines()
        assert lines[test["line_no"] - 1].startswith(f"def {test['name'].split(':')[0]}(")
        assert f"def {test['name'].split(':')[0]}(" in test["test_code"]


def test_a_full_submission_passes_and_an_ungradable_one_errors(assignment, correct, ungradable):
    passed = read(correct, assignment)
    assert passed["status"] == "pass" and not step_fails([{"results": passed}])
    assert notify_classroom_points([{"results": passed}]) == (6, 6)
    failed = read(ungradable, assignment)
    assert failed["status"] == "error" and "could not be graded" in failed["message"]
    assert notify_classroom_points([{"results": failed}]) == (0, 6)
    assert {test["status"] for test in failed["tests"]} == {"error"}   # none of its scenarios ran


def test_checks_worth_no_points_are_listed_only_when_they_fail(assignment, correct):
    free = replace(correct, scenarios=tuple(replace(s, max_points=0.0, points=0.0) if s.id == "fresh_state" else s
                                            for s in correct.scenarios))
    assert "fresh_state" not in [test["name"].split(":")[0] for test in read(free, assignment)["tests"]]
    broken = replace(free, scenarios=tuple(replace(s, status=Status.FAILED) if s.id == "fresh_state" else s
                                           for s in free.scenarios))
    [check] = [test for test in read(broken, assignment)["tests"] if test["name"].startswith("fresh_state")]
    assert (check["status"], check["score"], check["max_score"]) == ("fail", 0, 0)


def test_a_huge_report_is_cut_to_what_an_environment_variable_holds(assignment, wrong):
    loud = replace(wrong, scenarios=tuple(
        replace(s, feedback=replace(s.feedback, stdout="x" * 300_000)) if not s.passed else s
        for s in wrong.scenarios))
    value = github_classroom.encoded(loud, assignment)
    assert len(value) <= github_classroom.MAX_ENCODED < 128 * 1024
    results = read(loud, assignment)
    assert notify_classroom_points([{"results": results}]) == (4, 6)
    assert any("cut: the step's log above has the whole report" in test["message"] for test in results["tests"])


def test_the_output_line_is_the_one_line_form_github_reads():
    line = github_classroom.output_line(base64.b64encode(b'{"version": 1}').decode())
    name, _, value = line.rstrip("\n").partition("=")
    assert name == "result" and line.count("\n") == 1 and json.loads(base64.b64decode(value)) == {"version": 1}
