"""How far a batch is: what a progress display needs (a leaf module; the batch fills it in)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Progress:
    total: int
    done: int = 0            # with a result or a problem, graded now or before
    graded: int = 0          # graded by this run (what the rate counts)
    reused: int = 0
    failures: int = 0        # submissions below full marks, or not gradable
    started: float = field(default_factory=time.monotonic)

    @property
    def rate(self) -> float:
        return self.graded / max(time.monotonic() - self.started, 1e-9)

    @property
    def eta(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None
