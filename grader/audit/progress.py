"""The audit's progress bar: one live line on a terminal, a line every few seconds otherwise."""

from __future__ import annotations

import time
from typing import TextIO

from grader.audit.run import AuditProgress

PLAIN_EVERY = 5.0   # seconds between lines when the stream is a file or a pipe
BAR = 30


class ProgressBar:
    def __init__(self, stream: TextIO, live: bool):
        self.stream, self.live = stream, live
        self._last = 0.0

    def update(self, progress: AuditProgress) -> None:
        complete = progress.done >= progress.total
        if not self.live and not complete and time.monotonic() - self._last < PLAIN_EVERY:
            return
        self._last = time.monotonic()
        line = describe(progress)
        if self.live:
            self.stream.write("\r" + line.ljust(79)[:79] + ("\n" if complete else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def describe(progress: AuditProgress) -> str:
    filled = BAR * progress.done // max(progress.total, 1)
    eta = progress.eta
    eta_text = "--:--" if eta is None else f"{int(eta // 60)}:{int(eta % 60):02d}"
    return (f"[{'#' * filled}{'.' * (BAR - filled)}] {progress.done}/{progress.total} graded "
            f"({progress.phase}), ETA {eta_text}")
