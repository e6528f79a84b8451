"""The class report of an output folder, where this grader has one: the one call every command
that remakes OUT's derived files from its results makes (``grader merge``; ``grader grade``).

The report itself is issue 19's (``grader/report/html.py``, built on a branch of its own). Until it
lands there is none, and :func:`rebuild` returns None; once it lands, ``html.write_class_report(out)``
is what is called (tests/test_merge.py fails if the module comes without that function, so the two
branches cannot be merged into a grader that silently skips its report).
"""

from __future__ import annotations

import importlib
from pathlib import Path

REPORT_MODULE = "grader.report.html"
REPORT_FUNCTION = "write_class_report"   # (out: Path) -> Path: the report file written


def rebuild(out: Path) -> Path | None:
    """Write OUT's class report from the results in OUT; the file written, or None without a report."""
    try:
        module = importlib.import_module(REPORT_MODULE)
    except ModuleNotFoundError as missing:
        if missing.name != REPORT_MODULE:
            raise  # the report exists but one of its own imports failed: a bug to see, not to skip
        return None
    return getattr(module, REPORT_FUNCTION)(out)
