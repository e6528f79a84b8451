"""The audit as JSON (schema ``grader/schema/audit.schema.json``). Pure."""

from __future__ import annotations

import json
import math

from grader.audit.mutant import diff
from grader.audit.report import AuditReport
from grader.audit.verdicts import GUARANTEES, MutantOutcome

SCHEMA_VERSION = 1


def to_document(report: AuditReport) -> dict:
    analysis = report.analysis
    reference = {row.id: row for row in analysis.reference}
    kills: dict[str, int] = {}
    for outcome in analysis.outcomes:
        for sid in outcome.killed_by:
            kills[sid] = kills.get(sid, 0) + 1
    holds = analysis.guarantees()
    return {
        "schema_version": SCHEMA_VERSION,
        "grader_version": report.grader_version,
        "assignment": report.assignment,
        "title": report.title,
        "assignment_digest": report.assignment_digest,
        "passed": report.passed,
        "seeds": list(report.seeds),
        "mutant_seed": report.mutant_seed,
        "mutants_file": report.mutants_file,
        "provided_task": report.provided_task,
        "operators": sorted({o.mutant.operator for o in analysis.outcomes if o.mutant.operator}),
        "timings": dict(report.timings),
        "guarantees": [{"id": name, "holds": holds[name], "description": description}
                       for name, (_, description) in GUARANTEES.items()],
        "tasks": [{"id": score.task, "title": dict(report.tasks).get(score.task, "the provided code"),
                   "named_killed": score.named_killed,
                   "named_total": score.named_total, "automatic_killed": score.automatic_killed,
                   "automatic_total": score.automatic_total, "automatic_equivalent": score.automatic_equivalent,
                   "score": score.score} for score in analysis.tasks],
        "scenarios": [{"id": s.id, "title": s.title, "task": s.task, "points": s.points,
                       "visibility": s.visibility, "time_limit": s.time_limit,
                       "reference": {"passed_seeds": list(reference[s.id].passed_seeds),
                                     "failed": [{"seed": seed, "cell": cell, "summary": summary}
                                                for seed, cell, summary in reference[s.id].failed],
                                     "slowest": reference[s.id].slowest,
                                     "margin": _finite(reference[s.id].margin)},
                       "kills": kills.get(s.id, 0)} for s in report.scenarios],
        "handout": {"score": analysis.handout_score,
                    "free_points": [{"scenario": sid, "points": points} for sid, points in analysis.free_points]},
        "mutants": [_mutant(outcome, report) for outcome in analysis.outcomes],
        "findings": [{"kind": f.kind.value, "severity": f.severity.value, "subject": f.subject,
                      "message": f.message, "fix": f.fix} for f in analysis.findings],
    }


def dumps(report: AuditReport) -> str:
    return json.dumps(to_document(report), indent=2, ensure_ascii=False) + "\n"


def _mutant(outcome: MutantOutcome, report: AuditReport) -> dict:
    mutant = outcome.mutant
    diagnosis = outcome.diagnosis
    return {
        "id": mutant.id, "kind": mutant.kind.value, "task": mutant.task, "description": mutant.description,
        "function": mutant.function, "operator": mutant.operator, "misconceptions": list(mutant.misconceptions),
        "may_cost": list(mutant.may_cost), "status": outcome.status.value, "equivalent_reason": mutant.equivalent,
        "error": outcome.error, "cells": {sid: cell.value for sid, cell in outcome.cells.items()},
        "killed_by": list(outcome.killed_by), "points_lost": outcome.points_lost,
        "charges": [{"task": c.task, "points": c.points, "scenarios": list(c.scenarios)} for c in outcome.charges],
        "costs": [{"task": c.task, "points": c.points} for c in outcome.costs],
        "lie": mutant.lie, "provided_code": mutant.task == report.provided_task,
        "provided_note": None if outcome.noted is None else {"said": list(outcome.noted),
                                                              "not_said": list(outcome.unnoted)},
        "diagnosis": None if diagnosis is None else {
            "verdict": diagnosis.verdict.value,
            "named": [{"scenario": sid, "misconception": text, "control": sid in diagnosis.controls}
                      for sid, text in diagnosis.named]},
        "diff": diff(report.reference_source, mutant.source, report.submission),
    }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
