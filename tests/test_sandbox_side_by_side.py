"""Public scenarios two at a time (``Sandbox(at_once=2)``, as ``grader check`` runs them on two
cores): each run keeps its own result and output, a run that times out, crashes or runs out of
memory costs only itself (its neighbour is run again in a fresh zygote), and hidden scenarios still
run one at a time. Real processes throughout; overlap is read from the programs' own clocks.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from made_assignments import load_made, scenario_assignment

from grader import commands, grade_submission, load_assignment
from grader.formats import ReadContext
from grader.results import Status
from grader.runner import execute
from grader.sandbox.launcher import Sandbox
from grader.submission import read_submission
from grader.visibility import Scope

# A program that says when it ran (CLOCK_MONOTONIC is one clock for every process of the machine)
# and prints its own name many times, past a pipe's buffer if it were shared.
TIMED = '''import time
begin = time.monotonic()
print("{name}" * 20000)
time.sleep(0.4)
return {{"y": sq.one(), "name": "{name}", "begin": begin, "end": time.monotonic()}}'''


def _timed(name: str, visibility: str = "public") -> tuple:
    return (name, TIMED.format(name=name), 5, visibility)


def _overlap(a: dict, b: dict) -> bool:
    return a["begin"] < b["end"] and b["begin"] < a["end"]


def _observed(tmp_path: Path, scenarios: list[tuple], at_once: int) -> dict[str, dict]:
    """Each scenario's observations and stdout, run through the real runner in a sandbox."""
    assignment = load_made(scenario_assignment(tmp_path / "side", scenarios))
    submission = read_submission(tmp_path / "side" / "squares.py", (), ReadContext.of(assignment))
    with Sandbox(at_once=at_once) as box:
        run = execute(submission, assignment, box, seed=1, scope=Scope.ALL, inputs=lambda planned: {})
    programs = assignment.select(Scope.ALL)
    return {programs[index].id: {**outcome.observations, "stdout": outcome.stdout}
            for index, outcome in run.outcomes.items()}


def test_two_public_scenarios_run_at_once_each_with_its_own_result_and_output(tmp_path):
    seen = _observed(tmp_path, [_timed("A"), _timed("B"), _timed("C"), _timed("D")], at_once=2)
    assert set(seen) == {"A", "B", "C", "D"}
    for name, observed in seen.items():
        assert observed["name"] == name and observed["stdout"].startswith(name * 100), name
        assert set(observed["stdout"].strip().split("\n")[0]) == {name}, name
    assert _overlap(seen["A"], seen["B"]) and (_overlap(seen["C"], seen["D"]) or _overlap(seen["B"], seen["C"]))
    assert not _overlap(seen["A"], seen["C"]) and not _overlap(seen["A"], seen["D"])  # never three at once


def test_one_at_a_time_unless_asked_and_hidden_scenarios_always_alone(tmp_path):
    one = _observed(tmp_path / "one", [_timed("A"), _timed("B")], at_once=1)
    assert not _overlap(one["A"], one["B"])
    seen = _observed(tmp_path / "two", [_timed("A"), _timed("B"), _timed("H1", "hidden"), _timed("H2", "hidden")],
                     at_once=2)
    assert _overlap(seen["A"], seen["B"])
    assert not any(_overlap(seen[hidden], seen[other]) for hidden in ("H1", "H2") for other in seen if other != hidden)


@pytest.mark.parametrize("neighbour", ["before", "after"])
def test_a_timeout_crash_or_memory_kill_beside_a_run_costs_only_itself(tmp_path, neighbour):
    failing = [("loops", "while True:\n    pass", 0.3), ("exits", "import os\nos._exit(3)", 2),
               ("killed", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", 2),
               ("memory", "hog = bytearray(2 << 30)", 2), ("sleeps", "import time\ntime.sleep(60)", 0.3)]
    passing = [(f"passes_{n}", 'import time\ntime.sleep(0.05)\nreturn {"y": sq.one()}', 2) for n in range(len(failing))]
    pairs = [(good, bad) if neighbour == "before" else (bad, good) for good, bad in zip(passing, failing)]
    assignment = load_assignment(scenario_assignment(tmp_path / "pairs", [s for pair in pairs for s in pair]))
    with Sandbox(at_once=2) as box:
        result = grade_submission(tmp_path / "pairs" / "squares.py", assignment, seed=1, sandbox=box)
    statuses = {s.id: s.status for s in result.scenarios}
    assert all(statuses[s[0]] is Status.PASSED for s in passing), statuses
    assert statuses["loops"] is Status.TIMEOUT and statuses["sleeps"] is Status.TIMEOUT
    assert statuses["exits"] is Status.CRASHED and statuses["killed"] is Status.MEMORY
    assert statuses["memory"] in (Status.MEMORY, Status.ERROR)


def test_runs_side_by_side_get_their_own_inputs_and_programs(tmp_path):
    # The same program text under other ids: each run's command carries its own index and program.
    scenarios = [(f"s{n}", f'return {{"y": sq.one(), "n": {n}}}', 2) for n in range(9)]
    assignment = load_assignment(scenario_assignment(tmp_path / "many", scenarios))
    source = (tmp_path / "many" / "squares.py").read_bytes()
    programs = assignment.select(Scope.PUBLIC)
    with Sandbox(at_once=2) as box:
        box.begin(tmp_path / "many" / "squares.py", "squares", commands.job(assignment), source=source)
        assert box.runs.wait_ready(5).ok
        outcomes = list(box.runs.run_all((index, 2.0, commands.run(index, program, {}))
                                    for index, program in enumerate(programs)))
    assert [index for index, _ in outcomes] == list(range(9))
    assert [outcome.observations["n"] for _, outcome in outcomes] == list(range(9))
