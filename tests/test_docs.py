"""Cheap guards on the documentation (after sqlite-utils' tests/test_docs.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from grader.cli import ExitCode, main

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_has_help_and_is_in_the_readme(name):
    command = main.commands[name]
    assert command.help and len(command.help) > 30, f"grader {name} needs help text"
    assert f"grader {name}" in README, f"grader {name} is not documented in README.md"
    for parameter in command.params:
        if parameter.param_type_name == "option":
            assert parameter.help, f"grader {name} {parameter.opts[0]} needs help text"


def test_every_exit_code_is_documented():
    table = README[README.index("### Exit status"):]
    for code in ExitCode:
        assert re.search(rf"^\| {code.value} \|", table, re.M), f"exit code {code.value} is not in the README"


def test_ci_runs_exactly_the_readme_test_command():
    commands = re.findall(r"```sh\n(.+?)\n```", README)
    test_command = next(c for c in commands if "pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_every_result_field_is_documented():
    from dataclasses import fields

    from grader.results import SubmissionResult
    for field in fields(SubmissionResult):
        assert f"`{field.name}`" in README, f"result field {field.name} is not documented in README.md"


def test_every_assignment_field_is_documented():
    from grader import spec
    reference = README[README.index("`assignment.yaml` fields:"):]
    for fields in (spec.PUBLIC_FIELDS, spec.TASK_FIELDS, spec.SCENARIO_FIELDS, spec.HIDDEN_FIELDS):
        for name in fields:
            assert f"`{name}`" in reference, f"assignment field {name} is not in README.md's reference"


def test_the_gradebook_columns_are_documented():
    assert "`student_id`" in README and "`max_score`" in README and "`status`" in README


def test_git_does_not_track_generated_files():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    assert not [name for name in tracked if "__pycache__" in name or name.endswith(".pyc")]


def test_the_readme_gives_students_the_install_command_the_handout_gives():
    import grader
    from grader.release import install_command
    assert install_command(f"autodiff_grader-{grader.__version__}-py3-none-any.whl") in README
    assert "pip install 'autodiff-grader[" not in README   # no package index has it under that name


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_option_of_every_command_is_in_the_readme(name):
    # --help and the README say the same options: a new one is documented where users look.
    for parameter in main.commands[name].params:
        if parameter.param_type_name == "option" and parameter.name != "help":
            assert any(option in README for option in parameter.opts), \
                f"grader {name} {parameter.opts[0]} is not in README.md"
