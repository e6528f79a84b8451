"""The autodiff assignment through the real ``grader`` CLI: reference, stub, every buggy fixture."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from buggy_fixtures import BUGGY
from test_assignment_content import EXPECTED, SEED, check_fixture_result

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "autodiff"
REFERENCE = ROOT / "solutions" / "autodiff" / "autodiff.py"
GRADER = [sys.executable, "-m", "grader"]


def grader(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*GRADER, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_check_on_the_reference_shows_full_marks():
    done = grader("check", str(REFERENCE), "--assignment", str(EXERCISE))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Score: 55/55 points, 8 of 8 scenarios passed (and 9 of 9 checks worth no" in done.stdout


def test_check_on_the_stub_says_not_implemented_for_each_task(tmp_path):
    student = tmp_path / "autodiff"
    shutil.copytree(EXERCISE, student)
    done = grader("check", cwd=student)  # as a student runs it: inside the exercise folder
    assert done.returncode == 1
    # The engine's 0-point checks are not progress: the handout has passed none of its 8 scenarios.
    assert "Score: 0/55 points, 0 of 8 scenarios passed (and 9 of 9 checks worth no points)." in done.stdout
    # Every task scenario is one TODO line of its table, and one line says which tasks are left:
    assert done.stdout.count("  TODO     ") == 8
    assert "Not implemented yet: Task 1 (4 scenarios), Task 2 (4 scenarios)." in done.stdout
    assert len(done.stdout.splitlines()) <= 40 and max(map(len, done.stdout.splitlines())) <= 80


def test_check_names_the_misconception_of_a_buggy_fixture():
    done = grader("check", str(BUGGY / "detach_returns_self.py"), "--assignment", str(EXERCISE))
    assert done.returncode == 1
    assert "y.detach() returned y itself" in done.stdout
    assert "Expected:  [0., 1., 4., 9.] (shape (4,))" in done.stdout


@pytest.fixture(scope="module")
def graded_fixtures(tmp_path_factory) -> Path:
    """Every buggy fixture and the reference, graded once by `grader grade` on all scenarios."""
    out = tmp_path_factory.mktemp("out")
    done = grader("grade", str(BUGGY), "--assignment", str(EXERCISE), "--out", str(out), "--seed", str(SEED),
                  "-j", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_grade_shows_each_fixtures_points_lost_misconception_and_task(graded_fixtures, name):
    result = json.loads((graded_fixtures / "results" / f"{name}.json").read_text())
    failed = [s for s in result["scenarios"] if s["status"] != "passed"]
    check_fixture_result(name, [s["id"] for s in failed],
                         {t["id"]: (t["score"], t["max_score"]) for t in result["tasks"]},
                         [s["feedback"]["misconception"] for s in failed if s["feedback"]["misconception"]],
                         [c["name"] for c in result["provided_changes"]],
                         {s["task"] for s in failed if s["max_points"] > 0 and not s["feedback"]["control_failed"]})


def test_an_empty_file_cannot_be_graded_and_another_file_is_one_clear_line(tmp_path):
    for text, said in (("", "nothing (0 bytes)"), (" \n\t\n", "only whitespace")):
        (tmp_path / "autodiff.py").write_text(text)
        done = grader("check", "--json", "autodiff.py", "--assignment", str(EXERCISE), cwd=tmp_path)
        result = json.loads(done.stdout)
        assert done.returncode == 1 and result["score"] == 0
        assert result["error"] == f"empty file: autodiff.py holds {said}; hand in the file you worked in"
        assert all(s["status"] == "not_run" for s in result["scenarios"])
    (tmp_path / "autodiff.py").write_text("print('my notes')\n")
    done = grader("check", "autodiff.py", "--assignment", str(EXERCISE), cwd=tmp_path)
    assert done.returncode == 1
    assert "autodiff.py holds none of the exercise's provided engine: it is another file." in done.stdout
    assert "AttributeError" not in done.stdout and len(done.stdout.splitlines()) <= 10


def test_verbose_shows_the_unfinished_scenarios_programs_and_tracebacks(tmp_path):
    student = tmp_path / "autodiff"
    shutil.copytree(EXERCISE, student)
    quiet, verbose = grader("check", cwd=student), grader("check", "-v", cwd=student)
    assert "def d2l_detach_dz_dx(ad):" not in quiet.stdout and "def d2l_detach_dz_dx(ad):" in verbose.stdout
    assert 'raise NotImplementedError("Task 1: implement Tensor.detach")' in verbose.stdout


@pytest.mark.parametrize("no_color", ["", "1"], ids=["colours", "NO_COLOR"])
def test_colours_on_a_terminal_unless_no_color(tmp_path, no_color):
    import pty
    student = tmp_path / "autodiff"
    shutil.copytree(EXERCISE, student)
    env = {**os.environ, "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    if no_color:
        env["NO_COLOR"] = no_color
    parent, child = pty.openpty()
    done = subprocess.run([*GRADER, "check"], cwd=student, stdin=child, stdout=child, stderr=child, env=env,
                          timeout=120)
    os.close(child)
    output = b""
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.close(parent)
    assert done.returncode == 1
    assert (b"\x1b[" in output) is (not no_color)
    lines = output.decode().replace("\r", "").splitlines()
    assert max(len(line) for line in lines if "\x1b" not in line) <= 100


def test_the_console_wraps_programs_tracebacks_and_prints_to_its_width_losing_nothing(tmp_path):
    for name in ("detach_returns_self", "engine_mul_backward_swapped", "tape_cleared_on_exit"):
        done = grader("check", "-v", str(BUGGY / f"{name}.py"), "--assignment", str(EXERCISE))
        assert max(map(len, done.stdout.splitlines())) <= 80, name   # not a terminal: 80 columns
    result = json.loads(grader("check", "--json", str(BUGGY / "detach_returns_self.py"), "--assignment",
                               str(EXERCISE)).stdout)
    program = next(s["program"] for s in result["scenarios"] if s["status"] != "passed" and s["program"]
                   and max(map(len, s["program"].splitlines())) > 73)   # a line that needs wrapping at 80
    console = grader("check", str(BUGGY / "detach_returns_self.py"), "--assignment", str(EXERCISE)).stdout
    assert "".join(program.split()) in "".join(console.split())
    # What a submission prints while it is imported: wrapped too, every character kept.
    printed = ", ".join(f"value_{n:03d}" for n in range(75))   # ~900 characters on one line
    (tmp_path / "autodiff.py").write_text(REFERENCE.read_text() + f"\nprint({printed!r})\n")
    done = grader("check", "-v", "autodiff.py", "--assignment", str(EXERCISE), cwd=tmp_path)   # -v: every line
    assert len(printed) > 800 and max(map(len, done.stdout.splitlines())) <= 80
    assert "".join(printed.split()) in "".join(done.stdout.split())
