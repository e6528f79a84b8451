"""The student stub and the reference solution stay in step, and the stub reveals no solution.

Neither autodiff.py is imported here: they are read with `ast` (and the stub is run in a subprocess).
"""
import ast
import importlib.util
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "autodiff" / "autodiff.py"
STUB = ROOT / "exercises" / "autodiff" / "autodiff.py"

CONTRACT_NAMES = {"Tensor", "GradientTape", "stop_gradient"}
TASK_MESSAGES = {
    "Tensor.detach": "Task 1: implement Tensor.detach",
    "stop_gradient": "Task 1: implement stop_gradient",
    "GradientTape._take_records_for_call": "Task 2: implement GradientTape._take_records_for_call",
}


def load_make_stub():
    spec = importlib.util.spec_from_file_location("make_stub", ROOT / "solutions" / "make_stub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def signatures(path: Path) -> dict[str, str]:
    """Qualified name -> signature and docstring of every function and class in a file."""
    found = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                bases = ", ".join(ast.unparse(b) for b in child.bases)
                found[prefix + child.name] = f"class({bases}) {ast.get_docstring(child)!r}"
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.FunctionDef):
                decorators = "".join("@" + ast.unparse(d) + " " for d in child.decorator_list)
                found[prefix + child.name] = f"{decorators}({ast.unparse(child.args)}) {ast.get_docstring(child)!r}"

    visit(ast.parse(path.read_text()), "")
    return found


def public_names(path: Path) -> set[str]:
    """Top-level names that do not start with an underscore."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def normalized_code(text: str) -> str:
    """Lines stripped of indentation and trailing comments, blank lines dropped."""
    lines = (re.sub(r"\s+#.*$", "", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("#"))


def test_committed_stub_is_generated_from_the_solution():
    assert STUB.read_text() == load_make_stub().make_stub(SOLUTION.read_text()), (
        "exercises/autodiff/autodiff.py is out of date: run python solutions/make_stub.py")


def test_stub_and_solution_expose_the_same_public_names():
    assert public_names(STUB) == public_names(SOLUTION)
    assert CONTRACT_NAMES <= public_names(SOLUTION)


def test_stub_and_solution_have_the_same_signatures_and_docstrings():
    assert signatures(STUB) == signatures(SOLUTION)
    assert ast.get_docstring(ast.parse(STUB.read_text())) == ast.get_docstring(ast.parse(SOLUTION.read_text()))


def test_every_task_function_ends_in_not_implemented_naming_its_task():
    found = {}
    tree = ast.parse(STUB.read_text())
    for owner in [tree] + [n for n in tree.body if isinstance(n, ast.ClassDef)]:
        prefix = "" if owner is tree else owner.name + "."
        for fn in (n for n in owner.body if isinstance(n, ast.FunctionDef)):
            last = fn.body[-1]
            if isinstance(last, ast.Raise) and ast.unparse(last.exc).startswith("NotImplementedError"):
                found[prefix + fn.name] = last.exc.args[0].value
    assert found == TASK_MESSAGES


def test_no_file_under_exercises_contains_a_task_body_or_marker():
    bodies = [normalized_code(body) for body in load_make_stub().task_bodies(SOLUTION.read_text())]
    assert all(bodies)
    for path in (ROOT / "exercises").rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert "--- Task" not in text, f"{path} contains a task marker"
            for body in bodies:
                assert body not in normalized_code(text), f"{path} contains a solution task body:\n{body}"


def test_stub_engine_works_outside_the_tasks():
    """The given code runs in the stub; only the task functions raise (run in a child process)."""
    script = textwrap.dedent("""
        from autodiff import *
        x = Tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        assert list(x.grad) == [2.0, 4.0]
        print("engine ok")
        for call, task in [(lambda: x.detach(), "Task 1"), (lambda: stop_gradient(x), "Task 1")]:
            try:
                call()
            except NotImplementedError as error:
                assert str(error).startswith(task), error
            else:
                raise AssertionError("no NotImplementedError")
        with GradientTape() as tape:
            y = x * x           # recording works in the stub
        try:
            tape.gradient(y, x)
        except NotImplementedError as error:
            assert str(error).startswith("Task 2"), error
        else:
            raise AssertionError("no NotImplementedError")
        print("tasks raise")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=STUB.parent, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["engine", "ok", "tasks", "raise"]
