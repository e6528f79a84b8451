"""Loading and validating assignment specs: every mistake is one line naming file, line and field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader import load_assignment
from grader.errors import SpecError

MINI = Path(__file__).parent / "fixtures" / "mini"


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    shutil.copy(MINI / "assignment.yaml", tmp_path)
    shutil.copy(MINI / "scenarios.py", tmp_path)
    return tmp_path


def edit(folder: Path, old: str, new: str, name: str = "assignment.yaml") -> None:
    path = folder / name
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def error_of(folder: Path, **kwargs) -> str:
    with pytest.raises(SpecError) as caught:
        load_assignment(folder, **kwargs)
    return str(caught.value)


def line_of(folder: Path, needle: str, name: str = "assignment.yaml") -> int:
    return next(n for n, line in enumerate((folder / name).read_text().splitlines(), 1) if needle in line)


def test_the_mini_spec_loads(spec_dir):
    assignment = load_assignment(spec_dir)
    assert [s.id for s in assignment.scenarios] == ["square_values", "grad_values", "fresh_state"]
    assert assignment.limits.time == 2 and assignment.forbidden_imports == ("torch", "jax")
    assert len(assignment.digest) == 64


def test_unknown_key_suggests_the_close_one(spec_dir):
    edit(spec_dir, "time_limit: 2", "time_limt: 2")
    message = error_of(spec_dir)
    assert message == (f"{spec_dir}/assignment.yaml:{line_of(spec_dir, 'time_limt')}: time_limt: "
                       "unknown field (did you mean 'time_limit'?)")


def test_missing_required_field(spec_dir):
    edit(spec_dir, "submission: squares.py\n", "")
    assert "assignment.yaml:3: submission: missing (required: the file name students submit" in error_of(spec_dir)


def test_wrong_type_names_the_value(spec_dir):
    edit(spec_dir, "points: 3}", "points: three}")
    line = line_of(spec_dir, "points: three")
    assert f"assignment.yaml:{line}: scenarios[1].points: must be a number of points" in error_of(spec_dir)
    assert "got str 'three'" in error_of(spec_dir)


def test_a_yes_is_not_a_number(spec_dir):
    edit(spec_dir, "points: 3}", "points: yes}")
    assert "got bool True" in error_of(spec_dir)


def test_scenario_named_but_not_defined(spec_dir):
    edit(spec_dir, "id: grad_values", "id: grad_value")
    message = error_of(spec_dir)
    assert (f"assignment.yaml:{line_of(spec_dir, 'grad_value,')}: scenarios[1].id: scenario 'grad_value' is not "
            "defined in scenarios.py (did you mean 'grad_values'?)") in message
    # ...and the definition it should have named is reported too, at its line in the Python file:
    assert "scenarios.py:22: grad_values: scenario 'grad_values' is defined in scenarios.py but not listed" in message
    assert len(message.splitlines()) == 2


def test_unknown_task_lists_the_tasks(spec_dir):
    edit(spec_dir, "task: grads", "task: grad")
    assert "unknown task 'grad' (did you mean 'grads'?); tasks: values, grads" in error_of(spec_dir)


def test_hidden_scenario_in_the_students_spec_is_refused(spec_dir):
    edit(spec_dir, "task: grads, points: 3}", "task: grads, points: 3, visibility: hidden}")
    assert "hidden scenarios belong in the instructor-only solutions/<assignment>/hidden.yaml" in error_of(spec_dir)


def test_yaml_syntax_error_has_a_line(spec_dir):
    edit(spec_dir, "tasks:\n", "tasks: [\n")
    assert f"{spec_dir}/assignment.yaml:" in error_of(spec_dir) and "not valid YAML" in error_of(spec_dir)


def test_duplicate_key(spec_dir):
    edit(spec_dir, "time_limit: 2\n", "time_limit: 2\ntime_limit: 3\n")
    assert "time_limit: appears twice (first on line" in error_of(spec_dir)


def test_program_using_a_name_the_sandbox_lacks(spec_dir):
    edit(spec_dir, '    return {"y": sq.square(x)}', '    return {"y": sq.square(random_x)}', "scenarios.py")
    message = error_of(spec_dir)
    assert "scenarios.py:" in message and "square_values: the program uses 'random_x'" in message


def test_a_name_in_an_annotation_counts_even_under_future_annotations(spec_dir):
    # The sandbox compiles the program alone, without the file's __future__ import: the annotation
    # of a function defined inside the program is evaluated there, so its name must exist there.
    edit(spec_dir, '"""Scenarios', 'from __future__ import annotations\n"""Scenarios', "scenarios.py")
    edit(spec_dir, '    return {"y": sq.square(x)}',
         '    def helper(value: Helper):\n        return value\n    return {"y": sq.square(helper(x))}',
         "scenarios.py")
    assert "square_values: the program uses 'Helper'" in error_of(spec_dir)


def test_scenario_without_a_check(spec_dir):
    edit(spec_dir, "@grad_values.check\n", "", "scenarios.py")
    assert "scenario 'grad_values' has no check" in error_of(spec_dir)


def test_missing_folder_says_what_to_pass(tmp_path):
    assert "no assignment.yaml here; pass --assignment" in error_of(tmp_path)


def test_hidden_folder_missing_is_named(spec_dir, tmp_path):
    assert f"no hidden.yaml in {tmp_path / 'nowhere'}" in error_of(spec_dir, hidden=tmp_path / "nowhere")


def test_hidden_scenarios_join_the_public_ones(spec_dir, tmp_path):
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "hidden.yaml").write_text(
        "assignment: mini\nscenario_file: more.py\nscenarios:\n"
        "  - {id: more, title: more, task: values, points: 4}\n")
    (hidden / "more.py").write_text(
        "from grader.scenario import scenario\n\n@scenario\ndef more(sq):\n    return 1\n\n"
        "@more.check\ndef _(got):\n    pass\n")
    assignment = load_assignment(spec_dir, hidden=hidden)
    assert [s.visibility for s in assignment.scenarios] == ["public"] * 3 + ["hidden"]
    assert len(assignment.select("public")) == 3 and len(assignment.select("all")) == 4
    edit(spec_dir, "time_limit: 2\n", "time_limit: 2\ntotal_points: 99\n")
    assert "total_points: is 99 but the public and hidden scenarios add up to 10" in error_of(spec_dir, hidden=hidden)
