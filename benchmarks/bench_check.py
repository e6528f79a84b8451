"""How fast is ``grader check`` for a student, and what does isolation cost per scenario?

Measures, in one run on this machine:

1. ``python -c "import numpy"``: the floor of any numpy grader (same interpreter as the grader);
2. ``grader check`` on the reference solution (all public scenarios), wall time;
3. per scenario: a no-op scenario through the real sandbox, run as the runner runs scenarios
   (``Scheduler.run_all``: the next command queued while one runs), against a bare
   ``fork``/``_exit``/``waitpid`` of the same process (a scenario process forking itself: the
   zygote's memory, numpy and the submission imported). The difference is the isolation overhead
   per scenario. Shown beside them: one at a time (``Scheduler.run``, a round trip through the
   grader each), and a bare fork of a process with only numpy imported.

Targets (issue 3): (2) within 2x of (1); overhead at most 2 ms per scenario.
Usage: ``python benchmarks/bench_check.py [--runs 15]``; prints a table and writes
``benchmarks/results/check.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# fork+exit+wait, timed: the same loop outside the sandbox (numpy only) and inside it (a scenario).
FORK_LOOP = """\
times = []
for _ in range({runs}):
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    times.append(time.perf_counter() - start)
"""
BARE_FORK = ("import os, sys, time\nimport numpy\n" + FORK_LOOP.format(runs="int(sys.argv[1])")
             + "print(sorted(times)[len(times) // 2])\n")
NOOP_ASSIGNMENT = """\
id: noop
title: no-op
submission: noop.py
scenario_file: scenarios.py
tasks: [{id: t, title: t}]
scenarios: [{id: noop, title: noop, task: t, points: 1},
            {id: bare_forks, title: bare forks, task: t, points: 1}]
"""
NOOP_SCENARIOS = """\
from grader.scenario import scenario

@scenario
def noop(module):
    return None

@noop.check
def _(got):
    pass

@scenario
def bare_forks(module):
    # The bare fork of the same process: a scenario process is the zygote (numpy and the
    # submission imported, isolation applied) plus a few pages, so its own fork+exit+wait is it.
    import os, time
""" + textwrap.indent(FORK_LOOP.format(runs=400), "    ") + """\
    return sorted(times)[len(times) // 2]

@bare_forks.check
def _(got):
    pass
"""


def wall(command: list[str], runs: int, cwd: Path | None = None) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def per_scenario(runs: int) -> tuple[float, float, float, float]:
    """Median seconds per no-op scenario in the sandbox, run as the runner runs them (a stream:
    the next command queued while one runs) and one at a time (a round trip through the grader
    each); median seconds of a bare fork+exit+wait of the same process (a scenario process
    forking itself), and of a process with only numpy."""
    from grader import commands, load_assignment
    from grader.sandbox.launcher import Sandbox

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        (folder / "assignment.yaml").write_text(NOOP_ASSIGNMENT)
        (folder / "scenarios.py").write_text(NOOP_SCENARIOS)
        (folder / "noop.py").write_text("")
        assignment = load_assignment(folder)
        payload, bare_forks = (commands.run(index, scenario, {}) for index, scenario in
                               enumerate(assignment.select("public")))
        with Sandbox() as box:
            box.begin(folder / "noop.py", "noop", commands.job(assignment))
            assert box.runs.wait_ready(10).ok
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                box.runs.run(0, 5, payload)
                times.append(time.perf_counter() - start)
            outcomes = list(box.runs.run_all((0, 5, payload) for _ in range(runs)))
            assert len(outcomes) == runs and all(outcome.has_result for _, outcome in outcomes)
            # Each run's duration counts from the end of the one before: the time it adds to a check.
            streamed = statistics.median(outcome.duration for _, outcome in outcomes)
            same_process = box.runs.run(1, 30, bare_forks).observations
    bare = subprocess.run([sys.executable, "-c", BARE_FORK, str(runs)], capture_output=True, text=True, check=True)
    return streamed, statistics.median(times), same_process, float(bare.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    grader_script = Path(sys.executable).with_name("grader")
    launcher = [str(grader_script)] if grader_script.exists() else [sys.executable, "-m", "grader"]
    check = [*launcher, "check", str(ROOT / "solutions" / "autodiff" / "autodiff.py"),
             "--assignment", str(ROOT / "exercises" / "autodiff")]
    numpy_times, check_times = [], []
    for _ in range(args.runs):  # interleaved, so both see the same machine state
        numpy_times += wall([sys.executable, "-c", "import numpy"], 1)
        check_times += wall(check, 1)
    scenario, one_at_a_time, bare, numpy_only = per_scenario(400)
    figures = {
        "import_numpy_s": statistics.median(numpy_times),
        "grader_check_s": statistics.median(check_times),
        "ratio": statistics.median(check_times) / statistics.median(numpy_times),
        "scenario_in_sandbox_ms": scenario * 1000,
        "scenario_one_at_a_time_ms": one_at_a_time * 1000,
        "bare_fork_ms": bare * 1000,
        "bare_fork_numpy_only_ms": numpy_only * 1000,
        "isolation_overhead_ms": (scenario - bare) * 1000,
        "runs": args.runs,
        "python": sys.version.split()[0],
    }
    print(f"python -c 'import numpy'     {figures['import_numpy_s'] * 1000:7.1f} ms (median of {args.runs})")
    print(f"grader check (reference)     {figures['grader_check_s'] * 1000:7.1f} ms  = {figures['ratio']:.2f} x numpy "
          "(target <= 2)")
    print(f"no-op scenario in sandbox    {figures['scenario_in_sandbox_ms']:7.2f} ms as the runner runs them "
          f"({figures['scenario_one_at_a_time_ms']:.2f} ms one at a time)")
    print(f"bare fork+exit+wait          {figures['bare_fork_ms']:7.2f} ms of the same process "
          f"({figures['bare_fork_numpy_only_ms']:.2f} ms of one with only numpy)")
    print(f"isolation overhead/scenario  {figures['isolation_overhead_ms']:7.2f} ms (target <= 2)")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "check.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
