"""The audit in the mutation-testing report format of Stryker's mutation-testing-elements (schema
version 2), so that existing viewers (``mutation-test-report-app``, the Stryker dashboard) can show
it: the reference is the mutated file, scenarios are the tests. Pure.

Status mapping: killed -> ``Killed`` (``Timeout`` when only time limits caught it, ``RuntimeError``
when the mutant could not be graded at all), survived -> ``Survived``, excluded as equivalent ->
``Ignored`` with the reason as ``statusReason``.
"""

from __future__ import annotations

import json
import os

from grader.audit.mutant import changed_span
from grader.audit.report import AuditReport
from grader.audit.verdicts import Cell, MutantOutcome, MutantStatus

THRESHOLDS = {"high": 95, "low": 80}


def to_document(report: AuditReport, project_root: str) -> dict:
    """``project_root``: the folder the file paths are made relative to."""
    tests: dict[str, list[dict]] = {}
    for scenario in report.scenarios:
        tests.setdefault(_relative(scenario.file, project_root), []).append(
            {"id": scenario.id, "name": f"{scenario.id}: {scenario.title} ({scenario.visibility}, "
                                       f"{scenario.points:g} points)"})
    all_ids = [s.id for s in report.scenarios]
    return {
        "$schema": "https://git.io/mutation-testing-schema",
        "schemaVersion": "2",
        "thresholds": dict(THRESHOLDS),
        "projectRoot": project_root,
        "files": {_relative(report.reference_path, project_root): {
            "language": "python", "source": report.reference_source,
            "mutants": [_mutant(outcome, report, all_ids) for outcome in report.analysis.outcomes]}},
        "testFiles": {path: {"tests": items} for path, items in tests.items()},
        "framework": {"name": "autodiff-grader audit", "version": report.grader_version},
    }


def dumps(report: AuditReport, project_root: str) -> str:
    return json.dumps(to_document(report, project_root), indent=2, ensure_ascii=False) + "\n"


def _mutant(outcome: MutantOutcome, report: AuditReport, all_ids: list[str]) -> dict:
    mutant = outcome.mutant
    span = changed_span(report.reference_source, mutant.source)
    item: dict[str, object] = {
        "id": mutant.id,
        "mutatorName": mutant.operator or f"named:{mutant.task}",
        "description": mutant.description,
        "replacement": span.replacement,
        "location": {"start": {"line": span.start_line, "column": span.start_column},
                     "end": {"line": span.end_line, "column": span.end_column}},
        "status": _status(outcome),
    }
    if outcome.status is MutantStatus.EQUIVALENT:
        item["statusReason"] = f"equivalent: {mutant.equivalent}"
        return item
    item["killedBy"] = list(outcome.killed_by)
    item["coveredBy"] = all_ids
    item["testsCompleted"] = len(outcome.cells)
    if outcome.error:
        item["statusReason"] = outcome.error
    elif outcome.killed_by:
        item["statusReason"] = "; ".join(f"{sid}: {outcome.cells[sid].value}" for sid in outcome.killed_by[:5])
    return item


def _status(outcome: MutantOutcome) -> str:
    if outcome.status is MutantStatus.EQUIVALENT:
        return "Ignored"
    if outcome.status is MutantStatus.SURVIVED:
        return "Survived"
    if outcome.error:
        return "RuntimeError"
    if all(outcome.cells[sid] is Cell.TIMEOUT for sid in outcome.killed_by):
        return "Timeout"
    return "Killed"


def _relative(path: str, root: str) -> str:
    try:
        return os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:   # another drive, on Windows
        return path
