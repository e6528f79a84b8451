"""The job pipe holds the next few commands: the zygote goes on through them while the grader is
busy elsewhere (judging, another sandbox, loading the checks), and no further. Real processes; when
each program ran is read from its own clock (CLOCK_MONOTONIC is one clock for the whole machine).
"""

from __future__ import annotations

import time

from made_assignments import load_made, scenario_assignment

from grader.formats import ReadContext
from grader.runner import execute
from grader.sandbox.launcher import Sandbox
from grader.sandbox.scheduler import QUEUED_AHEAD
from grader.submission import read_submission
from grader.visibility import Scope

STAMPED = 'import time\nreturn {"y": sq.one(), "began": time.monotonic()}'
BUSY_SECONDS = 1.0


def test_queued_programs_run_while_the_grader_is_busy_and_no_more(tmp_path):
    count = QUEUED_AHEAD + 3  # the first, those in flight while the grader is busy, and one more
    assignment = load_made(scenario_assignment(tmp_path / "queue", [(f"p{n}", STAMPED, 5) for n in range(count)]))
    submission = read_submission(tmp_path / "queue" / "squares.py", (), ReadContext.of(assignment))
    busy_until: list[float] = []

    def busy_on_the_first(index, outcome):  # called as each outcome comes back: the grader "judges" slowly
        if not busy_until:
            time.sleep(BUSY_SECONDS)
            busy_until.append(time.monotonic())
        return None

    with Sandbox(at_once=1) as box:
        run = execute(submission, assignment, box, seed=1, scope=Scope.ALL, inputs=lambda planned: {},
                      judge=busy_on_the_first)
    began = [run.outcomes[n].observations["began"] for n in range(count)]
    assert all(outcome.has_result and not outcome.timed_out for outcome in run.outcomes.values())
    # One running and QUEUED_AHEAD waiting when the first came back: all of them ran while the grader slept...
    in_flight = range(1, QUEUED_AHEAD + 2)
    assert all(began[n] < busy_until[0] for n in in_flight), (began, busy_until)
    # ...one after the other, as their at_once says...
    assert all(began[n] < began[n + 1] for n in range(count - 1))
    # ...and the next was sent only once the grader came back to the sandbox.
    assert began[-1] > busy_until[0]
