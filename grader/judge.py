"""Turn what a scenario run produced into a verdict, in the grader. Pure: no processes, no files.

The outcome (:class:`~grader.outcomes.RunOutcome`) is untrusted data; the check and the
expected values live only here. Every way a run can end maps to one :class:`Status` and a
feedback a student can act on.
"""

from __future__ import annotations

import signal

from grader.outcomes import RunOutcome
from grader.results import Feedback, ScenarioResult, Status
from grader.spec import ScenarioSpec
from grader.values import Raised, materialize
from grader.visibility import Visibility

_CPU_SIGNALS = {signal.SIGXCPU}


def judge(spec: ScenarioSpec, inputs: dict, outcome: RunOutcome, memory_mb: int) -> ScenarioResult:
    status, feedback = _verdict(spec, inputs, outcome, memory_mb)
    feedback = Feedback(**{**feedback.__dict__, "stdout": outcome.stdout, "stderr": outcome.stderr})
    return scenario_result(spec, status, feedback, outcome.duration)


def scenario_result(spec: ScenarioSpec, status: Status, feedback: Feedback, duration: float = 0.0) -> ScenarioResult:
    return ScenarioResult(
        id=spec.id, title=spec.title, task=spec.task, max_points=spec.points, status=status,
        points=spec.points if status is Status.PASSED else 0.0, feedback=feedback, duration=round(duration, 6),
        visibility=spec.visibility, program=spec.source if spec.visibility is Visibility.PUBLIC else None)


def _verdict(spec: ScenarioSpec, inputs: dict, outcome: RunOutcome, memory_mb: int) -> tuple[Status, Feedback]:
    if outcome.timed_out:
        limit = outcome.time_limit if outcome.time_limit is not None else spec.time_limit
        cut = (f" (its limit is {spec.time_limit:g} s; it was cut to {limit:g} s because another scenario of this "
               "task had already timed out)") if limit < spec.time_limit else ""
        printed = (" It printed more than the output limit keeps: printing, not looping, may be what took the "
                   "time.") if outcome.output_capped else ""
        # Where the program was when its time ran out: its frames and the student's, as the sandbox told
        # it (plain text, shown as it is, like a traceback).
        return Status.TIMEOUT, Feedback(
            f"did not finish within {limit:g} s{cut}: an infinite loop, or a graph walked exponentially?{printed}",
            traceback=outcome.where or None)
    if outcome.problem is not None:
        return Status.FAILED, Feedback(f"the result could not be accepted: {outcome.problem}")
    if outcome.has_result and outcome.error is not None:
        return _raised(outcome.error, memory_mb)
    if outcome.has_result:
        return _checked(spec, inputs, outcome.observations)
    return _died(outcome, memory_mb)


def _checked(spec: ScenarioSpec, inputs: dict, observations) -> tuple[Status, Feedback]:
    from grader.expect import Mismatch  # numpy: only once there is something to judge
    check = spec.code.check_fn
    assert check is not None  # the loader refuses a scenario without one
    try:
        check(materialize(observations), **inputs)
    except Mismatch as miss:
        return Status.FAILED, Feedback(f"{miss.what}: expected {miss.expected}, got {miss.got}", what=miss.what,
                                       expected=miss.expected, got=miss.got, misconception=miss.misconception,
                                       control_failed=miss.control)
    except Exception as error:  # observations of a shape the program never produces: tampering, or a check bug
        return Status.FAILED, Feedback(
            f"the observations were not in the form this scenario produces ({type(error).__name__}: {error})")
    return Status.PASSED, Feedback("passed")


def _raised(error: Raised, memory_mb: int) -> tuple[Status, Feedback]:
    if error.is_a("NotImplementedError"):
        detail = f": {error.message}" if error.message else ""
        return Status.ERROR, Feedback(f"not implemented yet{detail}", traceback=error.traceback or None)
    if error.is_a("MemoryError"):
        return Status.MEMORY, Feedback(f"ran out of memory (the limit is {memory_mb} MiB per process)",
                                       traceback=error.traceback or None)
    hint = None
    if error.is_a("SystemExit") or error.is_a("KeyboardInterrupt"):
        hint = f"the code raised {error.type}: it must return normally (no sys.exit(), no exit())"
    return Status.ERROR, Feedback(f"raised {error}", traceback=error.traceback or None, misconception=hint)


def _died(outcome: RunOutcome, memory_mb: int) -> tuple[Status, Feedback]:
    if outcome.sandbox_died and not outcome.exit:
        return Status.CRASHED, Feedback("the sandbox process died before the scenario finished")
    exit_info = outcome.exit or {}
    if "signal" in exit_info:
        number = exit_info["signal"]
        if number in _CPU_SIGNALS:
            return Status.TIMEOUT, Feedback("used up its CPU time limit")
        name = _signal_name(number)
        if number == signal.SIGKILL:
            return Status.MEMORY, Feedback(f"was killed ({name}), most likely for using too much memory "
                                           f"(the limit is {memory_mb} MiB)")
        return Status.CRASHED, Feedback(f"the process died from {name}")
    code = exit_info.get("code")
    return Status.CRASHED, Feedback(
        f"the process exited (code {code}) before returning its observations",
        misconception="the code ended the process (os._exit(), or exit in a child): a scenario must return normally")


def _signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} (signal {number})"
    except ValueError:
        return f"signal {number}"
