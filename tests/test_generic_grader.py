"""The grader is generic: the exercise's words (its API, the name its programs give the student's
module, why its imports are forbidden, how its handout is made) live in the exercise, and the
grader's own strings name none of them. Its messages take them from ``assignment.yaml``, whose
fields for them are checked like every other."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from grader import load_assignment
from grader.errors import SpecError
from grader.formats import ReadContext
from grader.report.text import explain, program_heading
from grader.results import Feedback, ScenarioResult, Status
from grader.submission import read_submission
from grader.visibility import Visibility

ROOT = Path(__file__).resolve().parent.parent
MINI = Path(__file__).parent / "fixtures" / "mini"

# The shipped exercises' API and the alias their programs give the student's module: words of an
# exercise (autodiff's, and the tapes exercise's), which a generic grader never prints.
EXERCISE_WORDS = re.compile(r"\b(Tensor\w*|GradientTape\w*|detach|stop_gradient|jacobian|stop_recording|hvp|ad)\b")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def test_no_string_the_grader_can_print_names_an_exercises_words():
    # Every string literal of every module of grader/ (f-strings' parts included), but docstrings:
    # comments are not in the syntax tree at all.
    found = []
    for path in sorted((ROOT / "grader").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                found += [f"{path.relative_to(ROOT)}:{node.lineno}: {word!r} in {node.value!r}"
                          for word in EXERCISE_WORDS.findall(node.value)]
    assert not found, "the exercise's words belong in assignment.yaml:\n" + "\n".join(found)


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    for name in ("assignment.yaml", "scenarios.py", "squares.py"):
        shutil.copy(MINI / name, tmp_path)
    return tmp_path


def _set(folder: Path, lines: str) -> None:
    """Add top-level fields to the spec, after its forbidden_imports."""
    path = folder / "assignment.yaml"
    path.write_text(path.read_text().replace("forbidden_imports: [torch, jax]\n",
                                             f"forbidden_imports: [torch, jax]\n{lines}"))


def _line(folder: Path, needle: str, name: str = "assignment.yaml") -> int:
    return next(n for n, line in enumerate((folder / name).read_text().splitlines(), 1) if needle in line)


def _error(folder: Path) -> str:
    with pytest.raises(SpecError) as caught:
        load_assignment(folder)
    return str(caught.value)


def test_the_program_heading_names_the_module_as_the_program_does():
    # What a student reads above a program: the name its own first parameter gives their module
    # (the spec makes it the assignment's module_alias), whatever the exercise.
    assert program_heading("def d2l(ad):\n    return 1\n") == "What the scenario ran (ad is your module):"
    assert program_heading("def squares(sq, x):\n    return {}\n") == "What the scenario ran (sq is your module):"
    assert program_heading("def weird(*modules):\n    return {}\n") == "What the scenario ran:"
    scenario = ScenarioResult("s", "S", "t", 0.0, 1.0, Status.FAILED, Feedback("wrong"), 0.1, Visibility.PUBLIC,
                              program="def s(stack):\n    return stack.pop()\n")
    assert "What the scenario ran (stack is your module):\n    def s(stack):" in explain(scenario)


def test_module_alias_is_checked_against_every_program(spec_dir, tmp_path):
    _set(spec_dir, "module_alias: sq\n")
    assert load_assignment(spec_dir).scenarios    # mini's programs all take `sq`
    (spec_dir / "scenarios.py").write_text((spec_dir / "scenarios.py").read_text()
                                           .replace("def grad_values(sq, x):", "def grad_values(m, x):\n    sq = m"))
    assert _error(spec_dir) == (
        f"{spec_dir}/scenarios.py:{_line(spec_dir, 'def grad_values', 'scenarios.py')}: grad_values: the program "
        "takes the student's module as 'm', but assignment.yaml's module_alias is 'sq': name its first parameter sq")


@pytest.mark.parametrize("field, value, problem", [
    ("module_alias", "'my module'", "must be a Python name (letters, digits and _), got 'my module'"),
    ("module_alias", "class", "must be a Python name (letters, digits and _), got 'class'"),
    ("forbidden_reason", '"two\\nlines"', "must be one line of text, got 'two\\nlines'"),
    ("handout_command", "''", "must be one line of text, got ''"),
])
def test_the_exercises_words_are_validated_like_every_field(spec_dir, field, value, problem):
    _set(spec_dir, f"{field}: {value}\n")
    assert _error(spec_dir) == f"{spec_dir}/assignment.yaml:{_line(spec_dir, field + ':')}: {field}: {problem}"


def test_a_misspelt_word_field_suggests_the_right_one(spec_dir):
    _set(spec_dir, "module_alais: sq\n")
    assert _error(spec_dir).endswith("module_alais: unknown field (did you mean 'module_alias'?)")


def test_the_reason_a_module_is_forbidden_is_the_assignments(spec_dir):
    (spec_dir / "squares.py").write_text("import torch\n\ndef square(x):\n    return x\n")
    plain = load_assignment(spec_dir)
    said = read_submission(spec_dir / "squares.py", plain.forbidden_imports, ReadContext.of(plain)).problem
    assert said == "squares.py, line 1: imports 'torch', which this assignment does not allow (forbidden: torch, jax)"
    _set(spec_dir, "forbidden_reason: the point is to write the stack yourself\n")
    worded = load_assignment(spec_dir)
    assert worded.forbidden_reason == "the point is to write the stack yourself"
    assert read_submission(spec_dir / "squares.py", worded.forbidden_imports, ReadContext.of(worded)).problem == \
        said + "; the point is to write the stack yourself"


def test_the_handout_command_is_named_when_the_fingerprint_is_stale(spec_dir):
    (spec_dir / "provided.json").write_text('{"format": 1, "student_functions": ["square"], "parts": {}}\n')
    generic = _error(spec_dir)
    assert generic.endswith("regenerate it from the handout (grader.provided.fingerprint(handout, the tasks' "
                            "functions))"), generic
    _set(spec_dir, "handout_command: make handout\n")
    assert _error(spec_dir).endswith("regenerate it from the handout (make handout)")


def test_the_shipped_exercise_says_its_own_words():
    autodiff = load_assignment(ROOT / "exercises" / "autodiff")
    assert autodiff.forbidden_reason == "the point is to write the gradients yourself"
    assert {program_heading(s.source) for s in autodiff.scenarios} == {"What the scenario ran (ad is your module):"}
