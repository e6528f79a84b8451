"""The audit's progress bar: one live line on a terminal, a line every few seconds otherwise."""

from __future__ import annotations

from typing import TextIO

from grader.audit.run import AuditProgress
from grader.report.progress import ProgressDisplay

BAR = 30


def progress_bar(stream: TextIO, live: bool) -> ProgressDisplay:
    """The batch's display, drawing the audit's bar."""
    return ProgressDisplay(stream, live, describe)


def describe(progress: AuditProgress) -> str:
    filled = BAR * progress.done // max(progress.total, 1)
    eta = progress.eta
    eta_text = "--:--" if eta is None else f"{int(eta // 60)}:{int(eta % 60):02d}"
    return (f"[{'#' * filled}{'.' * (BAR - filled)}] {progress.done}/{progress.total} graded "
            f"({progress.phase}), ETA {eta_text}")
