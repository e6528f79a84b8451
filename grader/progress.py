"""How far a batch is: what a progress display needs (a leaf module; the batch fills it in)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

ETA_AFTER = 3       # completions before an ETA is shown: the first ones include the sandboxes' start
RATE_WINDOW = 20    # the ETA follows the rate of the last completions, not the whole run's


@dataclass
class Progress:
    total: int
    done: int = 0            # with a result or a problem, graded now or before
    graded: int = 0          # graded by this run (what the rate counts)
    reused: int = 0
    below_full: int = 0      # graded submissions below full marks
    ungradable: int = 0      # submissions that could not be graded at all
    running: list[tuple[str, float]] = field(default_factory=list)  # (student, seconds so far), longest first
    started: float = field(default_factory=time.monotonic)
    _finished: deque = field(default_factory=lambda: deque(maxlen=RATE_WINDOW), repr=False)

    def graded_one(self, below_full: bool, ungradable: bool) -> None:
        self.done += 1
        self.graded += 1
        self.below_full += below_full and not ungradable
        self.ungradable += ungradable
        self._finished.append(time.monotonic())

    @property
    def rate(self) -> float:
        """Submissions graded per second, over the last few."""
        if len(self._finished) < 2:
            return self.graded / max(time.monotonic() - self.started, 1e-9)
        return (len(self._finished) - 1) / max(self._finished[-1] - self._finished[0], 1e-9)

    @property
    def eta(self) -> float | None:
        """Seconds left, once enough submissions have finished to say."""
        if self.graded < ETA_AFTER or self.rate <= 0:
            return None
        return (self.total - self.done) / self.rate
