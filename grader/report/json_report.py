"""The native JSON report (``grader check --json``, ``OUT/results/<id>.json``).

Our own versioned schema (``grader/schema/result.schema.json``), a superset of the
Gradescope-compatible core: ``score``, ``max_score`` and ``tests[]`` with ``name``, ``score``,
``max_score``, ``status``, ``output`` and ``visibility``. Read a document back with
:meth:`grader.results.SubmissionResult.from_dict` (the ``tests`` view and ``$schema`` are derived).
"""

from __future__ import annotations

import json

from grader.report.text import explain
from grader.results import SubmissionResult
from grader.visibility import DEFAULT_HIDDEN_SHOWN_TO, ShownTo, Visibility

SCHEMA_ID = "https://autodiff-grader.invalid/schema/result-v2.json"


def to_document(result: SubmissionResult, hidden_visibility: ShownTo | str = DEFAULT_HIDDEN_SHOWN_TO) -> dict:
    """The native document: every result field, plus the Gradescope-compatible ``tests``, where
    hidden scenarios are shown ``hidden_visibility``."""
    hidden = ShownTo(hidden_visibility)
    document = {"$schema": SCHEMA_ID, **result.to_dict()}
    document["tests"] = [
        {"name": f"{s.id}: {s.title}", "score": s.points, "max_score": s.max_points,
         "status": "passed" if s.passed else "failed",
         "output": "passed" if s.passed else explain(s, show_program=s.visibility is Visibility.PUBLIC),
         "visibility": (ShownTo.VISIBLE if s.visibility is Visibility.PUBLIC else hidden).value}
        for s in result.scenarios]
    return document


def dumps(result: SubmissionResult, hidden_visibility: ShownTo | str = DEFAULT_HIDDEN_SHOWN_TO) -> str:
    return json.dumps(to_document(result, hidden_visibility), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
