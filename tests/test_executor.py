"""The executor interface, for real: warm sandboxes lent per submission, results streamed as they
land, and a close that stops everything at once."""

from __future__ import annotations

import contextlib
import textwrap
import time
from pathlib import Path

import pytest

from grader import grade_submission, load_assignment
from grader.executor import GradingJob, LocalExecutor, grade_lent
from grader.results import Status
from grader.sandbox.launcher import Sandbox
from grader.visibility import Scope

MINI = Path(__file__).parent / "fixtures" / "mini"
CORRECT = (MINI / "squares.py").read_text()


@pytest.fixture(scope="module")
def mini():
    return load_assignment(MINI)


def submit(folder: Path, name: str, body: str | None = None) -> Path:
    source = CORRECT if body is None else CORRECT.replace(
        "    return np.asarray(x, dtype=float) ** 2", textwrap.indent(textwrap.dedent(body), "    "))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(source)
    return path


def test_a_lent_sandbox_is_handed_back_ready_before_judging(mini, tmp_path):
    lent = []

    with Sandbox() as box:
        @contextlib.contextmanager
        def lend():
            lent.append("out")
            yield box
            # Handed back: this submission's zygote is gone, the warden waits for the next job.
            assert box.zygote is None and box.job_dir is None and box.process.poll() is None
            lent.append("back")

        wrong = grade_lent(submit(tmp_path / "w", "squares.py", "return x"), mini, lend, seed=2, scope=Scope.PUBLIC)
        right = grade_lent(MINI / "squares.py", mini, lend, seed=2, scope=Scope.PUBLIC)
        broken_file = tmp_path / "broken.py"
        broken_file.write_text("def square(:\n")
        broken = grade_lent(broken_file, mini, lend, seed=2, scope=Scope.PUBLIC)
    assert lent == ["out", "back", "out", "back"], "a file that cannot run borrows no sandbox"
    assert {s.id: s for s in wrong.scenarios}["square_values"].status is Status.FAILED
    assert right.score == right.max_score == 6
    assert broken.score == 0 and "line 1" in broken.error


def test_two_sandboxes_grade_a_class_as_one_would_alone(mini, tmp_path):
    paths = {f"s{n}": submit(tmp_path / f"s{n}", "squares.py", None if n % 2 else "return x") for n in range(6)}
    with LocalExecutor(mini, workers=2) as executor:
        graded = list(executor.grade((GradingJob(key, path, seed=3) for key, path in paths.items()), Scope.ALL))
        sandboxes = len(executor._pool._all)
    assert sorted(g.job.key for g in graded) == sorted(paths) and sandboxes == 2
    for item in graded:
        alone = grade_submission(item.job.path, mini, seed=3, scope="all")
        assert [(s.id, s.status, s.points) for s in item.result.scenarios] == \
               [(s.id, s.status, s.points) for s in alone.scenarios]
        assert item.result.timings["total"] < 5, "timings count the submission's own work, not its wait"


def test_results_stream_back_as_they_land(mini, tmp_path):
    slow = submit(tmp_path / "slow", "squares.py",
                  "import time; time.sleep(1.5)\nreturn np.asarray(x, dtype=float) ** 2")
    fast = [submit(tmp_path / f"fast{n}", "squares.py") for n in range(3)]
    jobs = [GradingJob("slow", slow, 1), *(GradingJob(f"fast{n}", path, 1) for n, path in enumerate(fast))]
    with LocalExecutor(mini, workers=2) as executor:
        order = [graded.job.key for graded in executor.grade(jobs, Scope.PUBLIC)]
    assert order[-1] == "slow" and set(order) == {"slow", "fast0", "fast1", "fast2"}


def test_closing_stops_what_runs_at_once(mini, tmp_path):
    loops = [submit(tmp_path / f"loop{n}", "squares.py", "while True: pass") for n in range(2)]
    quick = submit(tmp_path / "quick", "squares.py")
    # A sandbox for each job: with fewer, the loops may be lent them first, and the quick one would
    # wait for a loop's time-out (which jobs the threads reach first is the scheduler's choice).
    executor = LocalExecutor(mini, workers=3)
    stream = executor.grade([GradingJob("quick", quick, 1), *(GradingJob(f"l{n}", p, 1) for n, p in enumerate(loops))],
                            Scope.PUBLIC)
    first = next(stream)
    began = time.monotonic()
    executor.close()
    assert time.monotonic() - began < 2.0  # at once: a second, with room for a machine under load
    assert first.job.key == "quick" and first.result.score == first.result.max_score
    assert list(stream) == [], "nothing unfinished is yielded after close"
