"""What the sandbox reports about one submission's import and each scenario run: raw, untrusted
content in trusted framing. The sandbox's scheduler (:mod:`grader.sandbox.scheduler`) produces these;
judging (:mod:`grader.judge`) consumes them. A leaf module."""

from __future__ import annotations

from dataclasses import dataclass

from grader.values import Raised


@dataclass
class ImportOutcome:
    """How the submission's import in the sandbox ended, and what it printed."""

    ok: bool
    error: Raised | None = None        # the exception the student's module raised at import
    problem: str | None = None         # timeout, crash, protocol: in the grader's words
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0


@dataclass
class RunOutcome:
    """What one scenario run produced. Untrusted content, trusted framing."""

    observations: object = None
    error: Raised | None = None        # the program raised (student code, as far as we know)
    has_result: bool = False
    problem: str | None = None         # malformed, oversize or duplicate message
    exit: dict | None = None           # {"code": n} or {"signal": n}, as the zygote reported it
    timed_out: bool = False
    sandbox_died: bool = False
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0
    time_limit: float | None = None    # the wall-clock limit it ran under (the runner sets it)
    where: str | None = None           # timed out: the stack it sent when asked where it was (plain text)
    output_capped: bool = False        # it printed more than the output limit keeps
