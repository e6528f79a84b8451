"""The Gradescope autograder zip, end to end: build it, install it like Gradescope, grade with it."""

from __future__ import annotations

import json
import os
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).parent.parent
SCHEMA = json.loads((ROOT / "tests" / "schemas" / "gradescope_results.schema.json").read_text())


@pytest.fixture(scope="module")
def autograder(tmp_path_factory) -> dict:
    """The zip built by the real CLI, unpacked as Gradescope lays it out, installed by its setup.sh
    into a fresh virtual environment (the dependencies come from this environment, offline)."""
    work = tmp_path_factory.mktemp("gradescope")
    archive = work / "autograder.zip"
    subprocess.run([sys.executable, "-m", "grader", "gradescope-package", "--assignment",
                    str(ROOT / "exercises" / "autodiff"), "--out", str(archive)], check=True, capture_output=True)
    root = work / "autograder"
    with zipfile.ZipFile(archive) as bundle:
        bundle.extractall(root / "source")
        for info in bundle.infolist():  # zipfile does not restore permissions
            mode = info.external_attr >> 16
            if mode & stat.S_IXUSR:
                os.chmod(root / "source" / info.filename, mode & 0o777)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    here = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    Path(purelib, "outer-dependencies.pth").write_text("\n".join(sorted(here)) + "\n")
    env = {**os.environ, "PYTHON": str(python), "PIP_NO_INDEX": "1"}
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True,
                           cwd=work)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    return {"archive": archive, "root": root, "python": python, "env": env}


def run_autograder(autograder: dict, submission: Path | None) -> tuple[subprocess.CompletedProcess, dict]:
    root = autograder["root"]
    shutil.rmtree(root / "submission", ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    (root / "submission").mkdir()
    (root / "results").mkdir()
    if submission is not None:
        shutil.copy(submission, root / "submission" / "autodiff.py")
    env = {**autograder["env"], "GRADER_AUTOGRADER_ROOT": str(root)}
    done = subprocess.run([str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                          timeout=300, cwd=root)
    return done, json.loads((root / "results" / "results.json").read_text())


def test_the_zip_holds_what_gradescope_needs_and_no_solution(autograder):
    names = zipfile.ZipFile(autograder["archive"]).namelist()
    assert {"setup.sh", "run_autograder", "assignment/assignment.yaml", "solutions/hidden.yaml"} <= set(names)
    assert any(name.startswith("wheels/autodiff_grader-") and name.endswith(".whl") for name in names)
    assert not any(name.endswith("/autodiff.py") for name in names), "the reference solution must not ship"


def test_the_installed_grader_comes_from_the_wheel(autograder):
    where = subprocess.run([str(autograder["python"]), "-c", "import grader; print(grader.__file__)"],
                           capture_output=True, text=True, check=True, cwd=autograder["root"]).stdout
    assert str(autograder["python"].parent.parent) in where


def test_reference_solution_gets_full_marks(autograder):
    done, results = run_autograder(autograder, ROOT / "solutions" / "autodiff" / "autodiff.py")
    assert done.returncode == 0, done.stderr
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 100
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}


def test_stub_gets_zero_with_feedback(autograder):
    done, results = run_autograder(autograder, ROOT / "exercises" / "autodiff" / "autodiff.py")
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0
    assert any("not implemented yet" in t["output"] for t in results["tests"])


def test_missing_submission_still_writes_valid_results(autograder):
    done, results = run_autograder(autograder, None)
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0 and "No autodiff.py was found" in results["output"]
