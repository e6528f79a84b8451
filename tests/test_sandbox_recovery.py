"""A sandbox that always recovers: after any run of timeouts, crashes and kills, the next program runs.

Each zygote gets fresh pipes and a container of its own, and a warden is reused only once it
reports the last container empty, so nothing a killed zygote left half-done (a command half read,
a stray, a full pipe) reaches the next. Real processes throughout.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from made_assignments import load_made, scenario_assignment

from grader import commands, grade_submission, load_assignment
from grader.results import Status
from grader.sandbox.launcher import Sandbox

MINI = Path(__file__).parent / "fixtures" / "mini"


@pytest.fixture(scope="module")
def mini():
    return load_assignment(MINI)


def test_twenty_instant_timeouts_in_a_row_then_a_scenario_that_passes(mini):
    index, program = next((at, s) for at, s in enumerate(mini.select("public")) if s.id == "fresh_state")
    payload = commands.run(index, program, {})  # no inputs: nothing to load
    source = (MINI / "squares.py").read_bytes()
    started = time.monotonic()
    with Sandbox() as box:
        warden = box.process.pid
        for attempt in range(21):
            box.begin(MINI / "squares.py", "squares", commands.job(mini), source=source)
            assert box.runs.wait_ready(mini.limits.import_time).ok, attempt
            seconds = 0.0 if attempt < 20 else 5.0   # no time at all: killed while it reads its command
            (_, outcome), = box.runs.run_all([(index, seconds, payload)])
            if attempt < 20:
                assert outcome.timed_out, attempt
            else:
                assert outcome.has_result and outcome.error is None and outcome.observations == {"calls": 0}
        assert box.process.pid == warden, "every container was reported empty: the warden was kept"
    assert time.monotonic() - started < 30


def test_any_run_of_timeouts_crashes_and_kills_leaves_the_next_scenario_running(tmp_path):
    # Every way a zygote can die, back to back: a wall-clock timeout, the process ending itself,
    # killing itself, its whole process group, the memory limit; then scenarios that pass.
    failing = [(f"loop_{n}", "while True:\n    pass", 0.05) for n in range(6)]
    failing += [("exits", "import os\nos._exit(3)", 2),
                ("killed", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", 2),
                ("group", "import os, signal\nos.killpg(0, signal.SIGKILL)", 2),
                ("memory", "hog = bytearray(2 << 30)", 2), ("sleep", "import time\ntime.sleep(60)", 0.05)]
    failing += [(f"loop_late_{n}", "while True:\n    pass", 0.05) for n in range(6)]
    passing = [(f"passes_{n}", 'return {"y": sq.one()}', 2) for n in range(3)]
    assignment = load_assignment(scenario_assignment(tmp_path / "recovery", failing + passing))
    started = time.monotonic()
    result = grade_submission(tmp_path / "recovery" / "squares.py", assignment, seed=1)
    statuses = {s.id: s.status for s in result.scenarios}
    assert time.monotonic() - started < 60
    assert all(statuses[f"passes_{n}"] is Status.PASSED for n in range(3)), statuses
    assert all(statuses[f"loop_{n}"] is Status.TIMEOUT for n in range(6))
    assert statuses["exits"] is Status.CRASHED and statuses["killed"] is Status.MEMORY
    assert statuses["memory"] in (Status.MEMORY, Status.ERROR) and statuses["sleep"] is Status.TIMEOUT


def test_a_timeout_in_the_last_public_scenario_costs_no_hidden_one(tmp_path):
    # The public programs and the hidden ones are two streams: the hidden stream must start in a fresh zygote when
    # the public one ended with a timeout (it once ran in the killed one, and its first scenario "crashed").
    scenarios = [("passes", 'return {"y": sq.one()}', 2), ("loops_last", "while True:\n    pass", 0.2),
                 ("hidden_first", 'return {"y": sq.one()}', 2, "hidden"),
                 ("hidden_second", 'return {"y": sq.one()}', 2, "hidden")]
    assignment = load_made(scenario_assignment(tmp_path / "streams", scenarios))
    result = grade_submission(tmp_path / "streams" / "squares.py", assignment, seed=1, scope="all")
    statuses = {s.id: s.status for s in result.scenarios}
    assert statuses == {"passes": Status.PASSED, "loops_last": Status.TIMEOUT, "hidden_first": Status.PASSED,
                        "hidden_second": Status.PASSED}


def test_a_warden_killed_mid_submission_is_replaced_and_the_rest_still_run(mini, tmp_path):
    slow = (MINI / "squares.py").read_text().replace(
        "    return np.asarray(x, dtype=float) ** 2",
        "    import time\n    time.sleep(0.5)\n    return np.asarray(x, dtype=float) ** 2")
    path = tmp_path / "squares.py"
    path.write_text(slow)
    with Sandbox() as box:
        first = box.process.pid
        killer = threading.Timer(0.3, lambda: os.kill(first, signal.SIGKILL))
        box.begin(path, "squares", commands.job(mini))  # the warden starts up...
        box.runs.wait_ready(10.0)
        killer.start()   # ...and dies while square_values sleeps
        result = grade_submission(path, mini, seed=1, sandbox=box)
        killer.join()
        assert box.process.pid != first
    statuses = {s.id: s.status for s in result.scenarios}
    assert statuses["grad_values"] is Status.PASSED and statuses["fresh_state"] is Status.PASSED, statuses
