"""``grader release`` through the real CLI: a sound handout is written, a leaky or unsound one refused."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "audit"


def grader(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture
def sound(tmp_path) -> Path:
    """A copy of the sound fixture (exercises/ and solutions/); returns its exercise folder."""
    shutil.copytree(FIXTURES / "sound", tmp_path / "sound")
    return tmp_path / "sound" / "exercises" / "sound"


def test_a_sound_assignment_is_released_as_its_exercise_folder(sound, tmp_path):
    (sound / "__pycache__").mkdir()
    (sound / "__pycache__" / "powers.cpython-311.pyc").write_bytes(b"cache")
    out = tmp_path / "handout.zip"
    done = grader("release", "--assignment", str(sound), "--out", str(out), "--seeds", "3", "-j", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no leak found, the reference is full on 3 seeds and the handout earns nothing" in done.stdout
    names = zipfile.ZipFile(out).namelist()
    assert names == ["sound/README.md", "sound/assignment.yaml", "sound/powers.py", "sound/scenarios.py"]
    assert zipfile.ZipFile(out).read("sound/powers.py") == (sound / "powers.py").read_bytes()


def plant_task_body(exercise: Path) -> str:
    handout = exercise / "powers.py"
    handout.write_text(handout.read_text().replace('    raise NotImplementedError("Task 2: implement cube")\n',
                                                   "    return (value *\n            value) * value   # mine\n")
                       .replace("def cube(x):", "def cube(value):"))
    return "powers.py:16: leaks the body of cube of the reference"


def plant_hidden_id(exercise: Path) -> str:
    scenarios = exercise / "scenarios.py"
    scenarios.write_text(scenarios.read_text() + "\n# the hidden cube_random checks more of the same\n")
    return "scenarios.py:32: leaks the id of hidden scenario cube_random"


def plant_solutions_file(exercise: Path) -> str:
    hidden = exercise.parent.parent / "solutions" / "sound" / "hidden_scenarios.py"
    (exercise / "more_scenarios.py").write_text("# practice material\n" + hidden.read_text().replace("    ", "  "))
    return "more_scenarios.py: leaks the file sound/hidden_scenarios.py of the solutions folder (the same code"


def plant_hidden_program(exercise: Path) -> str:
    scenarios = exercise / "scenarios.py"
    scenarios.write_text(scenarios.read_text() + "\n\ndef practice(mod, numbers):\n    found = []\n"
                                                 "    for n in numbers:\n        found.append(mod.square(n))\n"
                                                 "    return {'values': found}\n")
    return "scenarios.py:34: leaks the program of a hidden scenario"


@pytest.mark.parametrize("plant", [plant_task_body, plant_hidden_id, plant_solutions_file, plant_hidden_program])
def test_a_planted_leak_refuses_the_release_and_is_named(sound, tmp_path, plant):
    expected = plant(sound)
    out = tmp_path / "handout.zip"
    done = grader("release", "--assignment", str(sound), "--out", str(out), "--seeds", "2", "-j", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"Refused: {out} was not written." in done.stderr
    assert expected in done.stderr, done.stderr
    assert not out.exists()


def test_an_unsound_rubric_is_refused_with_the_audit_s_reasons(tmp_path):
    out = tmp_path / "handout.zip"
    done = grader("release", "--assignment", str(FIXTURES / "weak" / "exercises" / "weak"), "--out", str(out),
                  "-j", "2")
    assert done.returncode == 1
    assert "audit: scenario quadruple_random_flaky's verdict on the reference changes with the seed" in done.stderr
    assert "audit: the handout, as students receive it, earns 1 point in scenario version_is_set" in done.stderr
    assert not out.exists()
