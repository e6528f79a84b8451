"""Gradescope's autograder ``results.json`` for one submission (``--format gradescope``).

The format is Gradescope's published autograder specification,
https://gradescope-autograders.readthedocs.io/en/latest/specs/ ; our reading of it is checked in
``tests/schemas/gradescope_results.schema.json``. Rules that shape this module:

- A top-level ``score`` overrides the sum of the tests' scores; we always give it, so Gradescope
  shows exactly the score our scoring computed.
- ``visibility`` (top level and per test) and ``stdout_visibility`` take one of ``hidden``,
  ``after_due_date``, ``after_published``, ``visible``. A test's own visibility overrides the
  top level's.
- "If test cases are hidden, students will not be able to see their total score. Test cases with
  visibility set to ``hidden`` don't affect this, since they should only be used for tests which
  don't contribute points to the total." So hidden scenarios are ``after_published`` (or
  ``after_due_date``), which keeps the total from students until then; ``hidden`` is refused
  while hidden scenarios carry points (:func:`grader.visibility.hidden_visibility_problem`), since the total shown
  would include them; and the top-level ``output``, which students always see, gives only the
  public scenarios' points unless the hidden ones are ``visible``.
- A test's ``status`` is ``passed`` or ``failed`` (it colours the test, independent of score).
- Output strings are rendered as ``text`` (in a ``<pre>``, escaped): a student's captured output
  is arbitrary text, and ``html``/``md`` would let it inject markup into the results page.
"""

from __future__ import annotations

import json

from grader.report.text import (
    explain,
    import_output,
    not_graded,
    one_line,
    passed_words,
    points,
    provided_notice,
)
from grader.results import ScenarioResult, SubmissionResult
from grader.visibility import DEFAULT_HIDDEN_SHOWN_TO, ShownTo, Visibility, hidden_visibility_problem

DEFAULT_HIDDEN_VISIBILITY = DEFAULT_HIDDEN_SHOWN_TO.value
_WHEN = {"after_due_date": "after the due date", "after_published": "when the grades are published",
         "hidden": "never"}


def to_results_json(result: SubmissionResult, *, hidden_visibility: str = DEFAULT_HIDDEN_VISIBILITY,
                    execution_time: float | None = None) -> dict:
    """Gradescope's ``results.json`` document for one graded submission.

    Public scenarios are ``visible``; hidden ones get ``hidden_visibility`` (``ValueError`` when
    :func:`~grader.visibility.hidden_visibility_problem` refuses it) and their feedback never includes the scenario's
    program. ``execution_time`` (seconds) defaults to ``result.timings["total"]`` and is left out
    when neither is known. Each test is numbered ``<task index>.<scenario index within the task>``.
    """
    problem = hidden_visibility_problem(hidden_visibility,
                                        sum(s.max_points for s in result.scenarios if s.visibility != "public"))
    if problem:
        raise ValueError(problem)
    if execution_time is None:
        execution_time = result.timings.get("total")
    document: dict[str, object] = {"score": result.score}
    if execution_time is not None:
        document["execution_time"] = round(float(execution_time), 3)
    document.update({
        "output": _summary(result, hidden_visibility),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",  # the grader's own log is for instructors
        "extra_data": {"assignment": result.assignment, "assignment_digest": result.assignment_digest,
                       "seed": result.seed, "submission_sha256": result.submission_sha256,
                       "grader_version": result.grader_version},
        "tests": [_test(scenario, number, hidden_visibility)
                  for scenario, number in zip(result.scenarios, _numbers(result))],
    })
    return document


def dumps(result: SubmissionResult, *, hidden_visibility: str = DEFAULT_HIDDEN_VISIBILITY,
          execution_time: float | None = None) -> str:
    """:func:`to_results_json` as JSON text, ready to write to ``/autograder/results/results.json``."""
    document = to_results_json(result, hidden_visibility=hidden_visibility, execution_time=execution_time)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _summary(result: SubmissionResult, hidden_visibility: str) -> str:
    """The top-level output: always shown, so it counts hidden scenarios only when they are visible."""
    hidden = [s for s in result.scenarios if s.visibility != "public"]
    if not hidden or hidden_visibility == "visible":
        lines = [one_line(result)]
    else:
        public = [s for s in result.scenarios if s.visibility == "public"]
        count = "1 hidden scenario" if len(hidden) == 1 else f"{len(hidden)} hidden scenarios"
        earned, available = points(sum(s.points for s in public)), points(sum(s.max_points for s in public))
        lines = [(f"Public scenarios: {earned}/{available} points, "
                  f"{passed_words(((s.passed, s.max_points) for s in public), noun='')}. {count} "
                  f"(worth {points(sum(s.max_points for s in hidden))} more) "
                  f"{'is' if len(hidden) == 1 else 'are'} shown {_WHEN[hidden_visibility]}.")]
    if result.error:
        lines.append(f"This submission could not be graded: {result.error}")
    notice = provided_notice(result)
    if notice:
        lines += ["", notice]
    left_out = not_graded(result)
    if left_out:
        lines += ["", left_out]
    printed = import_output(result)
    if printed:
        lines += ["", printed]
    return "\n".join(lines)


def _test(scenario: ScenarioResult, number: str, hidden_visibility: str) -> dict:
    public = scenario.visibility is Visibility.PUBLIC
    return {
        "name": f"{scenario.id}: {scenario.title}",
        "number": number,
        "score": scenario.points,
        "max_score": scenario.max_points,
        "status": "passed" if scenario.passed else "failed",
        # A hidden scenario's source is exactly what keeping it hidden protects.
        "output": "passed" if scenario.passed else explain(scenario, show_program=public),
        "visibility": ShownTo.VISIBLE.value if public else ShownTo(hidden_visibility).value,
    }


def _numbers(result: SubmissionResult) -> list[str]:
    """'<task>.<scenario>' (1-based), tasks in the assignment's order, scenarios in run order."""
    task_index = {task.id: i for i, task in enumerate(result.tasks, start=1)}
    seen: dict[str, int] = {}
    numbers = []
    for scenario in result.scenarios:
        # A scenario of a task the result does not list still gets a stable, distinct number.
        task = task_index.setdefault(scenario.task, len(task_index) + 1)
        seen[scenario.task] = seen.get(scenario.task, 0) + 1
        numbers.append(f"{task}.{seen[scenario.task]}")
    return numbers
