"""``grader audit`` through the real CLI: a weak rubric, a sound one, broken mutant files, and the
shipped autodiff assignment (whose audit holds every guarantee since issue 17)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from grader.audit.verdicts import GUARANTEES, Cell, FindingKind, MutantStatus, Verdict

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "audit"
WEAK = FIXTURES / "weak" / "exercises" / "weak"
SOUND = FIXTURES / "sound" / "exercises" / "sound"
AUDIT_SCHEMA = json.loads((ROOT / "grader" / "schema" / "audit.schema.json").read_text())
STRYKER_SCHEMA = json.loads((ROOT / "tests" / "schemas" / "mutation_testing_report.schema.json").read_text())


def grader(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def audited(folder: Path, tmp: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict, dict]:
    done = grader("audit", "--assignment", str(folder), "-j", "2", "--json", str(tmp / "audit.json"),
                  "--stryker", str(tmp / "stryker.json"), *extra)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    document = json.loads((tmp / "audit.json").read_text())
    jsonschema.Draft202012Validator(AUDIT_SCHEMA).validate(document)
    report = json.loads((tmp / "stryker.json").read_text())
    jsonschema.Draft7Validator(STRYKER_SCHEMA).validate(report)
    return done, document, report


def flat(text: str) -> str:
    """The console report with its line wrapping undone."""
    return " ".join(text.split())


def findings(document: dict, kind: FindingKind) -> dict[str, str]:
    return {f["subject"]: f["message"] for f in document["findings"] if f["kind"] == kind.value}


def mutant(document: dict, mutant_id: str) -> dict:
    return next(m for m in document["mutants"] if m["id"] == mutant_id)


@pytest.fixture(scope="module")
def weak(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("weak")
    return audited(WEAK, tmp)


def test_the_weak_rubric_fails_the_audit(weak):
    done, document, _ = weak
    assert done.returncode == 1 and not document["passed"]
    failed = {g["id"] for g in document["guarantees"] if not g["holds"]}
    assert failed == {"reference_full", "no_flaky", "handout_zero", "no_cross_task", "named_killed", "named_diagnosed"}
    assert f"Audit FAILED: 6 of {len(GUARANTEES)} guarantees do not hold" in done.stdout


def test_a_flaky_randomized_scenario_is_reported_with_a_seed_to_reproduce_it(weak):
    done, document, _ = weak
    message = findings(document, FindingKind.FLAKY)["quadruple_random_flaky"]
    assert "fails on 14 of 20 seeds (0, 1, 2, 4, 6, ...)" in message
    assert "reproduce it with seed 0" in flat(done.stdout)


def test_free_points_of_the_handout_are_reported(weak):
    done, document, _ = weak
    assert document["handout"] == {"score": 1, "free_points": [{"scenario": "version_is_set", "points": 1}]}
    assert "earns 1 point in scenario version_is_set" in flat(done.stdout)
    assert "Handout    1 point (version_is_set)" in done.stdout


def test_a_tight_time_limit_is_flagged(weak):
    _, document, _ = weak
    scenario = next(s for s in document["scenarios"] if s["id"] == "quadruple_is_fast")
    assert scenario["reference"]["margin"] < 5
    assert "quadruple_is_fast" in findings(document, FindingKind.TIGHT_TIME)


def test_a_task_b_scenario_calling_task_a_is_a_cross_task_charge(weak):
    done, document, _ = weak
    plus_one = mutant(document, "double_plus_one")
    assert plus_one["charges"] == [{"task": "b", "points": 2, "scenarios": ["quadruple_of_double"]}]
    assert "named mutant double_plus_one (a) costs 2 points in task b (quadruple_of_double)" in \
        findings(document, FindingKind.CROSS_TASK)["double_plus_one"]
    assert "give them their own version of what they need from a" in flat(done.stdout)


def test_a_surviving_mutant_is_shown_with_its_diff(weak):
    done, document, report = weak
    survivor = mutant(document, "quadruple_survivor")
    assert survivor["status"] == MutantStatus.SURVIVED.value and survivor["killed_by"] == []
    assert "-    return 4 * x\n+    return 4 * x if x < 100 else 0\n" in survivor["diff"]
    assert "Surviving mutants (" in done.stdout and "    +    return 4 * x if x < 100 else 0" in done.stdout
    stryker = next(iter(report["files"].values()))
    assert next(m for m in stryker["mutants"] if m["id"] == "quadruple_survivor")["status"] == "Survived"


def test_diagnoses_and_hidden_only_kills(weak):
    _, document, _ = weak
    assert mutant(document, "double_abs")["diagnosis"]["verdict"] == Verdict.NAMED.value
    assert mutant(document, "quadruple_tripled")["diagnosis"] == {
        "verdict": "wrong",
        "named": [{"scenario": "quadruple_values", "misconception": "quadruple() doubled only once", "control": False}]}
    assert "quadruple_tripled" in findings(document, FindingKind.UNUSED_MISCONCEPTION)
    assert mutant(document, "double_int")["killed_by"] == ["double_fraction"]
    assert "double_int" in findings(document, FindingKind.HIDDEN_ONLY)
    assert "version_is_set" in findings(document, FindingKind.KILLS_NOTHING)


def test_a_scenario_the_reference_fails_is_not_counted_in_the_kill_matrix(weak):
    done, document, _ = weak
    cells = mutant(document, "quadruple_survivor")["cells"]
    assert cells["quadruple_random_flaky"] == Cell.FAILED.value   # as it ran, but the reference fails it too
    assert "- the reference fails it too" in done.stdout


def test_the_sound_rubric_passes(tmp_path):
    done, document, report = audited(SOUND, tmp_path)
    assert done.returncode == 0, done.stdout
    assert document["passed"] and all(g["holds"] for g in document["guarantees"])
    assert {g["id"] for g in document["guarantees"]} == set(GUARANTEES)
    assert [t["score"] for t in document["tasks"]] == [1.0, 1.0]
    assert "Nothing to fix." in done.stdout and "Audit passed: every guarantee holds." in done.stdout
    assert {m["status"] for m in next(iter(report["files"].values()))["mutants"]} == {"Killed"}
    assert "[##############################] 40/40 graded (mutants)" in done.stderr   # the progress bar, at its end


def copy_of(folder: Path, tmp: Path) -> Path:
    """A copy of a fixture's exercises/ and solutions/ folders; returns the copied exercise folder."""
    root = folder.parent.parent
    shutil.copytree(root, tmp / root.name)
    return tmp / root.name / "exercises" / folder.name


def test_a_mutant_whose_edit_no_longer_applies_is_an_error_never_a_silent_pass(tmp_path):
    exercise = copy_of(SOUND, tmp_path)
    mutants = exercise.parent.parent / "solutions" / "sound" / "mutants.yaml"
    mutants.write_text(mutants.read_text() + "  - id: stale\n    task: cu\n    replace:\n"
                                             "      - {old: 'return x ** 3', new: 'return x'}\n")
    done = grader("audit", "--assignment", str(exercise))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"Error: {mutants}:16: mutants[2].replace[0].old: occurs 0 times in" in done.stderr
    assert "(the reference changed? update the mutant; the closest line is 'return x * x" in done.stderr
    assert done.stdout == ""


def test_a_stale_equivalent_exclusion_is_an_error(tmp_path):
    exercise = copy_of(SOUND, tmp_path)
    mutants = exercise.parent.parent / "solutions" / "sound" / "mutants.yaml"
    mutants.write_text(mutants.read_text() + "equivalent:\n  - {id: square/return_input/000000, reason: x}\n")
    done = grader("audit", "--assignment", str(exercise))
    assert done.returncode == 2
    assert "equivalent[0].id: no automatic mutant 'square/return_input/000000'" in done.stderr


def test_an_equivalent_mutant_is_excluded_from_the_score(tmp_path):
    exercise = copy_of(SOUND, tmp_path)
    mutants = exercise.parent.parent / "solutions" / "sound" / "mutants.yaml"
    first = grader("audit", "--assignment", str(exercise), "--seeds", "1", "--json", str(tmp_path / "a.json"))
    ids = [m["id"] for m in json.loads((tmp_path / "a.json").read_text())["mutants"] if m["id"].startswith("square/")]
    mutants.write_text(mutants.read_text() + f"equivalent:\n  - {{id: {ids[0]}, reason: pretend it is the same}}\n")
    done = grader("audit", "--assignment", str(exercise), "--seeds", "1", "--json", str(tmp_path / "b.json"))
    assert first.returncode == done.returncode == 0, done.stdout + done.stderr
    excluded = mutant(json.loads((tmp_path / "b.json").read_text()), ids[0])
    assert excluded["status"] == "equivalent" and excluded["equivalent_reason"] == "pretend it is the same"
    assert "1 equivalent excluded" in done.stdout and "(equivalent: not run)" in done.stdout


def test_a_task_function_missing_from_the_handout_is_a_spec_error(tmp_path):
    exercise = copy_of(SOUND, tmp_path)
    spec = exercise / "assignment.yaml"
    spec.write_text(spec.read_text().replace("functions: [cube]", "functions: [cubed]"))
    done = grader("audit", "--assignment", str(exercise))
    assert done.returncode == 2
    assert "tasks[1].functions[0]: 'cubed' is not defined in the handout (did you mean 'cube'?)" in done.stderr


def test_min_score_fails_a_task_below_it(tmp_path):
    exercise = copy_of(SOUND, tmp_path)
    spec = exercise.parent.parent / "exercises" / "sound" / "scenarios.py"
    spec.write_text(spec.read_text().replace("for x, value in zip([2.0, -1.0, 0.5], values):",
                                             "for x, value in zip([2.0, -1.0, 0.5], values[:0]):"))
    hidden = exercise.parent.parent / "solutions" / "sound" / "hidden_scenarios.py"
    hidden.write_text(hidden.read_text().replace('zip(xs, got["values"]):\n        expect_close(value, x ** 3',
                                                 'zip(xs, got["values"][:0]):\n        expect_close(value, x ** 3'))
    done = grader("audit", "--assignment", str(exercise), "--seeds", "2", "--min-score", "95", "--no-matrix")
    assert done.returncode == 1
    assert "low_score: task cu's mutation score is" in flat(done.stdout)
    assert "below the required 95%" in flat(done.stdout)
    assert "Kill matrix" not in done.stdout


# --------------------------------------------------------------------------- the shipped assignment

@pytest.fixture(scope="module")
def autodiff(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("autodiff")
    return audited(ROOT / "exercises" / "autodiff", tmp)


def test_the_autodiff_audit_runs_to_completion_with_every_guarantee_holding(autodiff):
    done, document, _ = autodiff
    assert done.returncode == 0, done.stdout
    assert all(g["holds"] for g in document["guarantees"])
    named = [m for m in document["mutants"] if m["kind"] == "named"]
    assert len(named) >= 35 and all(m["status"] == "killed" for m in named)
    assert all(t["score"] in (1.0, None) for t in document["tasks"])


def test_the_autodiff_audit_no_longer_finds_the_problems_of_issue_17(autodiff):
    """What issue 17 fixed, each assertion one of the findings it reported before."""
    _, document, _ = autodiff
    # no Task 1 bug costs Task 2 points, no tape bug Task 1 points, no engine slip Task 1 points
    for slip in ("stop_gradient_identity", "released_before_first_call", "engine_frees_every_record",
                 "engine_assign_not_accumulate", "engine_parents_deduplicated", "engine_no_visited_set"):
        assert mutant(document, slip)["charges"] == [], slip
    # no wrong diagnoses, and the engine slips are named by their own misconception
    assert findings(document, FindingKind.WRONG_DIAGNOSIS) == {}
    assert [m["id"] for m in document["mutants"] if m["kind"] == "named" and m["misconceptions"]
            and m["diagnosis"]["verdict"] != "named"] == []
    # no points for nothing
    assert [f for f in document["findings"] if f["kind"] == FindingKind.POINTS_FOR_NOTHING.value] == []


def test_the_autodiff_audit_sees_realistic_mistakes_issue_30(autodiff):
    """What issue 30 asked the audit to see: realistic operators on the tasks and the provided engine, each
    mutant's costs, diagnosis and provided-code note, and the guarantees it added."""
    done, document, _ = autodiff
    automatic = [m for m in document["mutants"] if m["kind"] == "automatic"]
    assert len(document["operators"]) >= 15 and len({m["operator"] for m in automatic}) >= 15
    assert len(automatic) >= 80 and sum(m["provided_code"] for m in automatic) >= 20
    holds = {g["id"]: g["holds"] for g in document["guarantees"]}
    assert all(holds[g] for g in ("no_points_for_lies", "engine_edits_said", "no_ambiguous_diagnosis", "no_cross_task"))
    for m in document["mutants"]:          # every mutant of the provided code that fails a task scenario says so
        if m["provided_note"] is not None:
            assert m["provided_note"]["not_said"] == [], m["id"]
    # the four wrong diagnoses, the two full-mark bugs and each class of slip: killed and rightly diagnosed
    for name in ("first_call_raises", "answers_one_call_too_many", "engine_records_twice", "engine_watch_ignored",
                 "no_records_is_used", "detach_copies_grad", "detach_flattens", "detach_loses_0d",
                 "used_up_state_on_the_class", "records_reversed"):
        named = mutant(document, name)
        assert named["status"] == "killed" and named["diagnosis"]["verdict"] == "named", name
        own = {c["task"]: c["points"] for c in named["costs"]}
        assert own.get(named["task"], 0) > 0 or named["task"] == "engine", name
    for lie in ("detach_impostor", "detach_lying_subclass", "detach_hard_coded"):
        assert mutant(document, lie)["lie"] and mutant(document, lie)["status"] == "killed"
    text = flat(done.stdout)
    assert "Equivalent mutants (" in text and "the contract names the error's class, not its message" in text
    assert "judge whether each is right" in text
    assert "operators made" in text and "of the provided code), beside" in text and "mutation score per task:" in text
