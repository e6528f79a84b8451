"""The audit's renderers (console, JSON, Stryker's format) on an analysis made by hand. Pure."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from test_audit_analysis import SCENARIOS, result, run

from grader.audit import console, json_report, stryker
from grader.audit.mutant import Kind, Mutant
from grader.audit.report import AuditReport
from grader.audit.verdicts import GUARANTEES, Cell, FindingKind, MutantStatus, Severity, Verdict
from grader.results import Status

ROOT = Path(__file__).resolve().parent.parent
AUDIT_SCHEMA = json.loads((ROOT / "grader" / "schema" / "audit.schema.json").read_text())
STRYKER_SCHEMA = json.loads((ROOT / "tests" / "schemas" / "mutation_testing_report.schema.json").read_text())
REFERENCE = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return 2 * x\n"


def report() -> AuditReport:
    mutants = [Mutant("slow", Kind.AUTOMATIC, "a", REFERENCE.replace("x + 1", "x + 2"), "f adds 2", function="f",
                      operator="return_constant"),
               Mutant("kept", Kind.NAMED, "b", REFERENCE.replace("2 * x", "3 * x"), "g triples", ("g() tripled",)),
               Mutant("same", Kind.AUTOMATIC, "a", REFERENCE.replace("x + 1", "1 + x"), "f swapped",
                      equivalent="addition commutes")]
    analysis = run(mutants, {"slow": result({"a1": Status.TIMEOUT}), "kept": result()})
    return AuditReport("t", "A test", "d", "mod.py", "solutions/t/mod.py", REFERENCE, (("a", "A"), ("b", "B")),
                       tuple(SCENARIOS), (0, 1, 2), 0, None, analysis, {"reference": 1.0, "mutants": 2.0, "total": 3.0},
                       "0.1.0")


def test_the_json_follows_its_schema_and_the_schema_lists_every_value():
    document = json_report.to_document(report())
    jsonschema.Draft202012Validator(AUDIT_SCHEMA).validate(document)
    properties = AUDIT_SCHEMA["properties"]
    mutant = properties["mutants"]["items"]["properties"]
    finding = properties["findings"]["items"]["properties"]
    assert set(mutant["cells"]["additionalProperties"]["enum"]) == {c.value for c in Cell}
    assert set(mutant["status"]["enum"]) == {s.value for s in MutantStatus}
    assert set(mutant["diagnosis"]["oneOf"][1]["properties"]["verdict"]["enum"]) == {v.value for v in Verdict}
    assert set(finding["kind"]["enum"]) == {k.value for k in FindingKind}
    assert set(finding["severity"]["enum"]) == {s.value for s in Severity}
    assert properties["guarantees"]["items"]["properties"]["id"]["enum"] == list(GUARANTEES)


def test_the_json_holds_the_kill_matrix_and_the_diffs():
    document = json_report.to_document(report())
    slow = next(m for m in document["mutants"] if m["id"] == "slow")
    assert slow["cells"] == {"a1": "timeout", "a0": "passed", "b1": "passed", "b2": "passed"}
    assert "-    return x + 1\n+    return x + 2\n" in slow["diff"]
    assert next(m for m in document["mutants"] if m["id"] == "same")["equivalent_reason"] == "addition commutes"


def test_the_stryker_report_maps_statuses_and_locations():
    document = stryker.to_document(report(), str(ROOT))
    jsonschema.Draft7Validator(STRYKER_SCHEMA).validate(document)
    mutants = {m["id"]: m for m in document["files"]["solutions/t/mod.py"]["mutants"]}
    assert {k: m["status"] for k, m in mutants.items()} == {"slow": "Timeout", "kept": "Survived", "same": "Ignored"}
    assert mutants["slow"]["location"] == {"start": {"line": 2, "column": 1}, "end": {"line": 2, "column": 17}}
    assert mutants["slow"]["replacement"] == "    return x + 2" and mutants["slow"]["killedBy"] == ["a1"]
    assert mutants["same"]["statusReason"] == "equivalent: addition commutes"
    assert [t["id"] for t in next(iter(document["testFiles"].values()))["tests"]] == [s.id for s in SCENARIOS]


def test_the_console_says_what_to_fix_and_which_guarantees_fail():
    text = console.render(report())
    assert f"Audit FAILED: 1 of {len(GUARANTEES)} guarantees do not hold (named_killed)." in text
    assert "FAIL named_survives: named mutant kept (b) survives every scenario: g triples" in text
    assert "(equivalent: not run)" in text and "Surviving mutants (1)" in text
    assert "  slow                                         T.. ." in text   # public columns, then hidden
    assert max(len(line) for line in text.splitlines() if "fix:" in line) <= console.WIDTH


def test_the_console_shows_each_mutant_s_costs_and_diagnosis_the_equivalents_and_the_counts():
    text = console.render(report())
    slow = next(line for line in text.splitlines() if line.startswith("  slow "))
    assert slow.endswith("costs a 2")        # the task it was charged, and what
    assert "Equivalent mutants (1, declared in mutants.yaml, not run)" in text
    assert "  same: addition commutes" in text
    flat = " ".join(text.split())
    assert "1 operator made 2 automatic mutants (0 of the provided code), beside 1 named one;" in flat
    assert "mutation score per task: a 100%; 0 min 3 s." in flat


def test_an_automatic_mutant_that_names_a_misconception_is_listed_to_judge():
    mutants = [Mutant("guess", Kind.AUTOMATIC, "a", REFERENCE.replace("x + 1", "x - 1"), "f subtracts", function="f",
                      operator="sign_lost")]
    from test_audit_analysis import WRONG
    analysis = run(mutants, {"guess": result({"a1": (Status.FAILED, WRONG)})})
    made = AuditReport("t", "A test", "d", "mod.py", "solutions/t/mod.py", REFERENCE, (("a", "A"), ("b", "B")),
                       tuple(SCENARIOS), (0,), 0, None, analysis, {"reference": 1.0, "mutants": 2.0, "total": 3.0},
                       "0.1.0", misconception_keys={WRONG: "SIGN_FORGOTTEN"})
    text = " ".join(console.render(made).split())
    assert "Automatic mutants whose feedback names a misconception (1): judge whether each is right" in text
    assert "guess [f subtracts]: SIGN_FORGOTTEN (a1)" in text
    assert "costs a 2; SIGN_FORGOTTEN" in text
    document = json_report.to_document(made)
    jsonschema.Draft202012Validator(AUDIT_SCHEMA).validate(document)
    guess, = document["mutants"]
    assert guess["diagnosis"]["verdict"] == "to_judge" and guess["costs"] == [{"task": "a", "points": 2}]
