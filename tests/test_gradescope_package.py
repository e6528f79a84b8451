"""The Gradescope autograder zip, end to end: build it, install it like Gradescope, grade with it."""

from __future__ import annotations

import email.parser
import importlib.util
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import jsonschema
import pytest

import grader
from grader.gradescope_package import GRADER_OVERHEAD_MB, SETUP_SH, assignment_seed, container_memory_mb, memory_notes
from grader.loading import load_assignment

ROOT = Path(__file__).parent.parent
SCHEMA = json.loads((ROOT / "tests" / "schemas" / "gradescope_results.schema.json").read_text())


@pytest.fixture(scope="module")
def autograder(tmp_path_factory) -> dict:
    """The zip built by the real CLI, unpacked as Gradescope lays it out, and installed by its own
    setup.sh into a fresh virtual environment as on Gradescope: pip resolves the wheel with its
    notebook extra and takes every dependency from the package registry (pip's cache makes a rerun
    quick). Nothing of this environment's packages is visible there."""
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
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHON"] = str(python)
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True,
                           cwd=work, timeout=600)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "does not provide the extra" not in setup.stdout + setup.stderr, setup.stdout + setup.stderr
    return {"archive": archive, "root": root, "python": python, "env": env}


def solved_notebook(folder: Path) -> Path:
    """The reference solution as the handout notebook (solutions/make_notebook.py makes both)."""
    spec = importlib.util.spec_from_file_location("make_notebook", ROOT / "solutions" / "make_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = folder / "solved.ipynb"
    path.write_text(module.make_notebook((ROOT / "solutions" / "autodiff" / "autodiff.py").read_text(),
                                         (ROOT / "exercises" / "autodiff" / "README.md").read_text(),
                                         (ROOT / "solutions" / "autodiff" / "autodiff.py").read_text()))
    return path


def run_autograder(autograder: dict, submission: Path | None, *names: str,
                   command: list[str] | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """Lay ``submission`` out as Gradescope does (as autodiff.py, or under each of ``names``), run
    ``run_autograder`` (or ``command``), and read results.json."""
    root = autograder["root"]
    shutil.rmtree(root / "submission", ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    (root / "submission").mkdir()
    (root / "results").mkdir()
    for name in (names or ("autodiff.py",)) if submission is not None else ():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(submission, root / "submission" / name)
    env = {**autograder["env"], "GRADER_AUTOGRADER_ROOT": str(root)}
    done = subprocess.run(command or [str(root / "source" / "run_autograder")], env=env, capture_output=True,
                          text=True, timeout=300, cwd=root)
    return done, json.loads((root / "results" / "results.json").read_text())


def test_the_zip_holds_what_gradescope_needs_and_no_solution(autograder):
    names = zipfile.ZipFile(autograder["archive"]).namelist()
    assert {"setup.sh", "run_autograder", "assignment/assignment.yaml", "solutions/hidden.yaml"} <= set(names)
    assert any(name.startswith("wheels/autodiff_grader-") and name.endswith(".whl") for name in names)
    assert not any(name.endswith("/autodiff.py") for name in names), "the reference solution must not ship"


def test_the_installed_grader_comes_from_the_wheel_with_its_notebook_extra(autograder):
    probe = ("import grader, importlib.metadata as m, nbformat, fastjsonschema\n"
             "print(grader.__file__)\nprint(m.metadata('autodiff-grader').get_all('Provides-Extra'))")
    where, extras = subprocess.run([str(autograder["python"]), "-c", probe], capture_output=True, text=True,
                                   check=True, cwd=autograder["root"], env=autograder["env"]).stdout.splitlines()
    assert where.startswith(str(autograder["python"].parent.parent))
    assert "'notebook'" in extras and "'jupyter'" in extras
    # The wheel's metadata is the installed distribution's own: one list of dependencies, extras included.
    bundle = zipfile.ZipFile(autograder["archive"])
    wheel = zipfile.ZipFile(io.BytesIO(bundle.read(next(n for n in bundle.namelist() if n.endswith(".whl")))))
    metadata = wheel.read(f"autodiff_grader-{grader.__version__}.dist-info/METADATA").decode()
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    headers = email.parser.HeaderParser().parsestr(metadata)
    assert headers.get_all("Provides-Extra") == list(declared["optional-dependencies"])
    assert headers.get_all("Requires-Dist") == [*declared["dependencies"], *(
        f'{requirement}; extra == "{extra}"' for extra, requirements in declared["optional-dependencies"].items()
        for requirement in requirements)]


def test_an_uploaded_notebook_is_graded(autograder):
    done, results = run_autograder(autograder, solved_notebook(autograder["root"].parent), "autodiff.ipynb")
    assert done.returncode == 0, done.stderr
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 100, results["output"]


def test_reference_solution_gets_full_marks(autograder):
    done, results = run_autograder(autograder, ROOT / "solutions" / "autodiff" / "autodiff.py")
    assert done.returncode == 0, done.stderr
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 100
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}
    # What a student sees before publication (the output; Gradescope hides the total) omits hidden points.
    assert results["output"].startswith("Public scenarios: 55/55 points, 8 of 8 passed (and 9 of 9 checks worth no "
                                        "points).")
    assert "100" not in results["output"]


def test_stub_gets_zero_with_feedback(autograder):
    done, results = run_autograder(autograder, ROOT / "exercises" / "autodiff" / "autodiff.py")
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0
    assert any("not implemented yet" in t["output"] for t in results["tests"])


def test_missing_submission_still_writes_valid_results(autograder):
    done, results = run_autograder(autograder, None)
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0 and "No autodiff.py was found" in results["output"]


def test_regrades_reproduce_the_inputs_the_seed_comes_from_the_assignment(autograder):
    first, results = run_autograder(autograder, ROOT / "exercises" / "autodiff" / "autodiff.py")
    _, again = run_autograder(autograder, ROOT / "exercises" / "autodiff" / "autodiff.py")
    assignment = load_assignment(autograder["root"] / "source" / "assignment",
                                 hidden=autograder["root"] / "source" / "solutions")
    seed = assignment_seed(assignment)
    assert results["extra_data"]["seed"] == again["extra_data"]["seed"] == seed
    assert f"Seed {seed} (derived from the assignment digest)" in first.stdout
    assert [t["output"] for t in results["tests"]] == [t["output"] for t in again["tests"]]
    python = str(autograder["python"])
    _, configured = run_autograder(autograder, ROOT / "exercises" / "autodiff" / "autodiff.py",
                                   command=[python, "-m", "grader", "gradescope-run", "--root",
                                            str(autograder["root"]), "--seed", "77"])
    assert configured["extra_data"]["seed"] == 77


def test_the_submission_is_found_as_grade_finds_it(autograder):
    _, results = run_autograder(autograder, ROOT / "solutions" / "autodiff" / "autodiff.py", "Autodiff.PY")
    assert results["score"] == 100
    _, results = run_autograder(autograder, ROOT / "solutions" / "autodiff" / "autodiff.py",
                                "autodiff.py", "autodiff (1).py")
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"] == ("More than one file in your submission could be autodiff.py (autodiff (1).py, "
                                 "autodiff.py). Submit only one, named autodiff.py.")
    _, results = run_autograder(autograder, ROOT / "solutions" / "autodiff" / "autodiff.py", "notes.txt")
    assert results["output"] == ("No autodiff.py was found in your submission (you submitted: notes.txt). "
                                 "Upload a file named autodiff.py.")


def package(tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "gradescope-package", "--assignment",
                           str(ROOT / "exercises" / "autodiff"), "--out", str(tmp_path / "autograder.zip"), *options],
                          capture_output=True, text=True)


def test_run_autograder_passes_the_options_and_the_package_says_what_memory_it_needs(tmp_path, autograder):
    text = zipfile.ZipFile(autograder["archive"]).read("run_autograder").decode()
    assert "--hidden-visibility after_published" in text and "--seed" not in text
    done = package(tmp_path, "--seed", "1234", "--hidden-visibility", "after_due_date")
    assert done.returncode == 0, done.stderr
    text = zipfile.ZipFile(tmp_path / "autograder.zip").read("run_autograder").decode()
    assert "--hidden-visibility after_due_date --seed 1234" in text
    assert (f"Raise the container's memory to at least {1024 + GRADER_OVERHEAD_MB} MB in the assignment's "
            "Autograder Settings on Gradescope") in done.stdout
    refused = package(tmp_path, "--hidden-visibility", "hidden")
    assert refused.returncode == 2
    assert refused.stderr.startswith("Error: --hidden-visibility hidden would show students, before publication, "
                                     "a total that includes the hidden scenarios' 45 points")


def test_setup_updates_apt_before_installing_and_shows_pips_errors():
    lines = SETUP_SH.splitlines()
    assert lines.index("    apt-get update") < lines.index("    apt-get install -y --no-install-recommends python3-pip")
    assert "2>/dev/null" not in SETUP_SH.split("apt-get install")[1] and "||" not in SETUP_SH.split("fi\n")[-1]


def test_setup_runs_apt_get_update_then_install_when_pip_is_missing(tmp_path, autograder):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, capture_output=True)
    tools = tmp_path / "bin"
    tools.mkdir()
    log = tmp_path / "apt.log"
    (tools / "apt-get").write_text(f"#!/bin/sh\necho \"$*\" >> {log}\n")  # records, installs nothing
    (tools / "apt-get").chmod(0o755)
    env = {**os.environ, "PYTHON": str(bare / "bin" / "python"), "PATH": f"{tools}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(autograder["root"] / "source" / "setup.sh")], env=env, capture_output=True,
                          text=True)
    assert log.read_text().splitlines() == ["update", "install -y --no-install-recommends python3-pip"]
    assert done.returncode != 0 and "No module named pip" in done.stderr  # pip's own error, shown


def test_setup_shows_why_pip_failed(tmp_path, autograder):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    env = {**os.environ, "PYTHON": str(venv / "bin" / "python"), "PIP_NO_INDEX": "1"}  # no numpy to be had
    done = subprocess.run(["bash", str(autograder["root"] / "source" / "setup.sh")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0
    assert "No matching distribution found" in done.stderr, done.stderr


def test_container_memory_is_read_from_the_cgroup(tmp_path):
    v2, v1, free, none = (tmp_path / name for name in ("v2", "v1", "free", "none"))
    (v2 / "memory.max").parent.mkdir(parents=True)
    (v2 / "memory.max").write_text(f"{768 * 2**20}\n")
    (v1 / "memory").mkdir(parents=True)
    (v1 / "memory" / "memory.limit_in_bytes").write_text(f"{1536 * 2**20}\n")
    free.mkdir()
    (free / "memory.max").write_text("max\n")
    assert [container_memory_mb(path) for path in (v2, v1, free, none)] == [768, 1536, None, None]
    assignment = load_assignment(ROOT / "exercises" / "autodiff")
    assert memory_notes(assignment, container_mb=2048) == []
    assert "at most 640 in assignment.yaml" in memory_notes(assignment, container_mb=768)[0]


def scratch_root(tmp_path: Path, submission: Path) -> Path:
    """A Gradescope-like root laid out by hand: the exercise, its solutions, one uploaded file."""
    root = tmp_path / "autograder"
    shutil.copytree(ROOT / "exercises" / "autodiff", root / "source" / "assignment")
    shutil.copytree(ROOT / "solutions" / "autodiff", root / "source" / "solutions")
    (root / "submission").mkdir(parents=True)
    shutil.copy(submission, root / "submission" / f"autodiff{submission.suffix}")
    return root


def gradescope_run(root: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "gradescope-run", "--root", str(root)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, **env})


def test_a_run_that_cannot_grade_still_writes_results_that_say_why(tmp_path):
    # nbformat missing where the notebook is graded (a package built without the extra): it says so.
    shadow = tmp_path / "shadow" / "nbformat"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('nbformat is not installed here')\n")
    root = scratch_root(tmp_path / "missing-extra", solved_notebook(tmp_path))
    done = gradescope_run(root, PYTHONPATH=str(shadow.parent))
    assert done.returncode == 0, done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith("The autograder could not grade this submission: reading a notebook "
                                        "needs nbformat, which is not installed")
    assert "Error: reading a notebook needs nbformat" in done.stdout   # the instructor's log
    # An assignment that does not load: the spec error, for the student and in the log.
    root = scratch_root(tmp_path / "broken-spec", ROOT / "solutions" / "autodiff" / "autodiff.py")
    spec = root / "source" / "assignment" / "assignment.yaml"
    spec.write_text(spec.read_text().replace("time_limit", "time_limimt", 1))
    done = gradescope_run(root)
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    assert done.returncode == 0 and results["score"] == 0
    assert "The autograder could not grade this submission: " in results["output"]
    assert "time_limimt" in results["output"] and "time_limimt" in done.stdout
