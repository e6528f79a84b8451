"""Notebook submissions through the real CLI (``grader check``, ``grade``, ``gradescope-run``),
with real notebooks: the generated handout, notebooks made by make_notebook.py from the solution
and from each buggy fixture, and notebooks made by nbformat with IPython syntax, a syntax error,
a 5 MB image, a widget, another assignment's metadata, or no JSON at all."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("nbformat", reason="the notebook tests need the [notebook] extra (part of [test])")

import nbformat
from buggy_fixtures import BUGGY
from notebook_fixtures import dumps, notebook, widget_cell, with_image

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "autodiff"
SOLUTION = ROOT / "solutions" / "autodiff" / "autodiff.py"
README = (EXERCISE / "README.md").read_text()
# Fields that differ between two files of the same code: which file, its bytes, and how long it took.
FILE_FIELDS = {"submission", "submission_sha256", "timings", "warnings"}


def _make_notebook():
    spec = importlib.util.spec_from_file_location("make_notebook", ROOT / "solutions" / "make_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_notebook


make_notebook = _make_notebook()


def notebook_of(source: str) -> str:
    """The handout notebook's layout around ``source`` (a solution, a buggy variant)."""
    return make_notebook(source, README, SOLUTION.read_text())


def grader(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def check_json(path: Path, seed: int = 3) -> tuple[int, dict]:
    run = grader("check", "--json", "--seed", str(seed), "--assignment", str(EXERCISE), str(path))
    assert run.returncode in (0, 1), run.stderr
    return run.returncode, json.loads(run.stdout)


def same_code_fields(document: dict) -> dict:
    """A result without what depends on the file rather than the code (durations included)."""
    kept = {k: v for k, v in document.items() if k not in FILE_FIELDS}
    kept["scenarios"] = [{k: v for k, v in s.items() if k != "duration"} for s in document["scenarios"]]
    return kept


def solved_cells(*extra, assignment="autodiff") -> nbformat.NotebookNode:
    """The solution's notebook, with ``extra`` cells (a str is code) inserted after the first cell."""
    node = nbformat.reads(notebook_of(SOLUTION.read_text()), as_version=nbformat.NO_CONVERT)
    node.cells[1:1] = [notebook(cell).cells[0] if isinstance(cell, str) else cell for cell in extra]
    for index, cell in enumerate(node.cells):
        cell.id = cell.id if cell.id.startswith(("engine", "task", "intro", "how", "try", "check", "contract")) \
            else f"extra-{index}"
    if assignment != "autodiff":
        node.metadata["autodiff_grader"] = {"assignment": assignment}
    return node


@pytest.fixture
def folder(tmp_path):
    return tmp_path


# --------------------------------------------------------------------------- check

def test_the_handout_notebook_scores_0_as_the_handout_py(folder):
    code, notebook_result = check_json(EXERCISE / "autodiff.ipynb")
    _, py_result = check_json(EXERCISE / "autodiff.py")
    assert code == 1 and notebook_result["score"] == 0 and notebook_result["error"] is None
    assert [(s["id"], s["status"], s["feedback"]["summary"]) for s in notebook_result["scenarios"]] == \
        [(s["id"], s["status"], s["feedback"]["summary"]) for s in py_result["scenarios"]]
    assert notebook_result.get("warnings", []) == []


def test_a_solved_notebook_gets_full_marks_and_the_same_json_as_the_py(folder):
    path = folder / "autodiff.ipynb"
    path.write_text(notebook_of(SOLUTION.read_text()))
    code, notebook_result = check_json(path)
    _, py_result = check_json(SOLUTION)
    assert code == 0 and notebook_result["score"] == notebook_result["max_score"] == 55
    assert same_code_fields(notebook_result) == same_code_fields(py_result)
    assert notebook_result["submission"].endswith("autodiff.ipynb")


def test_ipython_syntax_and_d2l_tabs_are_dropped_with_a_warning_each(folder):
    path = folder / "autodiff.ipynb"
    path.write_bytes(dumps(solved_cells("!pip install d2l==1.0.3\n%matplotlib inline",
                                        "%%tab pytorch\nimport torch\nx = torch.arange(4.0, requires_grad=True)",
                                        "x = Tensor([1.0, 2.0], requires_grad=True)\nprint(x.detach())")))
    code, result = check_json(path)
    assert code == 0 and result["score"] == 55
    expected = ["autodiff.ipynb, cell 2, line 1: not graded: !pip install d2l==1.0.3",
                "autodiff.ipynb, cell 2, line 2: not graded: %matplotlib inline",
                "autodiff.ipynb, cell 3, lines 1-3: not graded: %%tab pytorch",
                "autodiff.ipynb, cell 4, line 1: not graded: x = Tensor([1.0, 2.0], requires_grad=True)",
                "autodiff.ipynb, cell 4, line 2: not graded: print(x.detach())"]
    assert [warning.split(" (")[0] for warning in result["warnings"]] == expected
    console = grader("check", "--assignment", str(EXERCISE), str(path))
    assert "5 parts of autodiff.ipynb are not graded (they run in Jupyter only):" in console.stdout
    unwrapped = " ".join(console.stdout.split())  # the console wraps to the screen's width
    for line in expected:
        assert f"- {line}" in unwrapped, console.stdout


def test_a_syntax_error_in_cell_7_is_reported_as_cell_7(folder):
    node = solved_cells(*[f"value_{n} = {n}" for n in range(5)], "def broken(x):\n    return (x +\n")
    assert node.cells[6].source.startswith("def broken")
    path = folder / "autodiff.ipynb"
    path.write_bytes(dumps(node))
    code, result = check_json(path)
    assert code == 1 and result["score"] == 0
    assert result["error"].startswith("autodiff.ipynb, cell 7, line 2: ")


def test_a_syntax_error_quotes_the_cells_own_line_wherever_the_grader_runs(folder):
    # CPython fills a SyntaxError's text by reading its file name from the disk: run in the
    # notebook's own folder, that read the .ipynb's JSON. The quoted line is the cell's, in the
    # console, the JSON error, Gradescope's results and the student's page alike.
    handout = nbformat.read(EXERCISE / "autodiff.ipynb", as_version=4)
    number = next(i for i, cell in enumerate(handout.cells, start=1) if cell.id == "task-1")
    lines = handout.cells[number - 1].source.splitlines()
    at = max(i for i, text in enumerate(lines, start=1) if "raise NotImplementedError" in text)
    broken = lines[at - 1].rstrip().removesuffix(")")
    handout.cells[number - 1].source = "\n".join([*lines[:at - 1], broken, *lines[at:]])
    work = folder / "work"
    shutil.copytree(EXERCISE, work)
    nbformat.write(handout, work / "autodiff.ipynb")
    expected = f"autodiff.ipynb, cell {number}, line {at}: '(' was never closed\n    {broken.strip()}\n    "
    console = grader("check", "autodiff.ipynb", cwd=work)
    assert expected in console.stdout.replace("\n       ", "\n    "), console.stdout
    result = json.loads(grader("check", "--json", "autodiff.ipynb", cwd=work).stdout)
    assert result["error"].startswith(expected), result["error"]
    # A .py beside another autodiff.py: the line is the checked file's.
    (folder / "elsewhere").mkdir()
    (folder / "elsewhere" / "autodiff.py").write_text("x = 1\ny = (\n")
    other = json.loads(grader("check", "--json", "--assignment", str(work), "elsewhere/autodiff.py",
                              cwd=folder).stdout)
    assert other["error"] == "autodiff.py, line 2: '(' was never closed\n    y = (\n        ^"
    # grade, run in the folder of the submissions: Gradescope's file and the student's page.
    (folder / "class").mkdir()
    nbformat.write(handout, folder / "class" / "alice.ipynb")
    out = folder / "out"
    done = grader("grade", ".", "--assignment", str(work), "--solutions", str(ROOT / "solutions" / "autodiff"),
                  "--out", str(out), "--format", "gradescope", cwd=folder / "class")
    assert done.returncode == 1, done.stderr
    expected = expected.replace("autodiff.ipynb", "alice.ipynb")
    gradescope = json.loads((out / "gradescope" / "alice.json").read_text())
    assert expected in gradescope["output"], gradescope["output"]
    assert grader("report", str(out), "--with-students").returncode == 0
    import html
    page = html.unescape((out / "students" / "alice.html").read_text())
    assert expected in page, page


def test_a_traceback_points_at_the_cell_and_line(folder):
    source = SOLUTION.read_text().replace("        return Tensor(self.data)   #",
                                          "        return 1 / 0   #")
    path = folder / "autodiff.ipynb"
    path.write_text(notebook_of(source))
    _, result = check_json(path)
    task = nbformat.read(path, as_version=4).cells
    number = next(i for i, cell in enumerate(task, start=1) if cell.id == "task-1")
    line = next(i for i, text in enumerate(task[number - 1].source.splitlines(), start=1) if "1 / 0" in text)
    traceback = next(s["feedback"]["traceback"] for s in result["scenarios"] if s["id"] == "d2l_detach_dz_dx")
    assert f'File "autodiff.ipynb", cell {number}, line {line}, in detach' in traceback
    assert 'File "autodiff.py"' not in traceback


def test_a_timeout_points_at_the_cell_and_line_where_the_code_was(folder):
    source = SOLUTION.read_text().replace("        return Tensor(self.data)   #",
                                          "        while True:\n            self.data.sum()\n        return 0   #")
    path = folder / "autodiff.ipynb"
    path.write_text(notebook_of(source))
    _, result = check_json(path)
    task = nbformat.read(path, as_version=4).cells
    number = next(i for i, cell in enumerate(task, start=1) if cell.id == "task-1")
    line = next(i for i, text in enumerate(task[number - 1].source.splitlines(), start=1) if "self.data.sum()" in text)
    timed_out = next(s for s in result["scenarios"] if s["id"] == "d2l_detach_dz_dx")
    assert timed_out["status"] == "timeout"
    assert f'File "autodiff.ipynb", cell {number}, line {line}, in detach' in timed_out["feedback"]["traceback"]


def test_outputs_holding_a_5_mb_image_do_not_count_against_the_limit(folder):
    node = solved_cells(with_image("y = 1", megabytes=5))
    path = folder / "autodiff.ipynb"
    path.write_bytes(dumps(node))
    assert path.stat().st_size > 5_000_000
    code, result = check_json(path)
    assert code == 0 and result["score"] == 55


def test_a_widget_cell_is_dropped_and_nothing_hangs(folder):
    path = folder / "autodiff.ipynb"
    path.write_bytes(dumps(solved_cells(widget_cell())))
    code, result = check_json(path)
    assert code == 0 and result["score"] == 55 and len(result["warnings"]) == 4


@pytest.mark.parametrize("content, message", [
    (b"import numpy as np\n", "autodiff.ipynb is not a Jupyter notebook: it is not JSON"),
    (b'{"cells": []}', "autodiff.ipynb is JSON but not a Jupyter notebook"),
    (json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": []}).encode(),
     "autodiff.ipynb is a version 3 notebook"),
])
def test_files_that_are_not_notebooks_we_read_are_refused_clearly(folder, content, message):
    path = folder / "autodiff.ipynb"
    path.write_bytes(content)
    code, result = check_json(path)
    assert code == 1 and result["score"] == 0 and result["error"].startswith(message)
    console = grader("check", "--assignment", str(EXERCISE), str(path))
    assert message in console.stdout and console.returncode == 1


def test_another_assignments_notebook_is_refused(folder):
    path = folder / "autodiff.ipynb"
    path.write_bytes(dumps(solved_cells(assignment="linreg")))
    code, result = check_json(path)
    assert code == 1 and "is the notebook of the assignment 'linreg', not of 'autodiff'" in result["error"]


def test_checking_a_py_never_imports_nbformat_nor_the_notebook_reader(folder):
    probe = ("import sys\nsys.argv = ['grader', 'check', '--json', {path!r}, '--assignment', {exercise!r}]\n"
             "try:\n    from grader.cli import main\n    main()\nexcept SystemExit as done:\n"
             "    print('exit', done.code)\n"
             "loaded = [m for m in ('nbformat', 'fastjsonschema', 'grader.formats.notebook') if m in sys.modules]\n"
             "print(loaded or 'CLEAN')\n")
    run = subprocess.run([sys.executable, "-c", probe.format(path=str(SOLUTION), exercise=str(EXERCISE))],
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.stdout.strip().endswith("exit 0\nCLEAN"), run.stdout[-300:] + run.stderr


# --------------------------------------------------------------------------- grade and Gradescope

def test_grade_a_canvas_folder_mixing_py_and_ipynb_gives_each_pair_the_same_outcome(folder):
    """Every buggy fixture, the reference and the stub, each handed in once as a .py and once as
    a notebook of the same code, Canvas-named: the same scores, statuses and misconceptions."""
    submissions = folder / "canvas"
    submissions.mkdir()
    sources = {"reference": SOLUTION.read_text(), "stub": (EXERCISE / "autodiff.py").read_text(),
               **{path.stem: path.read_text() for path in sorted(BUGGY.glob("*.py"))}}
    pairs = {}
    for index, (name, source) in enumerate(sources.items()):
        py, nb = f"py{index}_{1000 + index}", f"nb{index}_{2000 + index}"
        (submissions / f"py{index}_{1000 + index}_{5000 + index}_autodiff.py").write_text(source)
        late = "_late" if index % 3 == 0 else ""
        (submissions / f"nb{index}{late}_{2000 + index}_{6000 + index}_autodiff.ipynb").write_text(notebook_of(source))
        pairs[name] = (py, nb)
    out = folder / "out"
    run = grader("grade", str(submissions), "--assignment", str(EXERCISE), "--out", str(out), "-j", "2",
                 "--seed", "11")
    if not list((out / "results").glob("nb*.json")):
        pytest.skip("grader/discovery.py does not find .ipynb submissions yet (its rewrite is another branch's)")
    assert run.returncode == 0, run.stdout + run.stderr
    for name, (py, nb) in pairs.items():
        py_result = json.loads((out / "results" / f"{py}.json").read_text())
        nb_result = json.loads((out / "results" / f"{nb}.json").read_text())
        outcome = [(s["id"], s["status"], s["points"], s["feedback"]["misconception"]) for s in py_result["scenarios"]]
        assert outcome == [(s["id"], s["status"], s["points"], s["feedback"]["misconception"])
                           for s in nb_result["scenarios"]], name
        assert nb_result["score"] == py_result["score"], name
    gradebook = (out / "gradebook.csv").read_text()
    assert gradebook.count("\n") == 1 + 2 * len(sources)


def test_gradescope_run_grades_an_uploaded_notebook(folder):
    root = folder / "autograder"
    (root / "source").mkdir(parents=True)
    shutil.copytree(EXERCISE, root / "source" / "assignment")
    shutil.copytree(ROOT / "solutions" / "autodiff", root / "source" / "solutions")
    (root / "submission").mkdir()
    (root / "submission" / "autodiff.ipynb").write_text(notebook_of(SOLUTION.read_text()))
    run = subprocess.run([sys.executable, "-m", "grader", "gradescope-run", "--root", str(root)], capture_output=True,
                         text=True, timeout=300, check=False, env={**os.environ})
    assert run.returncode == 0, run.stderr
    document = json.loads((root / "results" / "results.json").read_text())
    assert document["score"] == 100


def test_a_changed_provided_engine_is_named_by_cell(folder):
    source = (BUGGY / "engine_mul_backward_swapped.py").read_text()
    path = folder / "autodiff.ipynb"
    path.write_text(notebook_of(source))
    _, result = check_json(path)
    cells = nbformat.read(path, as_version=4).cells
    number = next(i for i, cell in enumerate(cells, start=1) if cell.id == "engine-tensor")
    [change] = result["provided_changes"]
    assert change["name"] == "Tensor.__mul__" and change["where"].startswith(f"cell {number}, lines ")
    console = grader("check", "--assignment", str(EXERCISE), str(path))
    assert f"You changed the provided engine: `Tensor.__mul__` (cell {number}, lines " in console.stdout
    _, py_result = check_json(BUGGY / "engine_mul_backward_swapped.py")
    assert [c["name"] for c in py_result["provided_changes"]] == ["Tensor.__mul__"]
    assert py_result["provided_changes"][0]["where"] is None


def test_an_assignment_may_grade_every_cell_of_a_notebook(folder):
    # A cell that computes module state with a call: by default a demonstration (dropped, with a
    # warning); with notebook_cells: all in assignment.yaml, it runs as in Jupyter's Run All.
    exercise = folder / "exercise"
    shutil.copytree(EXERCISE, exercise)
    path = folder / "autodiff.ipynb"
    path.write_text(nbformat.writes(solved_cells("print('hello from a demonstration cell')")))
    default = grader("check", "--json", "--seed", "3", "--assignment", str(exercise), str(path))
    assert any("hello" in warning for warning in json.loads(default.stdout)["warnings"])
    spec = exercise / "assignment.yaml"
    spec.write_text(spec.read_text() + "notebook_cells: all\n")
    every = grader("check", "--json", "--seed", "3", "--assignment", str(exercise), str(path))
    result = json.loads(every.stdout)
    assert not any("hello" in warning for warning in result["warnings"])
    assert "hello from a demonstration cell" in result["import_stdout"] and result["score"] == 55
    spec.write_text(spec.read_text().replace("notebook_cells: all", "notebook_cells: some"))
    wrong = grader("check", "--assignment", str(exercise), str(path))
    assert wrong.returncode == 2 and "notebook_cells: must be definitions or all, got 'some'" in wrong.stderr


def test_without_nbformat_the_error_gives_a_pip_command_that_works_where_it_is_printed(folder):
    # An environment with the grader and everything else of this one but nbformat and fastjsonschema
    # (a .pth to a folder of links): what a student who installed the grader without the extra has.
    packages = Path(sysconfig.get_paths()["purelib"])
    visible = folder / "visible"
    visible.mkdir()
    for entry in packages.iterdir():
        if not entry.name.lower().startswith(("nbformat", "fastjsonschema")):
            (visible / entry.name).symlink_to(entry)
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "visible.pth").write_text(f"{visible}\n")
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTHON", "VIRTUAL_ENV"))}
    path = folder / "autodiff.ipynb"
    path.write_text(notebook_of(SOLUTION.read_text()))
    command = [str(venv / "bin" / "python"), "-m", "grader", "check", "--assignment", str(EXERCISE), str(path)]
    refused = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    prefix = "Error: reading a notebook needs nbformat, which is not installed: "
    assert refused.stderr.startswith(prefix), refused.stderr
    printed = refused.stderr.strip()[len(prefix):]
    assert printed.startswith(f"{venv / 'bin' / 'python'} -m pip install 'nbformat>=")
    installed = subprocess.run(printed, shell=True, capture_output=True, text=True, env=env, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    checked = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
