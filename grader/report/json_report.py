"""The native JSON report (``grader check --json``, ``OUT/results/<id>.json``).

Our own versioned schema (``grader/schema/result.schema.json``), a superset of the
Gradescope-compatible core: ``score``, ``max_score`` and ``tests[]`` with ``name``, ``score``,
``max_score``, ``status``, ``output`` and ``visibility``.
"""

from __future__ import annotations

import json
from dataclasses import fields

from grader.report.text import explain
from grader.results import SubmissionResult

SCHEMA_ID = "https://autodiff-grader.invalid/schema/result-v1.json"
GRADESCOPE_VISIBILITY = {"public": "visible", "hidden": "after_published"}


def to_document(result: SubmissionResult, hidden_visibility: str = GRADESCOPE_VISIBILITY["hidden"]) -> dict:
    """The native document: every result field, plus the Gradescope-compatible ``tests``."""
    document = {"$schema": SCHEMA_ID, **result.to_dict()}
    document["tests"] = [
        {"name": f"{s.id}: {s.title}", "score": s.points, "max_score": s.max_points,
         "status": "passed" if s.passed else "failed",
         "output": "passed" if s.passed else explain(s, show_program=s.visibility == "public"),
         "visibility": GRADESCOPE_VISIBILITY["public"] if s.visibility == "public" else hidden_visibility}
        for s in result.scenarios]
    return document


def dumps(result: SubmissionResult) -> str:
    return json.dumps(to_document(result), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def from_document(document: dict) -> SubmissionResult:
    """Read a native document back (the Gradescope view and ``$schema`` are derived, so dropped)."""
    names = {f.name for f in fields(SubmissionResult)}
    return SubmissionResult.from_dict({k: v for k, v in document.items() if k in names})
