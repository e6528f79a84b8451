"""What a zygote's processes send the grader, accepted under bounds (grader side).

Everything on a zygote's result pipe is untrusted: after its import the submission owns that
pipe, and may write anything, as fast as it can. The grader's memory and time stay bounded
whatever arrives: each message is at most ``MAX_MESSAGE_BYTES`` (framing), strictly decoded with
its strings cut and lone surrogates replaced (decoding), and here every message is either taken
into a fixed slot (the first ``sandbox`` and import message, one result and one exit per run, a
few forbidden module names) or counted and dropped; bytes and messages are counted per run and
per submission, and past a budget the intake says so (:attr:`Intake.exceeded`), and the
scheduler kills the zygote. Every step is O(1) per message.
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
    queued (it returns the run's token: an index may be run again). The zygote's own pipe
    (:meth:`feed`) carries its reports; each run's channel (:meth:`feed_run`) carries that run's
    result, which counts only if it names the run's index. An exit counts for the earliest of the
    first ``window`` queued runs that names its index (the runs that may be running at once; one,
    unless the sandbox runs scenarios side by side); a message naming another is dropped: forged,
    or out of order."""

    def __init__(self, budget: Budget, window: int = 1) -> None:
        self.budget = budget
        self.window = window
        self._reader = FrameReader()
        self.isolation: tuple[str, ...] = ()
        self.forbidden: list[str] = []
        self.imported: dict | None = None      # the first "ready" or "import_error" message
        self._queued: deque[tuple[int, int]] = deque()  # (token, index) of runs sent, not yet exited
        self._tokens = 0
        self._runs: dict[int, _RunIntake] = {}        # by token, until forgotten
        self._results: dict[int, dict] = {}           # by token
        self._wheres: dict[int, str] = {}             # by token: where a run was when its time was up
        self._exits: dict[int, dict] = {}
        self._problems: dict[int | None, list[str]] = {}  # per token (None: between runs)
        self._own = _Count()                   # the zygote's own pipe, since the last exit
        self.exceeded: str | None = None       # set once a budget is spent: the zygote must be killed

    # ------------------------------------------------------------------ runs

    def expect(self, index: int) -> int:
        """A run of scenario ``index`` was queued; its token."""
        self._tokens += 1
        self._queued.append((self._tokens, index))
        self._runs[self._tokens] = _RunIntake(index)
        return self._tokens

    def result(self, token: int) -> dict | None:
        return self._results.get(token)

    def exit(self, token: int) -> dict | None:
        return self._exits.get(token)

    def where(self, token: int) -> str | None:
        """The stack a run sent when the grader asked where it was (its time was up), if any."""
        return self._wheres.get(token)

    def problem(self, token: int) -> str | None:
        """The first problem with that run's messages, else one from between runs (taken)."""
        if self._problems.get(token):
            return self._problems[token][0]
        between = self._problems.get(None)
        return between.pop(0) if between else None

    def forget(self, token: int) -> None:
        """Drop what was kept for a run that is over."""
        self._results.pop(token, None)
        self._wheres.pop(token, None)
        self._exits.pop(token, None)
        self._problems.pop(token, None)
        self._runs.pop(token, None)
        for queued in list(self._queued)[:self.window]:  # ended without an exit (a timeout)
            if queued[0] == token:
                self._queued.remove(queued)

    @property
    def _active(self) -> int | None:
        return self._queued[0][0] if self._queued else None

    # ------------------------------------------------------------------ bytes in

    def feed(self, chunk: bytes) -> None:
        """Take in bytes read from the zygote's own result pipe."""
        if self._counted(self._own, len(chunk)):
            for body in self._reader.feed(chunk):
                message = self._message(self._own, body, self._active)
                if message is not None:
                    self._own_message(message)
                if self.exceeded is not None:
                    return

    def feed_run(self, token: int | None, chunk: bytes) -> None:
        """Take in bytes read from the channel of the run ``token`` (None: no run was given it)."""
        run = self._runs.get(token) if token is not None else None
        if token is None or run is None:  # a forgotten run's stray, or nothing queued there: counted, never read
            self._counted(self._own, len(chunk))
            return
        if self._counted(run.count, len(chunk)):
            for body in run.reader.feed(chunk):
                message = self._message(run.count, body, token)
                if message is not None:
                    self._run_message(token, run, message)
                if self.exceeded is not None:
                    return

    def _counted(self, count: _Count, size: int) -> bool:
        """Count ``size`` bytes against the run's and the submission's budgets; False once spent."""
        if self.exceeded is not None:
            return False
        count.bytes += size
        self.budget.bytes -= size
        if count.bytes > MAX_RUN_BYTES:
            self.exceeded = f"the sandbox sent more than {MAX_RUN_BYTES:,} bytes for one scenario"
        elif self.budget.bytes < 0:
            self.exceeded = f"the submission's sandbox sent more than {MAX_SUBMISSION_BYTES:,} bytes in all"
        return self.exceeded is None

    def _message(self, count: _Count, body: bytes | ProtocolError, token: int | None) -> dict | None:
        """The message of one frame, counted; None when it is over budget or unreadable."""
        count.messages += 1
        self.budget.messages -= 1
        if count.messages > MAX_RUN_MESSAGES:
            self.exceeded = f"the sandbox sent more than {MAX_RUN_MESSAGES} messages for one scenario"
            return None
        if self.budget.messages < 0:
            self.exceeded = f"the submission's sandbox sent more than {MAX_SUBMISSION_MESSAGES:,} messages in all"
            return None
        try:
            if isinstance(body, ProtocolError):
                raise body
            return checked_envelope(decode(body, numpy_now=False))  # numpy: at judging
        except ProtocolError as error:
            self._note(token, f"the sandbox sent an unreadable message: {error}")
            return None

    def _own_message(self, message: dict) -> None:
        kind = message["kind"]
        if kind == "sandbox":
            if not self.isolation:  # the first one is sent before any student code runs
                self.isolation = tuple(message["isolation"][:16])
        elif kind == "forbidden":
            self._forbidden(message)
        elif kind in ("ready", "import_error"):
            if self.imported is None:
                self.imported = message
        elif kind == "exit":
            self._exit(message)
        else:
            self._note(self._active, f"the sandbox sent a {kind} outside a scenario's channel")

    def _exit(self, message: dict) -> None:
        for queued in list(self._queued)[:self.window]:
            token, index = queued
            if index == message["index"]:
                self._exits[token] = message
                self._queued.remove(queued)
                self._own = _Count()  # what follows is the next run's
                return
        self._note(self._active, "the sandbox sent an exit for another scenario than the ones running")

    def _run_message(self, token: int, run: _RunIntake, message: dict) -> None:
        kind = message["kind"]
        if kind == "forbidden":
            self._forbidden(message)
        elif kind == "where" and message["index"] == run.index:
            self._wheres.setdefault(token, message["stack"])   # the first; a stray's later ones are dropped
        elif kind != "result" or message["index"] != run.index:
            self._note(token, f"the sandbox sent a {kind} for another scenario than the one running")
        elif token in self._results:
            self._note(token, "the scenario sent more than one result")
        else:
            self._results[token] = message

    def _forbidden(self, message: dict) -> None:
        if message["module"] not in self.forbidden and len(self.forbidden) < MAX_FORBIDDEN:
            self.forbidden.append(message["module"][:200])

    def _note(self, token: int | None, problem: str) -> None:
        problems = self._problems.setdefault(token, [])
        if len(problems) < MAX_PROBLEMS:
            problems.append(problem)


@dataclass
class _Count:
    """Bytes and messages taken in on one pipe for one run."""

    bytes: int = 0
    messages: int = 0


class _RunIntake:
    """A run's own channel: its frames, and what they counted."""

    __slots__ = ("index", "reader", "count")

    def __init__(self, index: int) -> None:
        self.index = index
        self.reader = FrameReader()
        self.count = _Count()


# The messages a sandbox may send, and the fields each must have (of these types).
_SHAPES: dict[str, dict[str, type]] = {"sandbox": {"isolation": list}, "ready": {}, "import_error": {"error": Raised},
           "result": {"index": int}, "exit": {"index": int}, "forbidden": {"module": str},
           "where": {"index": int, "stack": str}}


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
