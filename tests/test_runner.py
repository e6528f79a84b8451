"""The runner and sandbox on the engine-test assignment: every way a scenario can end, for real.

Each submission here is the correct ``squares.py`` with one change; every run starts real sandbox
processes. The assertions are on result data: status, points, feedback.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from own_processes import wait_until

from grader import grade_submission, load_assignment
from grader.results import Status

MINI = Path(__file__).parent / "fixtures" / "mini"
CORRECT = (MINI / "squares.py").read_text()


@pytest.fixture(scope="module")
def mini():
    return load_assignment(MINI)


def submit(tmp_path: Path, source: str, name: str = "squares.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def with_square(body: str) -> str:
    """The correct submission with square() replaced by ``body`` (indented by the caller's dedent)."""
    return CORRECT.replace("    return np.asarray(x, dtype=float) ** 2", textwrap.indent(textwrap.dedent(body), "    "))


def by_id(result):
    return {s.id: s for s in result.scenarios}


def test_correct_submission_gets_full_marks(mini):
    result = grade_submission(MINI / "squares.py", mini, seed=3)
    assert result.score == result.max_score == 6
    assert all(s.status is Status.PASSED for s in result.scenarios)
    assert result.error is None
    assert "rlimits" in result.isolation


def test_state_does_not_leak_between_scenarios(mini, tmp_path):
    # square() and grad_square() bump CALLS in their scenarios; fresh_state must still read 0.
    result = grade_submission(MINI / "squares.py", mini, seed=3)
    assert by_id(result)["fresh_state"].status is Status.PASSED


def test_same_seed_same_inputs_different_seed_different_inputs(mini, tmp_path):
    wrong = submit(tmp_path, with_square("print(list(x)); return x"))
    one, two = (grade_submission(wrong, mini, seed=s) for s in (5, 5))
    other = grade_submission(wrong, mini, seed=6)
    assert by_id(one)["square_values"].feedback.stdout == by_id(two)["square_values"].feedback.stdout
    assert by_id(one)["square_values"].feedback.stdout != by_id(other)["square_values"].feedback.stdout


def test_wrong_value_fails_with_expected_got_and_misconception(mini, tmp_path):
    result = grade_submission(submit(tmp_path, with_square("return 2 * np.asarray(x)")), mini, seed=1)
    failed = by_id(result)["square_values"]
    assert failed.status is Status.FAILED and failed.points == 0
    assert failed.feedback.what == "square(x)"
    assert "shape" in failed.feedback.expected and "shape" in failed.feedback.got
    assert failed.feedback.misconception == "returned 2x, the gradient"
    assert result.score == 4


def test_exception_is_an_error_with_the_students_frames_only(mini, tmp_path):
    result = grade_submission(submit(tmp_path, with_square("raise ValueError('boom')")), mini, seed=1)
    errored = by_id(result)["square_values"]
    assert errored.status is Status.ERROR
    assert errored.feedback.summary == "raised ValueError: boom"
    trace = errored.feedback.traceback
    assert 'File "squares.py"' in trace and "<scenario square_values>" in trace
    assert "child.py" not in trace and "grader" not in trace
    # The program's own frame shows its line, as the student reads it in scenarios.py.
    assert '"<scenario square_values>", line 2, in square_values\n    return {"y": sq.square(x)}' in trace


def test_a_traceback_shows_the_students_lines_wherever_their_code_went(mini, tmp_path):
    # The sandbox runs the module the grader compiled; the lines still come from the checked file.
    source = with_square("import os; os.chdir('/')\nraise ValueError('boom')")
    trace = by_id(grade_submission(submit(tmp_path, source), mini, seed=1))["square_values"].feedback.traceback
    line = source.splitlines().index("    raise ValueError('boom')") + 1
    assert f'File "squares.py", line {line}, in square\n    raise ValueError(\'boom\')' in trace


def test_infinite_loop_times_out_and_the_rest_still_run(mini, tmp_path):
    started = time.monotonic()
    source = with_square("while True: pass") + "\nprint('imported once')\n"
    result = grade_submission(submit(tmp_path, source), mini, seed=1)
    assert by_id(result)["square_values"].status is Status.TIMEOUT
    assert by_id(result)["grad_values"].status is Status.PASSED  # in a fresh sandbox
    assert by_id(result)["fresh_state"].status is Status.PASSED
    assert time.monotonic() - started < 10
    # Imported twice (the fresh sandbox imports it again); its import output is reported once.
    assert result.import_stdout == "imported once\n" and result.import_stderr == ""


def test_a_timeout_says_where_the_students_code_was_when_its_time_ran_out(mini, tmp_path):
    source = with_square("total = 0\nwhile True:\n    total += 1")
    result = grade_submission(submit(tmp_path, source), mini, seed=1)
    timed_out = by_id(result)["square_values"]
    assert timed_out.status is Status.TIMEOUT
    where = timed_out.feedback.traceback
    line = textwrap.dedent(source).splitlines().index("    while True:") + 1
    assert where.startswith("Your code was here when its time ran out (most recent call last):")
    assert f'File "squares.py", line {line}, in square' in where or f'File "squares.py", line {line + 1}' in where
    assert "printing" not in timed_out.feedback.summary


def test_a_program_that_will_not_say_where_still_times_out_at_once(mini, tmp_path):
    # It takes the signal over: no stack, and the grader waits for one only a moment.
    source = with_square("import signal\nsignal.signal(signal.SIGUSR1, signal.SIG_IGN)\nwhile True:\n    pass")
    started = time.monotonic()
    result = grade_submission(submit(tmp_path, source), mini, seed=1)
    assert by_id(result)["square_values"].status is Status.TIMEOUT
    assert by_id(result)["square_values"].feedback.traceback is None
    assert time.monotonic() - started < 10


def test_a_timeout_while_printing_says_printing_may_be_the_cause(mini, tmp_path):
    source = with_square("while True:\n    print('x' * 1000)")
    timed_out = by_id(grade_submission(submit(tmp_path, source), mini, seed=1))["square_values"]
    assert timed_out.status is Status.TIMEOUT
    assert "printing, not looping, may be what took the time" in timed_out.feedback.summary
    assert "more bytes not shown" in timed_out.feedback.stdout


def test_sleeping_forever_times_out(mini, tmp_path):
    result = grade_submission(submit(tmp_path, with_square("import time; time.sleep(10**9)")), mini, seed=1)
    assert by_id(result)["square_values"].status is Status.TIMEOUT


@pytest.mark.parametrize("bomb", ["np.ones((10**5, 10**5))", "[0] * 10**10"])
def test_memory_bomb_hits_the_memory_limit(mini, tmp_path, bomb):
    result = grade_submission(submit(tmp_path, with_square(f"big = {bomb}")), mini, seed=1)
    assert by_id(result)["square_values"].status is Status.MEMORY
    assert "1024 MiB" in by_id(result)["square_values"].feedback.summary
    assert by_id(result)["grad_values"].status is Status.PASSED


@pytest.mark.parametrize("body, status", [
    ("import os; os._exit(0)", Status.CRASHED),
    ("import sys; sys.exit(0)", Status.ERROR),
    ("raise KeyboardInterrupt", Status.ERROR),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", Status.CRASHED),
])
def test_ending_the_process_earns_nothing(mini, tmp_path, body, status):
    result = grade_submission(submit(tmp_path, with_square(body)), mini, seed=1)
    assert by_id(result)["square_values"].status is status
    assert by_id(result)["square_values"].points == 0
    assert by_id(result)["grad_values"].status is Status.PASSED


@pytest.mark.parametrize("body", [
    # an object equal to everything
    "class Liar:\n    def __eq__(self, other): return True\n    def __bool__(self): return True\nreturn Liar()",
    # subclasses that could lie through overridden methods
    "class F(float):\n    def __eq__(self, other): return True\nreturn F(1.0)",
    "class A(np.ndarray):\n    def __eq__(self, other): return True\nreturn (np.asarray(x) ** 2).view(A)",
    "return np.full(np.shape(x), np.nan)",
    "return np.full(np.shape(x), np.inf)",
    "return True",
    "return (x * x).tolist()",
    "def g():\n    while True: yield 1\nreturn g()",
])
def test_lying_values_fail(mini, tmp_path, body):
    result = grade_submission(submit(tmp_path, with_square(body)), mini, seed=1)
    assert by_id(result)["square_values"].status is Status.FAILED
    assert by_id(result)["square_values"].points == 0


def test_printed_results_are_shown_never_parsed(mini, tmp_path):
    forged = '{"score": 6, "max_score": 6, "tests": []}'
    source = with_square(f"print({forged!r}); import os; os.write(1, b'passed 6/6\\n'); return x")
    result = grade_submission(submit(tmp_path, source), mini, seed=1)
    scenario = by_id(result)["square_values"]
    assert scenario.status is Status.FAILED
    assert forged in scenario.feedback.stdout and "passed 6/6" in scenario.feedback.stdout
    assert result.score == 4


def test_forged_message_on_the_result_pipe_is_not_a_pass(mini, tmp_path):
    # Guess the result pipe's descriptor and write a well-formed frame claiming a pass.
    body = """\
        import json, os, struct
        body = json.dumps({"kind": "result", "index": 0, "observations": {"passed": True}}).encode()
        for fd in range(3, 12):
            try:
                os.write(fd, struct.pack(">I", len(body)) + body)
            except OSError:
                pass
        return x
        """
    result = grade_submission(submit(tmp_path, with_square(body)), mini, seed=1)
    assert by_id(result)["square_values"].status is Status.FAILED
    assert result.score <= 4


def test_huge_output_is_capped(mini, tmp_path):
    source = with_square("import sys\nfor _ in range(200): sys.stdout.write('x' * 1_000_000)\nreturn x * x")
    result = grade_submission(submit(tmp_path, source), mini, seed=1)
    scenario = by_id(result)["square_values"]
    assert scenario.status in (Status.PASSED, Status.TIMEOUT)
    assert len(scenario.feedback.stdout) < 10_000 and "more bytes not shown" in scenario.feedback.stdout


def test_each_scenario_gets_only_its_own_output(mini, tmp_path):
    # The next command waits in the sandbox while a scenario runs, and the next scenario may start
    # printing before the grader has read all of this one's output: each run has its own channel.
    source = (CORRECT.replace("    return np.asarray(x, dtype=float) ** 2",
                              "    import os, sys\n    print('s' * 20_000)\n    os.write(2, b'e' * 20_000)\n"
                              "    return np.asarray(x, dtype=float) ** 2")
              .replace("    return 2 * np.asarray(x, dtype=float)",
                       "    print('g-out')\n    return 2 * np.asarray(x, dtype=float)"))
    result = grade_submission(submit(tmp_path, source), mini, seed=1)
    scenarios = by_id(result)
    assert all(s.status is Status.PASSED for s in result.scenarios)
    assert scenarios["grad_values"].feedback.stdout == "computing the gradient\ng-out\n"
    assert scenarios["grad_values"].feedback.stderr == ""
    assert set(scenarios["square_values"].feedback.stdout.split("\n")[0]) == {"s"}
    square = scenarios["square_values"].feedback
    assert square.stderr.startswith("eee") and "g-out" not in square.stdout
    assert scenarios["fresh_state"].feedback.stdout == scenarios["fresh_state"].feedback.stderr == ""


def test_a_scenario_holds_no_descriptor_of_the_warden(mini, tmp_path):
    # The warden keeps the Landlock rules' descriptors (one per readable path, ~200) for every zygote;
    # each zygote closes its copies before the submission is imported.
    body = """\
        import os
        open_fds = []
        for fd in range(1024):
            try:
                os.fstat(fd)
                open_fds.append(fd)
            except OSError:
                pass
        print("open descriptors:", *open_fds)
        return np.asarray(x) ** 2
        """
    result = grade_submission(submit(tmp_path, with_square(body)), mini, seed=1)
    printed = by_id(result)["square_values"].feedback.stdout.split("open descriptors:")[1].split()
    assert 3 <= len(printed) <= 8, printed   # stdin/out/err, the result pipe, the output channels


def test_a_descriptor_the_grader_inherited_never_reaches_the_sandbox(mini, tmp_path):
    # The warden is spawned with whatever is inheritable in the grader, such as a descriptor the
    # grader's own parent left open; the sandbox closes it before anything else. (Told apart by
    # inode: the same number may be reused by a descriptor of the sandbox's own.)
    body = """\
        import os
        for fd in range(1024):
            try:
                print("inode", os.fstat(fd).st_ino)
            except OSError:
                pass
        return np.asarray(x) ** 2
        """
    leaked_r, leaked_w = os.pipe()
    try:
        os.set_inheritable(leaked_r, True)
        os.set_inheritable(leaked_w, True)
        result = grade_submission(submit(tmp_path, with_square(body)), mini, seed=1)
        inode = os.fstat(leaked_r).st_ino
    finally:
        os.close(leaked_r)
        os.close(leaked_w)
    printed = by_id(result)["square_values"].feedback.stdout
    assert printed.count("inode") >= 3 and f"inode {inode}\n" not in printed


def test_a_strays_output_never_reaches_a_later_scenario(mini, tmp_path):
    # fresh_state (run first) leaves a process behind that floods its scenario's output channel
    # until the sweep kills it; grad_values, two runs later on the same channel, sees none of it.
    stray = """
        del CALLS


        def __getattr__(name):
            import os
            if name == "CALLS":
                started, running = os.pipe()
                if os.fork() == 0:
                    os.write(running, b"!")
                    while True:
                        os.write(1, b"LATE\\n" * 800)
                os.read(started, 1)  # the stray is writing before the scenario ends
            raise AttributeError(name)
        """
    noisy = CORRECT.replace("CALLS = 0\n", "CALLS = 0\n" + textwrap.dedent(stray))
    noisy = noisy.replace("    global CALLS\n    CALLS += 1\n", "")
    result = grade_submission(submit(tmp_path, noisy), mini, seed=1)
    assert result.score == result.max_score
    assert "LATE" in by_id(result)["fresh_state"].feedback.stdout
    for later in ("square_values", "grad_values"):
        assert "LATE" not in by_id(result)[later].feedback.stdout, later


def test_escaped_grandchild_is_killed_when_the_scenario_ends(mini, tmp_path):
    # In its own PID namespace the sandbox sees pids of its own: the grandchild tells its pid in
    # the grader's namespace (/proc is the grader's, so /proc/self names it there).
    body = """\
        import os, sys, time
        told, tell = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.setsid()
            os.write(tell, os.readlink("/proc/self").encode())
            time.sleep(10**6)
        print("grandchild", os.read(told, 32).decode()); sys.stdout.flush()
        return np.asarray(x) ** 2
        """
    result = grade_submission(submit(tmp_path, with_square(body)), mini, seed=1)
    scenario = by_id(result)["square_values"]
    assert scenario.status is Status.PASSED
    pid = int(scenario.feedback.stdout.split()[1])
    assert wait_until(lambda: not _alive(pid), timeout=2), "the setsid'ed grandchild outlived its scenario"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] not in "ZX"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("source, expected", [
    ("def square(x)\n    return x\n", "squares.py, line 1: expected ':'\n    def square(x)\n                 ^"),
    ("import torch\n", "squares.py, line 1: imports 'torch'"),
    ("import importlib\nm = importlib.import_module('jax.numpy')\n", "squares.py, line 2: imports 'jax.numpy'"),
    ("exec('import torch')\n", "squares.py, line 1: imports 'torch'"),
])
def test_static_problems_give_one_message_and_zero(mini, tmp_path, source, expected):
    result = grade_submission(submit(tmp_path, source), mini, seed=1)
    assert result.score == 0 and result.error.startswith(expected)
    assert all(s.status is Status.NOT_RUN for s in result.scenarios)


def test_disguised_forbidden_import_is_caught_at_run_time(mini, tmp_path):
    source = CORRECT + "\ntry:\n    __import__('to' + 'rch')\nexcept ImportError:\n    pass\n"
    result = grade_submission(submit(tmp_path, source), mini, seed=1)
    assert result.score == 0 and "'torch'" in result.error


@pytest.mark.parametrize("source, fragment", [
    ("raise RuntimeError('no numpy here')\n", "importing squares.py failed: RuntimeError: no numpy here"),
    ("while True:\n    pass\n", "importing the submission took longer than 3 s"),
    ("input()\n", "importing squares.py failed: EOFError"),
    ("import sys\nsys.exit(0)\n", "importing squares.py failed: SystemExit"),
])
def test_import_failures_give_zero_with_one_message(mini, tmp_path, source, fragment):
    result = grade_submission(submit(tmp_path, source), mini, seed=1)
    assert result.score == 0 and fragment in result.error
    assert all(s.status is Status.NOT_RUN for s in result.scenarios)


def test_missing_file_is_one_message(mini, tmp_path):
    result = grade_submission(tmp_path / "squares.py", mini, seed=1)
    assert result.score == 0 and result.error.startswith("squares.py was not found")


def test_no_sandbox_process_survives_grading(mini, tmp_path):
    before = set(_children_of(os.getpid()))
    grade_submission(submit(tmp_path, with_square("while True: pass")), mini, seed=1)
    assert set(_children_of(os.getpid())) <= before


def _children_of(pid: int) -> list[int]:
    from grader.sandbox.proctree import children
    return children(pid)


def test_a_warm_sandbox_serves_submission_after_submission(mini, tmp_path):
    from grader.sandbox.launcher import Sandbox

    hostile = submit(tmp_path, with_square("globals()['CALLS'] = 99; open('left-behind', 'w').write('x'); "
                                           "import builtins; builtins.len = None\nwhile True: pass"), "squares.py")
    with Sandbox() as box:
        first = grade_submission(hostile, mini, seed=1, sandbox=box)
        warden = box.process.pid
        second = grade_submission(MINI / "squares.py", mini, seed=1, sandbox=box)
        assert box.process.pid == warden, "the warden was not reused"
    assert by_id(first)["square_values"].status is Status.TIMEOUT
    assert second.score == second.max_score and second.error is None


def test_without_isolation_between_submissions_each_gets_a_fresh_warden(mini, tmp_path):
    from grader.sandbox.isolation import IsolationPlan
    from grader.sandbox.launcher import Sandbox

    weakest = IsolationPlan(uid=None, landlock_abi=0, nproc=None)
    assert not weakest.reusable
    with Sandbox(plan=weakest) as box:
        grade_submission(MINI / "squares.py", mini, seed=1, sandbox=box)
        first = box.process.pid
        result = grade_submission(MINI / "squares.py", mini, seed=1, sandbox=box)
        assert box.process.pid != first
    assert result.score == result.max_score and result.isolation == ("rlimits",)


def test_plain_gives_a_programs_raw_values_without_failing_on_wrong_ones(tmp_path):
    # plain() in the sandbox: a tensor-like object's data, lists and tuples item by item, anything else
    # as it is, and never an error of the scenario's own (a property that raises, no data at all).
    from grader.scenario import plain
    boxed = type("Boxed", (), {})()
    boxed.data = np.arange(3.0)
    assert plain([1, (None, "x")]) == [1, (None, "x")] and plain(boxed) is boxed.data
    (tmp_path / "assignment.yaml").write_text(textwrap.dedent("""
        id: plain
        title: plain()
        submission: things.py
        scenario_file: scenarios.py
        tasks: [{id: t, title: T}]
        scenarios: [{id: observe, title: plain values, task: t, points: 1}]
        """))
    (tmp_path / "scenarios.py").write_text(textwrap.dedent("""
        from grader.scenario import scenario

        @scenario
        def observe(things):
            return {"values": plain([things.Boxed(np.arange(3.0)), things.Hostile(), None, (things.Boxed(1.5),)])}

        @observe.check
        def _(got):
            tensor, hostile, nothing, (inner,) = got["values"]
            assert list(tensor) == [0.0, 1.0, 2.0] and nothing is None and type(inner).__name__ == "Opaque"
            assert "Hostile" in hostile.type
        """))
    (tmp_path / "things.py").write_text(textwrap.dedent("""
        class Boxed:
            def __init__(self, data):
                self.data = data

        class Hostile:
            @property
            def data(self):
                raise RuntimeError("no data for you")
        """))
    result = grade_submission(tmp_path / "things.py", load_assignment(tmp_path), seed=1)
    assert result.scenarios[0].status is Status.PASSED, result.scenarios[0].feedback


def test_outcomes_judged_as_they_come_give_the_result_judged_at_the_end(mini, tmp_path):
    # check and --watch judge each outcome while the sandbox runs the next program; an outcome that
    # arrives before the checks have loaded is judged with the first one after they have (or at the
    # end, when none comes after). Either way, the same result.
    from grader.formats import ReadContext
    from grader.runner import execute, judge_as_they_come, judge_run
    from grader.sandbox.launcher import Sandbox
    from grader.submission import read_submission
    from grader.visibility import Scope

    wrong = submit(tmp_path, with_square("print('squaring'); return np.asarray(x, dtype=float) * 2"))
    submission = read_submission(wrong, mini.forbidden_imports, ReadContext.of(mini))
    asked = []

    def loaded_after_two():  # the checks "load" once two outcomes have come back
        asked.append(len(asked))
        return mini if len(asked) > 2 else None

    with Sandbox() as box:
        run = execute(submission, mini, box, seed=4, scope=Scope.PUBLIC,
                      inputs=lambda planned: mini.inputs(planned.id, 4),
                      judge=judge_as_they_come(loaded_after_two, 4, Scope.PUBLIC))
    scenarios = mini.select(Scope.PUBLIC)
    assert len(run.outcomes) == len(scenarios) >= 3
    assert len(asked) == len(scenarios) + 2, "asked again for the first two only, until they were judged"
    assert len(run.judged) == len(scenarios), "the first two were judged as soon as the checks had loaded"
    early = judge_run(run, mini)
    run.judged.clear()
    late = judge_run(run, mini)
    def verdicts(result):
        return [(s.id, s.status, s.feedback) for s in result.scenarios]

    assert verdicts(early) == verdicts(late)
    assert early.score == late.score < early.max_score
    assert any(s.status is Status.FAILED and "squaring" in s.feedback.stdout for s in early.scenarios)
