"""Progress of a batch on the terminal: one live line on a TTY, plain periodic lines otherwise."""

from __future__ import annotations

import time
from typing import TextIO

from grader.progress import Progress

PLAIN_EVERY = 5.0  # seconds between lines when the output is a file or a pipe


class ProgressDisplay:
    def __init__(self, stream: TextIO, live: bool):
        self.stream, self.live = stream, live
        self._last = 0.0

    def update(self, progress: Progress) -> None:
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


def describe(progress: Progress) -> str:
    eta = progress.eta
    eta_text = "--:--" if eta is None else f"{int(eta // 60)}:{int(eta % 60):02d}"
    reused = f", {progress.reused} reused" if progress.reused else ""
    return (f"[{progress.done}/{progress.total}] {progress.rate:.1f}/s, ETA {eta_text}, "
            f"{progress.failures} below full marks{reused}")
