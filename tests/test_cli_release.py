"""``grader release`` through the real CLI: a sound handout is written, a leaky or unsound one refused."""

from __future__ import annotations

import json
import os
import re
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
    wheel = f"autodiff_grader-{grader_version()}-py3-none-any.whl"
    assert names == ["sound/README.md", "sound/assignment.yaml", f"sound/{wheel}", "sound/powers.py",
                     "sound/scenarios.py"]
    assert zipfile.ZipFile(out).read("sound/powers.py") == (sound / "powers.py").read_bytes()
    readme = zipfile.ZipFile(out).read("sound/README.md").decode()
    original = (sound / "README.md").read_text()
    assert readme.startswith(original.rstrip() + "\n\n## Installing the grader\n")   # no section: at its end
    assert f'python3 -m venv .venv && .venv/bin/python -m pip install "./{wheel}[notebook]"' in readme


def grader_version() -> str:
    import grader as package
    return package.__version__


def test_a_student_installs_the_grader_from_the_handout_with_its_readme_command(tmp_path):
    # The real handout, unpacked as a student gets it; the one command its README gives, run as it is
    # written (in a fresh venv, every package from the registry); then grader check, there, on the
    # notebook: the installed grader, not this one, reads it. And GitHub Classroom's workflow's
    # grading step, with that grader, read back as the reporter reads it.
    out = tmp_path / "handout.zip"
    done = grader("release", "--assignment", str(ROOT / "exercises" / "autodiff"), "--out", str(out), "--seeds",
                  "1", "-j", "2", "--github-classroom")
    assert done.returncode == 0, done.stdout + done.stderr
    zipfile.ZipFile(out).extractall(tmp_path)
    handout = tmp_path / "autodiff"
    readme = (handout / "README.md").read_text()
    section = readme[readme.index("## Installing the grader"):readme.index("\n## ", readme.index("## Installing") + 3)]
    [command] = re.findall(r"```sh\n(.+?)\n```", section)
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTHON", "VIRTUAL_ENV"))}
    installed = subprocess.run(command, shell=True, cwd=handout, capture_output=True, text=True, env=env,
                               timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "does not provide the extra" not in installed.stdout + installed.stderr
    checked = subprocess.run([str(handout / ".venv" / "bin" / "grader"), "check", "autodiff.ipynb"], cwd=handout,
                             capture_output=True, text=True, env=env, timeout=300)
    assert checked.returncode == 1, checked.stdout + checked.stderr   # the stub: nothing done yet
    assert "Checking autodiff.ipynb against the public scenarios" in checked.stdout
    assert "TODO" in checked.stdout and "Error" not in checked.stderr
    assert "Every push to your repository also runs `grader check autodiff.py` on GitHub" in readme
    run_the_classroom_workflow(handout, env)


def run_the_classroom_workflow(handout: Path, env: dict) -> None:
    """The workflow's structure, its install step naming the handout's wheel, and its grading step run
    (the venv's grader first on PATH, as setup-python's is) with the reporter's reading of its output."""
    import base64

    import yaml
    workflow = yaml.safe_load((handout / ".github" / "workflows" / "classroom.yml").read_text())
    assert set(workflow) == {"name", "on", "permissions", "jobs"} and "push" in workflow["on"]
    assert workflow["permissions"]["checks"] == "write"
    job = workflow["jobs"]["run-autograding-tests"]   # the check run the reporter posts the points on
    steps = job["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and steps[1]["uses"].startswith("actions/setup-python@")
    [wheel] = [path.name for path in handout.glob("autodiff_grader-*.whl")]
    assert steps[2]["run"] == f'python -m pip install "./{wheel}[notebook]"'
    check, reporter = steps[3], steps[4]
    assert check["id"] == "autodiff" and check["continue-on-error"] is True
    assert check["run"] == "grader check autodiff.py --format github-classroom"
    assert reporter["uses"] == "education/autograding-grading-reporter@v1"
    assert reporter["with"] == {"runners": "autodiff"}
    assert reporter["env"] == {"AUTODIFF_RESULTS": "${{ steps.autodiff.outputs.result }}"}
    outputs = handout / "github-output"
    outputs.touch()
    step_env = {**env, "GITHUB_OUTPUT": str(outputs), "PATH": f"{handout / '.venv' / 'bin'}:{env['PATH']}"}
    ran = subprocess.run(check["run"], shell=True, cwd=handout, capture_output=True, text=True, env=step_env,
                         timeout=300)
    assert ran.returncode == 1 and "Score: 0/55 points" in ran.stdout, ran.stdout + ran.stderr
    outputs_set = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    # The reporter's environment, as the workflow maps it (a GitHub expression: the step's output).
    environment = {name: outputs_set["result"] for name in reporter["env"]}
    # tests/test_report_github_classroom.py restates how the reporter reads it (src/main.js).
    results = json.loads(base64.b64decode(environment["AUTODIFF_RESULTS"]).decode("utf-8"))
    assert results["status"] == "fail" and results["max_score"] == 55
    assert sum(test["score"] for test in results["tests"]) == 0 and len(results["tests"]) == 8


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
