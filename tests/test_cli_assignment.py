"""The autodiff assignment through the real ``grader`` CLI: reference, stub, every buggy fixture."""

from __future__ import annotations

import json
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
    assert "Score: 55/55 points, 17 of 17 scenarios passed" in done.stdout


def test_check_on_the_stub_says_not_implemented_for_each_task(tmp_path):
    student = tmp_path / "autodiff"
    shutil.copytree(EXERCISE, student)
    done = grader("check", cwd=student)  # as a student runs it: inside the exercise folder
    assert done.returncode == 1
    assert "Score: 0/55 points" in done.stdout
    assert done.stdout.count("ERROR: not implemented yet: Task") == 8  # every task scenario
    assert "not implemented yet: Task 1: implement Tensor.detach" in done.stdout
    assert "not implemented yet: Task 2: implement GradientTape._take_records_for_call" in done.stdout


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
                         [c["name"] for c in result["provided_changes"]])
