"""The one reader of an assignment: a plan and an assignment from one reading of the files."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.errors import SpecError
from grader.loading import AssignmentFiles, Loading, load, read_plan
from grader.spec import Assignment, Plan
from grader.visibility import Scope

ROOT = Path(__file__).parent.parent
MINI = Path(__file__).parent / "fixtures" / "mini"


@pytest.fixture
def mini(tmp_path) -> Path:
    folder = tmp_path / "mini"
    shutil.copytree(MINI, folder)
    return folder


def test_the_plan_holds_what_the_sandbox_needs_and_imports_nothing():
    program = textwrap.dedent(f"""
        import sys
        from grader.loading import read_plan
        plan = read_plan({str(ROOT / "exercises" / "autodiff")!r})
        print(len(plan.scenarios), "numpy" in sys.modules, any("_grader_scenarios_" in m for m in sys.modules))
        """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["17", "False", "False"]


def test_plan_and_assignment_come_from_one_text(mini):
    plan = read_plan(mini)
    assignment = load(plan)
    assert isinstance(plan, Plan) and isinstance(assignment, Assignment)
    assert [s.id for s in plan.scenarios] == [s.id for s in assignment.scenarios]
    assert [s.source for s in plan.scenarios] == [s.source for s in assignment.scenarios]
    assert assignment.digest == plan.digest and all(s.code.check_fn for s in assignment.scenarios)


def test_a_file_changed_between_the_phases_changes_the_digest_not_the_assignment(mini):
    plan = read_plan(mini)
    scenarios = mini / "scenarios.py"
    scenarios.write_text(scenarios.read_text() + "\n# edited after the plan was read\n")
    assignment = load(plan)  # the texts the plan read, not the file as it is now
    assert assignment.digest == plan.digest
    assert [s.source for s in assignment.scenarios] == [s.source for s in plan.scenarios]
    assert read_plan(mini).digest != plan.digest


@pytest.mark.parametrize("field, value", [("time_limit", "0"), ("time_limit", "-1"), ("import_time_limit", "0"),
                                          ("memory_limit_mb", "0"), ("output_limit_kb", "0")])
def test_a_nonsensical_limit_is_a_spec_error_at_once(mini, field, value):
    spec = mini / "assignment.yaml"
    text = spec.read_text()
    spec.write_text(text + f"{field}: {value}\n" if f"{field}:" not in text else
                    "\n".join(f"{field}: {value}" if line.startswith(f"{field}:") else line
                              for line in text.splitlines()) + "\n")
    with pytest.raises(SpecError) as error:
        read_plan(mini)
    assert "assignment.yaml:" in str(error.value) and f"{field}: must be" in str(error.value)


def test_a_scenario_time_limit_of_zero_is_refused_with_its_line(mini):
    spec = mini / "assignment.yaml"
    spec.write_text(spec.read_text().replace("task: values, points: 2}", "task: values, points: 2, time_limit: 0}", 1))
    with pytest.raises(SpecError, match=r"scenarios\[0\]\.time_limit: must be more than 0, got 0"):
        read_plan(mini)


def test_every_default_is_defined_once(mini):
    spec = mini / "assignment.yaml"
    limits = ("time_limit", "import_time_limit", "memory_limit_mb", "output_limit_kb")
    spec.write_text("\n".join(line for line in spec.read_text().splitlines() if not line.startswith(limits)))
    plan = read_plan(mini)
    from grader.spec import PUBLIC_FIELDS, Limits
    assert plan.limits == Limits() and Limits().time == PUBLIC_FIELDS["time_limit"].default
    assert all(s.time_limit == plan.limits.time for s in plan.scenarios)


def test_loading_in_the_background_reports_what_loading_raised(mini):
    plan = read_plan(mini)
    scenarios = mini / "scenarios.py"
    broken = Plan(**{**plan.__dict__, "files": tuple(
        type(f)(f.role, f.name, f.data + b"\nraise RuntimeError('broken check file')\n") if f.role == "scenarios" else f
        for f in plan.files)})
    with Loading(broken) as loading:
        with pytest.raises(SpecError, match="broken check file"):
            loading.assignment()
    assert scenarios.read_text() == (MINI / "scenarios.py").read_text()


def test_the_files_of_an_assignment_rebuild_it_elsewhere(tmp_path):
    plan = read_plan(ROOT / "exercises" / "autodiff", ROOT / "solutions" / "autodiff")
    files = AssignmentFiles.of(plan)
    rebuilt = files.load(tmp_path / "worker")
    assert rebuilt.digest == plan.digest and [s.id for s in rebuilt.select(Scope.ALL)] == [s.id for s in plan.scenarios]
    forged = AssignmentFiles(files.files, "0" * 64)
    with pytest.raises(SpecError, match="digest"):
        forged.load(tmp_path / "elsewhere")
