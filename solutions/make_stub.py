"""Generate the student stub from the reference solution, so the two never drift apart.

In the solution, each task body sits between marker comments::

    def detach(self):
        \"\"\"docstring\"\"\"
        # --- Task 1 begin ---
        return ...
        # --- Task 1 end ---

The stub is the solution with every marked region (markers included) replaced by one line,
``raise NotImplementedError("Task 1: implement Tensor.detach")``, at the begin marker's indentation.
Beside it goes the handout's fingerprint (``provided.json``, see grader/provided.py): what the grader
compares a submission's provided engine with, the task functions named in assignment.yaml excepted.

    python solutions/make_stub.py           # write exercises/autodiff/autodiff.py and provided.json
    python solutions/make_stub.py --check   # exit 1 if either committed file is out of date
"""
import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "autodiff" / "autodiff.py"
STUB = ROOT / "exercises" / "autodiff" / "autodiff.py"
FINGERPRINT = STUB.with_name("provided.json")

BEGIN = re.compile(r"^(?P<indent>[ ]*)# --- Task (?P<task>\d+) begin ---$")
END = re.compile(r"^[ ]*# --- Task (?P<task>\d+) end ---$")


class MarkerError(ValueError):
    """The task markers in the solution are missing, unbalanced or outside a function."""


def function_names_by_line(source: str) -> dict[int, str]:
    """Map each line number (1-based) to the qualified name of the innermost function containing it."""
    names: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    for line in range(child.lineno, child.end_lineno + 1):
                        names[line] = qualname   # inner functions are visited later and overwrite
                visit(child, qualname + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return names


def task_regions(source: str) -> list[tuple[int, int, str, str]]:
    """The marked regions as (begin index, end index, task number, function name); 0-based line indices."""
    lines = source.splitlines()
    names = function_names_by_line(source)
    regions, begin = [], None
    for index, line in enumerate(lines):
        if BEGIN.match(line):
            if begin is not None:
                raise MarkerError(f"line {index + 1}: Task begin inside another task region")
            begin = index
        elif END.match(line):
            if begin is None or END.match(line)["task"] != BEGIN.match(lines[begin])["task"]:
                raise MarkerError(f"line {index + 1}: Task end without a matching begin")
            if begin + 1 not in names:
                raise MarkerError(f"line {begin + 1}: task region outside a function")
            regions.append((begin, index, BEGIN.match(lines[begin])["task"], names[begin + 1]))
            begin = None
    if begin is not None:
        raise MarkerError(f"line {begin + 1}: Task begin without an end")
    if not regions:
        raise MarkerError("no task regions found")
    return regions


def task_bodies(source: str) -> list[str]:
    """The solution code inside each marked region (what the stub must not contain)."""
    lines = source.splitlines()
    return ["\n".join(lines[begin + 1:end]) for begin, end, _, _ in task_regions(source)]


def make_stub(source: str) -> str:
    """The student stub for a solution source: every task region becomes `raise NotImplementedError`."""
    lines = source.splitlines(keepends=True)
    stub, last = [], 0
    for begin, end, task, name in task_regions(source):
        indent = BEGIN.match(lines[begin].rstrip("\n"))["indent"]
        stub += lines[last:begin]
        stub.append(f'{indent}raise NotImplementedError("Task {task}: implement {name}")\n')
        last = end + 1
    stub += lines[last:]
    return "".join(stub)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed stub is out of date")
    args = parser.parse_args(argv)
    stub = make_stub(SOLUTION.read_text())
    fingerprint = make_fingerprint(stub)
    if args.check:
        stale = [path for path, text in ((STUB, stub), (FINGERPRINT, fingerprint))
                 if not path.is_file() or path.read_text() != text]
        for path in stale:
            print(f"{path.relative_to(ROOT)} is out of date: run python solutions/make_stub.py", file=sys.stderr)
        return 1 if stale else 0
    STUB.write_text(stub)
    FINGERPRINT.write_text(fingerprint)
    print(f"wrote {STUB.relative_to(ROOT)} and {FINGERPRINT.relative_to(ROOT)}")
    return 0


def make_fingerprint(stub: str) -> str:
    """The handout's fingerprint: every part of the stub but the functions holding a task region
    (the student's; tests/test_exercise_files.py holds them equal to the tasks' functions: in
    assignment.yaml)."""
    sys.path.insert(0, str(ROOT))
    from grader.provided import fingerprint
    student = tuple(dict.fromkeys(name for _, _, _, name in task_regions(SOLUTION.read_text())))
    return fingerprint(stub, student)


if __name__ == "__main__":
    sys.exit(main())
