"""The handout notebook is generated from the handout and holds the same engine as autodiff.py.

The notebooks' modules are run in subprocesses only (the stub's, as test_exercise_files.py does).
"""

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("nbformat", reason="the notebook tests need the [notebook] extra (part of [test])")

import nbformat

from grader.formats.notebook import read_notebook

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "autodiff"
NOTEBOOK = EXERCISE / "autodiff.ipynb"
STUB = EXERCISE / "autodiff.py"
SOLUTION = ROOT / "solutions" / "autodiff" / "autodiff.py"

# What a module exposes, printed as JSON: every public function and class, and each class's
# functions, with signature, docstring and qualified name.
SURFACE = textwrap.dedent("""
    import inspect, json, sys
    namespace = {"__name__": "autodiff"}
    exec(compile(sys.stdin.read(), "autodiff.py", "exec"), namespace)
    surface = {}
    for name, value in namespace.items():
        if name.startswith("__") or not (inspect.isfunction(value) or inspect.isclass(value)):
            continue
        if inspect.isfunction(value) and value.__qualname__ != name:
            continue  # a method attached with add_to_class: listed under its class
        if name == "add_to_class":
            continue  # the notebook's helper for growing a class across cells
        surface[name] = [str(inspect.signature(value)) if inspect.isfunction(value) else "class", inspect.getdoc(value)]
        for attribute, member in vars(value).items() if inspect.isclass(value) else ():
            if inspect.isfunction(member):
                surface[f"{name}.{attribute}"] = [str(inspect.signature(member)), inspect.getdoc(member),
                                                  member.__qualname__]
    print(json.dumps(surface, sort_keys=True))
""")


def load_make_notebook():
    spec = importlib.util.spec_from_file_location("make_notebook", ROOT / "solutions" / "make_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def surface(source: str) -> dict:
    run = subprocess.run([sys.executable, "-c", SURFACE], input=source, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def notebook_module(data: bytes):
    return read_notebook(data, "autodiff.ipynb", assignment="autodiff")


def test_committed_notebook_is_generated_from_the_handout():
    expected = load_make_notebook().make_notebook(STUB.read_text(), (EXERCISE / "README.md").read_text(),
                                                  SOLUTION.read_text())
    assert NOTEBOOK.read_text() == expected, (
        "exercises/autodiff/autodiff.ipynb is out of date: run python solutions/make_notebook.py")


def test_the_notebook_is_valid_and_names_its_assignment():
    node = nbformat.read(NOTEBOOK, as_version=nbformat.NO_CONVERT)
    nbformat.validate(node)
    assert node.metadata["autodiff_grader"] == {"assignment": "autodiff"}
    ids = [cell.id for cell in node.cells]
    assert ids[ids.index("engine-tensor"):] [:2] == ["engine-tensor", "task-1-text"]
    assert {"task-1", "task-2"} <= set(ids)


def test_each_task_has_its_own_cell_and_no_other_cell_holds_a_task():
    node = nbformat.read(NOTEBOOK, as_version=nbformat.NO_CONVERT)
    for cell in (c for c in node.cells if c.cell_type == "code"):
        for task in ("1", "2"):
            holds = f'NotImplementedError("Task {task}:' in cell.source
            assert holds == (cell.id == f"task-{task}"), cell.id


def test_the_notebooks_module_has_the_engine_of_autodiff_py_and_nothing_left_out():
    module = notebook_module(NOTEBOOK.read_bytes())
    assert module.dropped == ()
    assert surface(module.text) == surface(STUB.read_text())


def test_a_notebook_made_from_the_solution_has_the_solutions_engine():
    make = load_make_notebook()
    solved = make.make_notebook(SOLUTION.read_text(), (EXERCISE / "README.md").read_text(), SOLUTION.read_text())
    module = notebook_module(solved.encode())
    assert module.dropped == ()
    assert surface(module.text) == surface(SOLUTION.read_text())
    assert "NotImplementedError" not in module.text
