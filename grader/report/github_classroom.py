"""GitHub Classroom's runner result for one ``grader check`` (``--format github-classroom``): what a
grading step hands the ``autograding-grading-reporter`` action. Pure, over a result and its plan.

The reporter's rules, from its code (``education/autograding-grading-reporter``, ``src/main.js``,
``src/notify-classroom.js``, ``src/console-results.js``, ``src/aggregate-results.js``):

* it reads each runner (a step id listed in its ``runners`` input) from the environment variable
  ``<ID in upper case>_RESULTS``, which the workflow sets to the step's ``result`` output, decodes
  it from base64 and parses it as JSON (``parseRunnerResults``); a runner that cannot be read fails
  the reporter's step;
* the points it sends to GitHub Classroom (``NotifyClassroom``: a check run annotation ``Points
  X/Y`` on the job ``run-autograding-tests``) are, over the runners whose ``max_score`` is not 0,
  the sum of their ``max_score`` and the sum of every test's ``score``: so every test has a number
  as ``score``, and they add up to the rubric's points;
* its step fails when a runner's ``status`` is ``fail`` or ``error``; each test whose ``status`` is
  not ``pass`` is shown with its ``message``;
* its per-runner "Total points" line and summary table count passed *tests*, not points: the
  grade is the sum above, and the usual report (printed by the same step) has the details.

The runners GitHub ships (``autograding-io-grader``, ``autograding-command-grader``) write
``version: 1``, ``status``, ``max_score`` and ``tests[]`` of ``name``, ``status``, ``score``,
``message``, ``test_code``, ``filename``, ``line_no`` (the test's line in ``filename``; 0 when
there is none) and ``execution_time`` (seconds, as text such as ``"0.012s"``). So does this one:
each scenario that carries points is a test (a provided-engine check, worth none, only when it did
not pass, so that its explanation shows), ``line_no`` its program's line in the scenario file.

The value travels in an environment variable, and Linux holds at most 128 KiB in one, so the
document is kept under :data:`MAX_ENCODED` bytes once encoded: the messages and programs are cut
(saying so) when it would be longer.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from grader.report.text import explain
from grader.results import ScenarioResult, Status, SubmissionResult
from grader.spec import Plan

OUTPUT_NAME = "result"             # the step output the reporter's environment variable is set from
MAX_ENCODED = 96 * 1024            # base64 bytes: well under Linux's 128 KiB for one environment string
_FIRST_CUT = 4000                  # characters of a message (and of a program) before any other cut
_CUT = "\n[... cut: the step's log above has the whole report]"


def runner_result(result: SubmissionResult, plan: Plan, limit: int = _FIRST_CUT) -> dict:
    """The runner result of ``result`` (a ``grader check`` of ``plan``'s public scenarios), each
    message and program cut at ``limit`` characters."""
    specs = {spec.id: spec for spec in plan.scenarios}
    tests = []
    for scenario in result.scenarios:
        if scenario.max_points == 0 and scenario.passed:
            continue
        spec = specs.get(scenario.id)
        tests.append({
            "name": f"{scenario.id}: {scenario.title}",
            "status": _status(scenario),
            "score": scenario.points,
            "max_score": scenario.max_points,
            "message": "passed" if scenario.passed else _cut(explain(scenario, show_program=False), limit),
            "test_code": _cut(scenario.program or "", limit),
            "filename": Path(spec.file).name if spec is not None else "",
            "line_no": spec.line if spec is not None else 0,
            "execution_time": f"{scenario.duration:.3f}s",
        })
    status = "error" if result.error else "pass" if result.all_passed else "fail"
    document: dict = {"version": 1, "status": status, "max_score": result.max_score, "tests": tests}
    if result.error:
        document["message"] = _cut(f"{Path(result.submission).name} could not be graded: {result.error}", limit)
    return document


def encoded(result: SubmissionResult, plan: Plan) -> str:
    """:func:`runner_result` as the reporter reads it: UTF-8 JSON in base64, at most
    :data:`MAX_ENCODED` bytes (messages and programs cut shorter until it fits)."""
    limit = _FIRST_CUT
    while True:
        text = json.dumps(runner_result(result, plan, limit), ensure_ascii=False, allow_nan=False)
        value = base64.b64encode(text.encode("utf-8")).decode("ascii")
        if len(value) <= MAX_ENCODED or limit < 100:
            return value
        limit //= 2


def output_line(value: str) -> str:
    """The line a step appends to ``$GITHUB_OUTPUT`` to set its ``result`` output (base64 holds no
    newline, so the one-line form ``name=value`` is safe)."""
    return f"{OUTPUT_NAME}={value}\n"


def _status(scenario: ScenarioResult) -> str:
    """``pass``, ``fail`` (the scenario ran and did not pass: a wrong value, an exception, a limit),
    or ``error`` (it never ran)."""
    if scenario.passed:
        return "pass"
    return "error" if scenario.status is Status.NOT_RUN else "fail"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + _CUT
