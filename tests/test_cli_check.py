"""``grader check`` through the real CLI: exit codes, defaults, seeds, JSON and error lines."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from grader.cli import ExitCode, main

ROOT = Path(__file__).parent.parent
MINI = ROOT / "tests" / "fixtures" / "mini"
SCHEMA = json.loads((ROOT / "grader" / "schema" / "result.schema.json").read_text())


def run(*args: str, cwd: Path | None = None):
    """The CLI in-process (click's runner), from ``cwd``."""
    runner = CliRunner()
    with runner.isolated_filesystem(temp_dir=None) if cwd is None else _chdir(cwd):
        return runner.invoke(main, list(args), catch_exceptions=False)


class _chdir:
    def __init__(self, path: Path):
        self.path, self.old = path, None

    def __enter__(self):
        import os
        self.old = os.getcwd()
        os.chdir(self.path)

    def __exit__(self, *exc):
        import os
        os.chdir(self.old)


@pytest.fixture
def exercise(tmp_path: Path) -> Path:
    """A student's copy of the engine-test exercise folder."""
    folder = tmp_path / "mini"
    shutil.copytree(MINI, folder)
    return folder


def test_all_passed_exits_0_and_prints_the_score_and_seed(exercise):
    result = run("check", cwd=exercise)
    assert result.exit_code == ExitCode.OK, result.output
    assert "Score: 6/6 points, 3 of 3 scenarios passed" in result.output
    assert re.search(r"seed \d+ \(rerun it with\s+--seed \d+\)", result.output)


def test_failures_exit_1_and_are_explained(exercise):
    source = (exercise / "squares.py").read_text().replace("** 2", "* 2")
    (exercise / "squares.py").write_text(source)
    result = run("check", cwd=exercise)
    assert result.exit_code == ExitCode.FAILED
    for fragment in ("FAILED", "Checked:   square(x)", "Expected:", "Got:",
                     "Likely misconception: returned 2x, the gradient", "def square_values(sq, x):"):
        assert fragment in result.output


def test_the_seed_reproduces_the_run(exercise):
    (exercise / "squares.py").write_text((exercise / "squares.py").read_text().replace(
        "return np.asarray(x, dtype=float) ** 2", "print(x); return x"))
    first = run("check", "--json", cwd=exercise)
    seed = json.loads(first.output)["seed"]
    again = run("check", "--json", "--seed", str(seed), cwd=exercise)
    other = run("check", "--json", "--seed", str(seed + 1), cwd=exercise)

    def outputs(result):
        return [s["feedback"]["stdout"] for s in json.loads(result.output)["scenarios"]]

    assert outputs(first) == outputs(again) != outputs(other)


def test_json_output_follows_the_published_schema(exercise):
    result = run("check", "--json", cwd=exercise)
    document = json.loads(result.output)
    jsonschema.validate(document, SCHEMA)
    assert document["score"] == document["max_score"] == 6
    assert [t["status"] for t in document["tests"]] == ["passed"] * 3


def test_file_and_assignment_can_be_given_from_elsewhere(exercise, tmp_path):
    result = run("check", str(exercise / "squares.py"), cwd=tmp_path)
    assert result.exit_code == ExitCode.OK
    elsewhere = tmp_path / "mine.py"
    shutil.copy(exercise / "squares.py", elsewhere)
    assert run("check", str(elsewhere), "--assignment", str(exercise), cwd=tmp_path).exit_code == ExitCode.OK


def test_verbose_shows_the_isolation(exercise):
    assert "Isolation: rlimits" in run("check", "-v", cwd=exercise).output


def test_output_printed_while_importing_is_shown(exercise):
    # A student's module-level print (a debugging line, a warning) is feedback too, even when the
    # import works: shown once, above the tables, and kept in the JSON.
    path = exercise / "squares.py"
    path.write_text(path.read_text() + "\nprint('loaded squares')\nimport sys\nprint('careful', file=sys.stderr)\n")
    shown = run("check", cwd=exercise)
    assert shown.exit_code == ExitCode.OK, shown.output
    assert "Printed on stdout while importing squares.py:\n    loaded squares\n" in shown.output
    assert "Printed on stderr while importing squares.py:\n    careful\n" in shown.output
    assert shown.output.count("loaded squares") == 1
    document = json.loads(run("check", "--json", cwd=exercise).output)
    jsonschema.validate(document, SCHEMA)
    assert (document["import_stdout"], document["import_stderr"]) == ("loaded squares\n", "careful\n")
    assert all("loaded squares" not in s["feedback"]["stdout"] for s in document["scenarios"])


@pytest.mark.parametrize("args, message", [
    (("check",), "Error: no assignment.yaml in this folder: run grader check inside the exercise folder"),
    (("check", "nope.py"), "Error: no assignment.yaml in this folder"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, args, message):
    result = run(*args, cwd=tmp_path)
    assert result.exit_code == ExitCode.USAGE
    assert result.output.startswith(message) and len(result.output.strip().splitlines()) == 1


def test_missing_submission_says_where_to_run(exercise):
    (exercise / "squares.py").unlink()
    result = run("check", cwd=exercise)
    assert result.exit_code == ExitCode.USAGE
    assert "Error: squares.py is not in" in result.output and "grader check path/to/squares.py" in result.output


def test_a_mistyped_or_copied_file_name_says_what_is_there(exercise):
    result = run("check", "sqares.py", cwd=exercise)
    assert result.exit_code == ExitCode.USAGE
    assert result.output == "Error: sqares.py does not exist (did you mean squares.py?)\n"
    # A browser's second download beside no squares.py: grade would take it, check says so.
    (exercise / "squares.py").rename(exercise / "squares (1).py")
    result = run("check", cwd=exercise)
    assert result.exit_code == ExitCode.USAGE
    assert result.output.startswith("Error: squares.py is not in ") and ("('squares (1).py' is here, which grader "
                                                                         "grade would take as squares.py: grader "
                                                                         "check 'squares (1).py')") in result.output
    result = run("check", "sqares.py", cwd=exercise)
    assert "'squares (1).py' is here" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_spec_errors_exit_2_with_file_line_field(exercise):
    spec = exercise / "assignment.yaml"
    spec.write_text(spec.read_text().replace("time_limit: 2", "time_limt: 2").replace("task: grads", "task: grad"))
    result = run("check", cwd=exercise)
    assert result.exit_code == ExitCode.USAGE
    lines = result.output.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith(f"Error: {spec}:") for line in lines)
    assert "time_limt: unknown field (did you mean 'time_limit'?)" in lines[0]


def test_a_spec_error_found_while_the_programs_already_run_exits_2(exercise):
    # The programs are read straight from the files and run while the checks load in a thread;
    # an error that only loading finds must still end the check with its one line.
    scenarios = exercise / "scenarios.py"
    scenarios.write_text(scenarios.read_text().replace("@square_values.check\n", ""))
    result = run("check", cwd=exercise)
    assert result.exit_code == ExitCode.USAGE
    assert result.output.strip().splitlines() == [
        f"Error: {scenarios}:{_line_of(scenarios, 'def square_values')}: square_values: scenario "
        "'square_values' has no check; add @square_values.check below it"]


def _line_of(path: Path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_syntax_error_is_graded_zero_with_the_caret(exercise):
    (exercise / "squares.py").write_text("def square(x)\n    return x\n")
    result = run("check", cwd=exercise)
    assert result.exit_code == ExitCode.FAILED
    assert "squares.py, line 1: expected ':'\n       def square(x)\n                    ^" in result.output
    assert "Score: 0/6 points" in result.output


def test_python_dash_m_and_the_console_script_agree(exercise):
    by_module = subprocess.run([sys.executable, "-m", "grader", "check", "--json"], cwd=exercise,
                               capture_output=True, text=True)
    script = Path(sys.executable).with_name("grader")
    by_script = subprocess.run([str(script), "check", "--json"], cwd=exercise, capture_output=True, text=True)
    assert by_module.returncode == by_script.returncode == 0, by_module.stderr + by_script.stderr
    assert json.loads(by_module.stdout)["score"] == json.loads(by_script.stdout)["score"] == 6


def test_no_colours_when_not_a_tty(exercise):
    assert "\x1b[" not in run("check", cwd=exercise).output


def test_python_dash_m_ignores_modules_in_the_current_folder(exercise):
    # A student's json.py beside the submissions must not be imported by the grader itself.
    (exercise / "json.py").write_text("raise SystemExit('the grader imported a student file')\n")
    done = subprocess.run([sys.executable, "-m", "grader", "check", "--json"], cwd=exercise,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["score"] == 6


def test_task_checks_one_tasks_public_scenarios_and_the_provided_engines_checks(tmp_path):
    # The shipped exercise: the task's four scenarios and the engine's nine checks, not the other task's.
    exercise = tmp_path / "autodiff"
    shutil.copytree(ROOT / "exercises" / "autodiff", exercise)
    shutil.copy(ROOT / "solutions" / "autodiff" / "autodiff.py", exercise / "autodiff.py")
    done = run("check", "--json", "--task", "tape", "--seed", "3", cwd=exercise)
    assert done.exit_code == ExitCode.OK, done.output
    document = json.loads(done.output)
    jsonschema.validate(document, SCHEMA)
    tasks = {scenario["task"] for scenario in document["scenarios"]}
    assert tasks == {"tape", "engine"} and len(document["scenarios"]) == 4 + 9
    assert (document["score"], document["max_score"]) == (30, 30)
    assert [task["id"] for task in document["tasks"]] == ["tape", "engine"]
    console = run("check", "--task", "detach", cwd=exercise)
    said = " ".join(console.output.split())   # lines are wrapped at 80 columns
    assert "Score: 25/25 points, 4 of 4 scenarios passed (and 9 of 9 checks worth no points)" in said
    assert "Only task detach was checked" in said


def test_an_unknown_task_is_a_usage_error_saying_what_was_meant(exercise):
    done = run("check", "--task", "grad", cwd=exercise)
    assert done.exit_code == ExitCode.USAGE
    assert done.output.strip() == ("Error: --task grad: assignment.yaml has no such task (did you mean 'grads'?); "
                                   "its tasks are values, grads")


def test_github_classroom_appends_the_result_to_github_output_and_prints_the_report(exercise, monkeypatch, tmp_path):
    import base64
    (exercise / "squares.py").write_text((exercise / "squares.py").read_text().replace("** 2", "* 2"))
    outputs = tmp_path / "github-output"
    outputs.write_text("earlier=1\n")                 # a step's file may hold other outputs already
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    done = run("check", "--format", "github-classroom", "--seed", "4", cwd=exercise)
    assert done.exit_code == ExitCode.FAILED
    assert "Score: 4/6 points" in done.output         # the usual report, in the step's log
    lines = outputs.read_text().splitlines()
    assert lines[0] == "earlier=1" and len(lines) == 2 and lines[1].startswith("result=")
    document = json.loads(base64.b64decode(lines[1].removeprefix("result=")).decode("utf-8"))
    assert (document["status"], document["max_score"], sum(t["score"] for t in document["tests"])) == ("fail", 6, 4)


def test_github_classroom_outside_a_workflow_step_is_a_usage_error(exercise, monkeypatch):
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    done = run("check", "--format", "github-classroom", cwd=exercise)
    assert done.exit_code == ExitCode.USAGE and "$GITHUB_OUTPUT" in done.output and "Score" not in done.output
