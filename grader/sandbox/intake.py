"""What a zygote's processes send the grader, accepted under bounds (grader side).

Everything on a zygote's result pipe is untrusted: after its import the submission owns that
pipe, and may write anything, as fast as it can. The grader's memory and time stay bounded
whatever arrives: each message is at most ``MAX_MESSAGE_BYTES`` (framing), strictly decoded with
its strings cut and lone surrogates replaced (decoding), and here every message is either taken
into a fixed slot (the first ``sandbox`` and import message, one result and one exit per run, a
few forbidden module names) or counted and dropped; bytes and messages are counted per run and
per submission, and past a budget the intake says so (:attr:`Intake.exceeded`), and the
launcher kills the zygote. Every step is O(1) per message.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from grader.sandbox.decoding import decode
from grader.sandbox.framing import MAX_MESSAGE_BYTES, FrameReader, ProtocolError
from grader.values import Raised

MAX_RUN_BYTES = 2 * MAX_MESSAGE_BYTES + 65536        # one full result, and room for the rest
MAX_SUBMISSION_BYTES = 64 * 1024 * 1024
MAX_RUN_MESSAGES = 64
MAX_SUBMISSION_MESSAGES = 8192
MAX_FORBIDDEN = 16          # distinct module names kept
MAX_PROBLEMS = 4            # problems kept per run (the rest are counted)


@dataclass
class Budget:
    """What one submission may still send, across all its zygotes (restarts after a timeout)."""

    bytes: int = MAX_SUBMISSION_BYTES
    messages: int = MAX_SUBMISSION_MESSAGES


class Intake:
    """One zygote's messages, taken in under bounds. ``expect(index)`` when a run's command is
    queued (it returns the run's token: an index may be run again); a result or exit counts for
    the earliest queued run that has not exited, and only if it names that run's index (a message
    naming another is dropped: forged, or out of order)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self._reader = FrameReader()
        self.isolation: tuple[str, ...] = ()
        self.forbidden: list[str] = []
        self.imported: dict | None = None      # the first "ready" or "import_error" message
        self._queued: deque[tuple[int, int]] = deque()  # (token, index) of runs sent, not yet exited
        self._tokens = 0
        self._results: dict[int, dict] = {}           # by token
        self._exits: dict[int, dict] = {}
        self._problems: dict[int | None, list[str]] = {}  # per token (None: between runs)
        self._run_bytes = 0
        self._run_messages = 0
        self.exceeded: str | None = None       # set once a budget is spent: the zygote must be killed

    # ------------------------------------------------------------------ runs

    def expect(self, index: int) -> int:
        """A run of scenario ``index`` was queued; its token."""
        self._tokens += 1
        self._queued.append((self._tokens, index))
        return self._tokens

    def result(self, token: int) -> dict | None:
        return self._results.get(token)

    def exit(self, token: int) -> dict | None:
        return self._exits.get(token)

    def problem(self, token: int) -> str | None:
        """The first problem with that run's messages, else one from between runs (taken)."""
        if self._problems.get(token):
            return self._problems[token][0]
        between = self._problems.get(None)
        return between.pop(0) if between else None

    def forget(self, token: int) -> None:
        """Drop what was kept for a run that is over."""
        self._results.pop(token, None)
        self._exits.pop(token, None)
        self._problems.pop(token, None)
        if self._queued and self._queued[0][0] == token:  # ended without an exit (a timeout)
            self._queued.popleft()

    @property
    def _active(self) -> int | None:
        return self._queued[0][0] if self._queued else None

    # ------------------------------------------------------------------ bytes in

    def feed(self, chunk: bytes) -> None:
        """Take in bytes read from the result pipe."""
        if self.exceeded is not None:
            return
        self._run_bytes += len(chunk)
        self.budget.bytes -= len(chunk)
        if self._run_bytes > MAX_RUN_BYTES:
            self.exceeded = f"the sandbox sent more than {MAX_RUN_BYTES:,} bytes for one scenario"
        elif self.budget.bytes < 0:
            self.exceeded = f"the submission's sandbox sent more than {MAX_SUBMISSION_BYTES:,} bytes in all"
        if self.exceeded is not None:
            return
        for body in self._reader.feed(chunk):
            self._message(body)
            if self.exceeded is not None:
                return

    def _message(self, body: bytes | ProtocolError) -> None:
        self._run_messages += 1
        self.budget.messages -= 1
        if self._run_messages > MAX_RUN_MESSAGES:
            self.exceeded = f"the sandbox sent more than {MAX_RUN_MESSAGES} messages for one scenario"
            return
        if self.budget.messages < 0:
            self.exceeded = f"the submission's sandbox sent more than {MAX_SUBMISSION_MESSAGES:,} messages in all"
            return
        try:
            if isinstance(body, ProtocolError):
                raise body
            message = checked_envelope(decode(body, numpy_now=False))  # numpy: at judging
        except ProtocolError as error:
            self._note(f"the sandbox sent an unreadable message: {error}")
            return
        kind = message["kind"]
        if kind == "sandbox":
            if not self.isolation:  # the first one is sent before any student code runs
                self.isolation = tuple(message["isolation"][:16])
        elif kind == "forbidden":
            if message["module"] not in self.forbidden and len(self.forbidden) < MAX_FORBIDDEN:
                self.forbidden.append(message["module"][:200])
        elif kind in ("ready", "import_error"):
            if self.imported is None:
                self.imported = message
        else:
            self._run_message(kind, message)

    def _run_message(self, kind: str, message: dict) -> None:
        active = self._active
        if active is None or message["index"] != self._queued[0][1]:
            self._note(f"the sandbox sent a {kind} for another scenario than the one running")
            return
        if kind == "result":
            if active in self._results:
                self._note("the scenario sent more than one result")
            else:
                self._results[active] = message
        else:
            self._exits[active] = message
            self._queued.popleft()
            self._run_bytes = self._run_messages = 0  # what follows is the next run's

    def _note(self, problem: str) -> None:
        problems = self._problems.setdefault(self._active, [])
        if len(problems) < MAX_PROBLEMS:
            problems.append(problem)


# The messages a sandbox may send, and the fields each must have (of these types).
_SHAPES: dict[str, dict[str, type]] = {"sandbox": {"isolation": list}, "ready": {}, "import_error": {"error": Raised},
           "result": {"index": int}, "exit": {"index": int}, "forbidden": {"module": str}}


def checked_envelope(message) -> dict:
    """Accept only the message shapes the sandbox may send; anything else is a protocol error."""
    if not isinstance(message, dict) or not isinstance(message.get("kind"), str):
        raise ProtocolError("a message must be an object with a kind")
    kind = message["kind"]
    if kind not in _SHAPES:
        raise ProtocolError(f"unknown message kind {kind[:40]!r}")
    for name, kind_of in _SHAPES[kind].items():
        if not isinstance(message.get(name), kind_of) or isinstance(message.get(name), bool):
            raise ProtocolError(f"a {kind} message needs {name}")
    if kind == "result":
        if ("observations" in message) == ("error" in message) or \
                set(message) - {"kind", "index", "observations", "error"}:
            raise ProtocolError("a result holds either observations or an error")
        if "error" in message and not isinstance(message["error"], Raised):
            raise ProtocolError("a result's error must be an exception record")
    if kind == "exit" and not (isinstance(message.get("code"), int) or isinstance(message.get("signal"), int)):
        raise ProtocolError("an exit message needs a code or a signal")
    if kind == "sandbox" and not all(isinstance(item, str) for item in message["isolation"]):
        raise ProtocolError("isolation must be a list of names")
    return message
