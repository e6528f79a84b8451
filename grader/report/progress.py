"""Progress of a batch on the terminal: one live line on a TTY, plain periodic lines otherwise."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

from grader.progress import Progress
from grader.report.outputs import BatchEnd, Output

PLAIN_EVERY = 5.0   # seconds between lines when the output is a file or a pipe
SLOW = 3.0          # a submission running this long is named on the line
WIDTH = 79


class ProgressDisplay(Output):
    """Draws a progress object (anything with ``done`` and ``total``) as ``describe`` words it:
    a batch's by default, the audit's with its own bar. As an output of a batch, it draws the
    batch's progress, and ends its line when the batch ends."""

    def __init__(self, stream: TextIO, live: bool, describe: Callable[[Any], str] | None = None):
        self.stream, self.live = stream, live
        self.describe = describe or globals()["describe"]
        self._last = 0.0
        self._drawn = False
        self._stopped = False

    def update(self, progress: Any) -> None:
        if self._stopped:
            return
        complete = progress.done >= progress.total
        if not self.live and not complete and time.monotonic() - self._last < PLAIN_EVERY:
            return
        self._last = time.monotonic()
        line = self.describe(progress)
        if self.live:
            self.stream.write("\r" + line.ljust(WIDTH)[:WIDTH] + ("\n" if complete else ""))
            self._drawn = not complete
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def stop(self) -> None:
        """No more lines (Ctrl-C): end the live line so what follows starts on its own."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
        self._stopped = True

    def progress(self, progress: Progress) -> None:
        self.update(progress)

    def finished(self, end: BatchEnd) -> None:
        self.stop()

    def interrupted(self, progress: Progress) -> None:
        self.stop()


def describe(progress: Progress) -> str:
    """``[12/60] 3.4/s, ETA 0:14, 5 below full marks, ...``; once all are done, ``[60/60] done in 0:18``
    instead of a rate and an ETA, and the rate only once this run has graded one (a resumed batch's
    reused results take no time)."""
    count = f"[{progress.done}/{progress.total}]"
    if progress.done >= progress.total:
        elapsed = time.monotonic() - progress.started
        parts = [f"{count} done in {int(elapsed // 60)}:{int(elapsed % 60):02d}"]
    else:
        eta = progress.eta
        left = "ETA --:--" if eta is None else f"ETA {int(eta // 60)}:{int(eta % 60):02d}"
        parts = [f"{count} {progress.rate:.1f}/s", left] if progress.graded else [f"{count} {left}"]
    if progress.below_full:
        parts.append(f"{progress.below_full} below full marks")
    if progress.ungradable:
        parts.append(f"{progress.ungradable} ungradable")
    if progress.reused:
        parts.append(f"{progress.reused} reused")
    slow = [f"{student} ({seconds:.0f} s)" for student, seconds in progress.running if seconds >= SLOW]
    if slow:
        parts.append("running " + ", ".join(slow))
    return ", ".join(parts)
