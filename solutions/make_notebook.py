"""Generate the handout notebook from the handout, so the notebook and autodiff.py never drift apart.

exercises/autodiff/autodiff.ipynb holds the same engine as exercises/autodiff/autodiff.py (itself
generated from the solution by make_stub.py) and the text of exercises/autodiff/README.md:

* markdown cells: the README's sections, the contract of each task just above its cell;
* code cells (ids ``engine-*``): the engine, one top-level concept a cell; a class that holds a task
  method is given without it;
* one code cell per task (ids ``task-1``, ``task-2``): the task functions, a method attached to its
  class with ``@add_to_class(Class)`` (D2L's own way of growing a class across cells, §3.2);
* cells tagged ``not-graded``: the README's "Try it yourself" and the check inside Jupyter;
* metadata ``{"autodiff_grader": {"assignment": "autodiff"}}``, so a notebook of another
  assignment is refused clearly.

The same function makes a notebook of any source with the handout's structure (the solution, a
buggy variant): tests grade those against the ``.py`` they come from.

    python solutions/make_notebook.py           # write exercises/autodiff/autodiff.ipynb
    python solutions/make_notebook.py --check   # exit 1 if the committed notebook is out of date
"""
import argparse
import ast
import importlib.util
import json
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "autodiff"
STUB = EXERCISE / "autodiff.py"
README = EXERCISE / "README.md"
NOTEBOOK = EXERCISE / "autodiff.ipynb"
SOLUTION = ROOT / "solutions" / "autodiff" / "autodiff.py"
ASSIGNMENT = "autodiff"
NOT_GRADED = "not-graded"

ADD_TO_CLASS = '''

def add_to_class(Class):
    """Attach the function below to `Class` as a method (D2L's way to grow a class across cells)."""
    def register(function):
        function.__qualname__ = f"{Class.__name__}.{function.__name__}"
        setattr(Class, function.__name__, function)
        return function
    return register
'''
CHECK_CELL = "%load_ext grader\n%grader check"
NOTEBOOK_INTRO = """\
This notebook is the exercise of `autodiff.py`, cell by cell: the engine in the cells named `engine-*`, each
task in its own cell (`task-1`, `task-2`). Fill in the two task cells, run the notebook as you like, and check
your work with the last cell (`%grader check`), or in a terminal with `grader check autodiff.ipynb`. Hand in
either this notebook or `autodiff.py`.

What the grader imports from a notebook: the definitions, imports and simple assignments of its code cells (no
kernel runs). Top-level code that only demonstrates (prints, plots, loops, calls) and IPython syntax (`%`, `!`,
`%%` cells) are left out, and each line left out is listed when you check; cells tagged `not-graded` are left
out silently.
"""


def load_make_stub():
    spec = importlib.util.spec_from_file_location("make_stub", ROOT / "solutions" / "make_stub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def task_functions(solution: str) -> dict[str, str]:
    """Qualified name of each task function -> its task number, from the solution's markers."""
    return {name: task for _, _, task, name in load_make_stub().task_regions(solution)}


def readme_sections(readme: str) -> dict[str, str]:
    """The README's text by heading ("" for the text before the first ``##``), headings kept."""
    sections, current, lines = {}, "", []
    for line in readme.splitlines():
        heading = re.match(r"^#{2,3} (.*)$", line)
        if heading:
            sections[current] = "\n".join(lines).strip()
            current, lines = heading[1], []
        lines.append(line)
    sections[current] = "\n".join(lines).strip()
    return sections


def code_cells(source: str, tasks: dict[str, str]) -> list[tuple[str, str]]:
    """(cell id, code) of the engine and task cells of ``source``, in an order that runs."""
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    cells: list[tuple[str, str]] = []
    task_code: dict[str, list[str]] = {}
    prelude_end = next(i for i, node in enumerate(tree.body) if isinstance(node, ast.ClassDef))
    cut = [start_of(n) for n in tree.body[prelude_end:]] + [len(lines) + 1]
    cells.append(("engine-core", "".join(lines[:cut[0] - 1]).rstrip() + "\n" + ADD_TO_CLASS))
    for node, start, end in zip(tree.body[prelude_end:], cut, cut[1:]):
        text = "".join(lines[start - 1:end - 1])
        if isinstance(node, ast.ClassDef):
            methods = [m for m in node.body if isinstance(m, ast.FunctionDef) and f"{node.name}.{m.name}" in tasks]
            for method in methods:
                body = "".join(lines[start_of(method) - 1:method.end_lineno])
                task = tasks[f"{node.name}.{method.name}"]
                task_code.setdefault(task, []).append(f"@add_to_class({node.name})\n" + textwrap.dedent(body))
            for method in reversed(methods):  # cut out, with the blank line above each
                first, last = start_of(method) - start, method.end_lineno - start + 1
                kept = text.splitlines(keepends=True)
                text = "".join(kept[:first - 1] + kept[last:]) if kept[first - 1].strip() == "" else \
                    "".join(kept[:first] + kept[last:])
            cells.append((f"engine-{_name(node)}", text.rstrip() + "\n"))
            for task in dict.fromkeys(tasks[f"{node.name}.{m.name}"] for m in methods):
                cells.append(_task_cell(task, task_code.pop(task)))
        elif isinstance(node, ast.FunctionDef) and node.name in tasks:
            task_code.setdefault(tasks[node.name], []).append(text.rstrip() + "\n")
        else:
            cells.append((f"engine-{_name(node)}", text.rstrip() + "\n"))
    # A task function outside any class joins its task's cell (made with the class's method).
    for task, pieces in task_code.items():
        cells.append(_task_cell(task, pieces))
    return _merge_tasks(cells)


def _task_cell(task: str, pieces: list[str]) -> tuple[str, str]:
    return f"task-{task}", "\n\n".join(piece.rstrip() for piece in pieces) + "\n"


def _merge_tasks(cells: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One cell per task: a task's later pieces join its first cell."""
    merged: dict[str, str] = {}
    for cell_id, text in cells:
        merged[cell_id] = merged[cell_id].rstrip() + "\n\n\n" + text if cell_id in merged else text
    return list(merged.items())


def start_of(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])


def _name(node: ast.stmt) -> str:
    """``GradientTape`` -> ``gradient-tape``, ``_as_tensor`` -> ``as-tensor``."""
    name = getattr(node, "name", type(node).__name__).strip("_")
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "-", name).lower().replace("_", "-")


def make_notebook(source: str, readme: str, solution: str) -> str:
    """The handout notebook (nbformat 4.5 JSON, as Jupyter writes it) of ``source``."""
    tasks = task_functions(solution)
    text = readme_sections(readme)
    contract = {"1": text["detach and stop_gradient (Task 1)"], "2": text["GradientTape (Task 2: persistence)"]}
    task_text = {task: paragraph for paragraph in text["Your tasks"].split("\n\n")
                 for task in "12" if paragraph.startswith(f"**Task {task}:")}
    cells = [_markdown("intro", text[""] + "\n\n" + NOTEBOOK_INTRO),
             _markdown("how-the-engine-works", text["How the engine works (read this first)"])]
    for cell_id, code in code_cells(source, tasks):
        if cell_id.startswith("task-"):
            task = cell_id.removeprefix("task-")
            cells.append(_markdown(f"{cell_id}-text", f"## Task {task}\n\n{task_text[task]}\n\n{contract[task]}"))
        cells.append(_code(cell_id, code))
    cells += [_markdown("contract", "\n\n".join([text["The API contract"], text["Tensor"],
                                                 text["backward (PyTorch style)"]])),
              _markdown("try-it-text", "## Try it yourself"),
              _code("try-it", _fenced_code(text["Try it yourself"]), tags=[NOT_GRADED]),
              _markdown("check-text", "## Checking your work\n\nRun the cell below: it saves this notebook and "
                        "checks it on the public scenarios, as `grader check autodiff.ipynb` does in a terminal."),
              _code("check", CHECK_CELL, tags=[NOT_GRADED])]
    notebook = {
        "cells": cells,
        "metadata": {
            ASSIGNMENT_KEY: {"assignment": ASSIGNMENT},
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


ASSIGNMENT_KEY = "autodiff_grader"


def _fenced_code(section: str) -> str:
    return re.search(r"```python\n(.*?)```", section, re.DOTALL)[1]


def _lines(text: str) -> list[str]:
    """nbformat's multi-line string: the lines, each but the last ending in a newline."""
    return text.rstrip("\n").splitlines(keepends=True)


def _markdown(cell_id: str, text: str) -> dict:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": _lines(text)}


def _code(cell_id: str, text: str, tags: list[str] | None = None) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": cell_id,
            "metadata": {"tags": tags} if tags else {}, "outputs": [], "source": _lines(text)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed notebook is out of date")
    args = parser.parse_args(argv)
    notebook = make_notebook(STUB.read_text(), README.read_text(), SOLUTION.read_text())
    if args.check:
        if NOTEBOOK.read_text() != notebook:
            print(f"{NOTEBOOK.relative_to(ROOT)} is out of date: run python solutions/make_notebook.py", file=sys.stderr)
            return 1
        return 0
    NOTEBOOK.write_text(notebook)
    print(f"wrote {NOTEBOOK.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
