"""The console report (grader.report.console) on results made by hand. Pure."""

from __future__ import annotations

from grader.report import console
from grader.results import Feedback, ScenarioResult, Status, SubmissionResult, TaskScore
from grader.visibility import Scope, Visibility

WHERE = ('Your code was here when its time ran out (most recent call last):\n'
         '  File "<scenario s1>", line 3, in s1\n  File "mod.py", line 12, in detach\n    while True:\n')


def timed_out(sid: str, task: str = "t", limit: int = 1) -> ScenarioResult:
    return ScenarioResult(sid, f"{sid} title", task, 0.0, 2.0, Status.TIMEOUT,
                          Feedback(f"did not finish within {limit} s", traceback=WHERE), 1.0, Visibility.PUBLIC)


def test_the_first_timeout_of_a_task_is_explained_whole_the_ones_cut_after_it_in_a_line():
    # the first of a task runs under its own limit, the ones after it under the cut one (as the runner does)
    scenarios = (timed_out("s1", limit=5), timed_out("s2"), timed_out("s3"), timed_out("u1", task="u", limit=5))
    result = SubmissionResult("a", "d", "mod.py", "", 1, Scope.PUBLIC, 0.0, 8.0,
                              (TaskScore("t", "Task T", 0.0, 6.0), TaskScore("u", "Task U", 0.0, 2.0)), scenarios, "0",
                              ())
    text = console.render(result, width=120)
    assert text.count("Your code was here when its time ran out") == 2   # s1 and u1, each the first of its task
    assert 'Like s1 above, stopped in File "mod.py", line 12, in detach (grader check -v shows it whole).' in text
    assert text.count("Like s1 above") == 2
    assert console.render(result, width=120, verbose=True).count("Your code was here") == 4
