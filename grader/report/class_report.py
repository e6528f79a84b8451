"""The class report of an output folder, where this grader has one: the one call ``grader merge``
makes to remake OUT's report from its results, as ``grader grade`` does at its end.

The report is issue 19's (``grader.reporting.write_report``, merged into main while this branch was
built). Where it is missing, :func:`rebuild` returns None; tests/test_merge.py fails if the module
comes without that function, so the branches cannot be merged into a grader that silently skips it.
"""

from __future__ import annotations

import importlib
from pathlib import Path

REPORT_MODULE = "grader.reporting"
REPORT_FUNCTION = "write_report"   # (out: Path) -> ReportFiles, whose .html is the report written


def rebuild(out: Path) -> Path | None:
    """Write OUT's class report from the results in OUT; the report file, or None without a report."""
    try:
        module = importlib.import_module(REPORT_MODULE)
    except ModuleNotFoundError as missing:
        if missing.name != REPORT_MODULE:
            raise  # the report exists but one of its own imports failed: a bug to see, not to skip
        return None
    files = getattr(module, REPORT_FUNCTION)(out)
    return getattr(files, "html", files)
