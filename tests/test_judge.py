"""grader.judge on hand-built outcomes: every way a run can end maps to one status, the points and
the feedback a student can act on. Pure: no sandbox, no files (a scenario spec written here)."""

from __future__ import annotations

import signal

import pytest

from grader.expect import Mismatch
from grader.judge import judge
from grader.outcomes import RunOutcome
from grader.results import Status
from grader.scenario import Scenario
from grader.spec import ScenarioSpec
from grader.values import Raised
from grader.visibility import Visibility


def check(got, x):
    if got["value"] != 2 * x:
        raise Mismatch("the doubled value", str(2 * x), str(got["value"]), misconception="added instead of multiplied")


def spec(visibility: Visibility = Visibility.PUBLIC, time_limit: float = 2.0) -> ScenarioSpec:
    return ScenarioSpec("doubles", "double(x)", "t1", 3.0, visibility, time_limit, "def doubles(m):\n    ...\n",
                        False, "scenarios.py", 7, code=Scenario("doubles", lambda m: None, check_fn=check))


def test_a_result_the_check_accepts_earns_every_point_and_keeps_what_was_printed():
    ran = RunOutcome(observations={"value": 8}, has_result=True, stdout="hi\n", duration=0.0123456789)
    result = judge(spec(), {"x": 4}, ran, memory_mb=512)
    assert (result.status, result.points, result.max_points) == (Status.PASSED, 3.0, 3.0)
    assert result.feedback.summary == "passed" and result.feedback.stdout == "hi\n"
    assert result.duration == 0.012346 and result.program == "def doubles(m):\n    ...\n"


def test_a_mismatch_is_a_failure_with_what_was_expected_and_the_misconception():
    ran = RunOutcome(observations={"value": 6}, has_result=True)
    result = judge(spec(Visibility.HIDDEN), {"x": 4}, ran, memory_mb=512)
    assert (result.status, result.points) == (Status.FAILED, 0.0)
    assert (result.feedback.what, result.feedback.expected, result.feedback.got) == ("the doubled value", "8", "6")
    assert result.feedback.misconception == "added instead of multiplied"
    assert result.program is None                      # a hidden scenario's program never goes out


def test_observations_of_a_shape_the_program_never_makes_fail_without_crashing_the_check():
    result = judge(spec(), {"x": 4}, RunOutcome(observations=[8], has_result=True), memory_mb=512)
    assert result.status is Status.FAILED and "not in the form this scenario produces" in result.feedback.summary


@pytest.mark.parametrize(("raised", "status", "words"), [
    (Raised("NotImplementedError", "Task 1: detach"), Status.ERROR, "not implemented yet: Task 1: detach"),
    (Raised("MemoryError", ""), Status.MEMORY, "ran out of memory (the limit is 512 MiB per process)"),
    (Raised("ValueError", "bad", ("ValueError", "Exception")), Status.ERROR, "raised ValueError: bad"),
])
def test_what_the_program_raised(raised, status, words):
    result = judge(spec(), {"x": 1}, RunOutcome(error=raised, has_result=True), memory_mb=512)
    assert result.status is status and result.feedback.summary == words and result.points == 0


def test_sys_exit_is_named_as_the_mistake_it_is():
    result = judge(spec(), {"x": 1}, RunOutcome(error=Raised("SystemExit", "0"), has_result=True), memory_mb=512)
    assert result.status is Status.ERROR and "no sys.exit()" in result.feedback.misconception


@pytest.mark.parametrize(("outcome", "status", "words"), [
    (RunOutcome(timed_out=True), Status.TIMEOUT, "did not finish within 2 s"),
    (RunOutcome(timed_out=True, time_limit=0.5), Status.TIMEOUT, "it was cut to 0.5 s because another scenario"),
    (RunOutcome(problem="a message over 1 MiB"), Status.FAILED, "could not be accepted: a message over 1 MiB"),
    (RunOutcome(exit={"signal": signal.SIGXCPU}), Status.TIMEOUT, "used up its CPU time limit"),
    (RunOutcome(exit={"signal": signal.SIGKILL}), Status.MEMORY, "killed (SIGKILL (signal 9)), most likely"),
    (RunOutcome(exit={"signal": signal.SIGSEGV}), Status.CRASHED, "died from SIGSEGV"),
    (RunOutcome(exit={"signal": 99}), Status.CRASHED, "died from signal 99"),
    (RunOutcome(exit={"code": 3}), Status.CRASHED, "exited (code 3) before returning its observations"),
    (RunOutcome(sandbox_died=True), Status.CRASHED, "the sandbox process died before the scenario finished"),
])
def test_every_way_a_run_ends_has_one_status(outcome, status, words):
    result = judge(spec(), {"x": 1}, outcome, memory_mb=512)
    assert result.status is status and words in result.feedback.summary
    assert result.points == 0 and result.max_points == 3.0
