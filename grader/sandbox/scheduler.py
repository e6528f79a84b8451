"""The runs of one submission in its sandbox: its import, then its programs, each in a fresh fork.

A :class:`Scheduler` is a sandbox's ``runs`` (:class:`~grader.sandbox.launcher.Sandbox` owns the
zygote it schedules into, and its whole life). It sends each program as a run command of its own
and keeps the next ones waiting in the job pipe while scenarios run (:data:`QUEUED_AHEAD`), so the
zygote goes on without a round trip through the grader. Public programs run first, up to the
sandbox's ``at_once`` side by side; hidden ones after them, one at a time: a hidden command is
never queued while a public scenario, whose output students see, runs or waits (see
docs/security.md). Each run writes to an output channel of its own, so what a scenario prints or
sends is never taken for another's. It enforces wall-clock limits (a run out of time is asked where
it is, :data:`~grader.sandbox.framing.WHERE_SIGNAL`, then its container is killed), kills a run's
strays before its channel is read for the last time, and collects raw, bounded, strictly decoded
outcomes (:class:`ImportOutcome`, :class:`RunOutcome`) for the runner to judge. It never interprets
what a scenario observed.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from grader.outcomes import ImportOutcome, RunOutcome
from grader.sandbox import proctree
from grader.sandbox.framing import WHERE_SIGNAL
from grader.sandbox.link import Capture
from grader.sandbox.states import End

if TYPE_CHECKING:
    from grader.sandbox.link import ZygoteLink
    from grader.sandbox.spawn import WardenProcess

STARTUP_SECONDS = 60.0  # a clean interpreter plus numpy, even on a loaded machine

# How long a timed-out run may take to say where it is (WHERE_SIGNAL) before its container is killed:
# a Python loop answers within milliseconds; code stuck in one long C call does not answer at all.
WHERE_SECONDS = 0.3

# Commands waiting in the job pipe beside the runs running: the zygote goes on through them while
# the grader is busy elsewhere (judging, reading another sandbox's results, loading the checks).
QUEUED_AHEAD = 4


class Host(Protocol):
    """What a scheduler uses of the sandbox it schedules in (a :class:`~grader.sandbox.launcher.Sandbox`)."""

    warden_started: float    # when its warden was spawned (monotonic clock)
    process: WardenProcess   # its warden

    @property
    def zygote(self) -> ZygoteLink | None: ...

    @property
    def zygote_gone(self) -> bool: ...

    def pump(self, done: Callable[[], bool], deadline: float) -> bool: ...

    def end(self, how: End) -> None: ...


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One program to run: its index (what its outcome is yielded with), its wall-clock limit in
    seconds, its command's scenario payload (``commands.run``), and whether it is a hidden one."""

    index: int
    seconds: float
    scenario: dict
    hidden: bool = False


@dataclass
class _Queued:
    """A run whose command is in the job pipe: which scenario, its limit, its output channel."""

    index: int
    seconds: float
    channel: int
    written: float
    token: int


class _Streams:
    """The runs still to send, in their order: the public ones, ``at_once`` at a time, then the
    hidden ones, alone; the first hidden one only once no public run is queued or running."""

    def __init__(self, runs: Iterable[RunRequest | tuple], at_once: int) -> None:
        self._runs = iter(runs)
        self._public_at_once = at_once
        self._next: RunRequest | None = None
        self.hidden = False  # the hidden stream has begun

    @property
    def at_once(self) -> int:
        return 1 if self.hidden else self._public_at_once

    def take(self, in_flight: int) -> RunRequest | None:
        """The next run to send, with ``in_flight`` runs sent and not collected yet; None when there
        is none, or when it is the first hidden one and public runs are still in flight."""
        if self._next is None:
            following = next(self._runs, None)
            if following is None:
                return None
            self._next = following if isinstance(following, RunRequest) else RunRequest(*following)
        if self._next.hidden and not self.hidden:
            if in_flight:
                return None
            self.hidden = True
        elif not self._next.hidden and self.hidden:
            raise ValueError(f"run {self._next.index} is public but comes after a hidden one: public ones go first")
        run, self._next = self._next, None
        return run


class Scheduler:
    """The import and the runs of the submission in ``sandbox``'s current zygote (see the module doc).

    ``at_once``: how many public scenarios may run at the same time; the sandbox makes each zygote
    :attr:`channels` output channels, for those running and those queued."""

    def __init__(self, sandbox: Host, at_once: int = 1) -> None:
        self._sandbox = sandbox
        self.at_once = max(1, at_once)
        self.output_limit = 65536  # bytes of stdout and of stderr kept per run: the job's (Sandbox.begin)

    @property
    def channels(self) -> int:
        """Output channels per zygote: one for each run that may be running, and each one queued."""
        return self.at_once + QUEUED_AHEAD

    # ------------------------------------------------------------------ the import

    def wait_ready(self, import_seconds: float) -> ImportOutcome:
        """Wait for the submission's import (the import limit starts once the sandbox is up)."""
        sandbox = self._sandbox
        begin = time.monotonic()
        zygote = sandbox.zygote
        if zygote is not None:
            zygote.captures = self._fresh_captures()
        outcome = ImportOutcome(ok=False)
        startup = max(sandbox.warden_started + STARTUP_SECONDS, begin + 10.0)  # a warm warden answers at once
        if zygote is None or not sandbox.pump(lambda: zygote.pid is not None, startup) or (zygote.pid or 0) <= 0:
            outcome.problem = self._death_or("the sandbox did not start")
            if zygote is not None:
                zygote.given_up = True
        else:
            intake = zygote.intake
            sandbox.pump(lambda: intake.imported is not None or intake.exceeded is not None,
                         time.monotonic() + import_seconds)
            if intake.exceeded is not None:
                outcome.problem = intake.exceeded
                sandbox.end(End.KILL)
            elif intake.imported is not None:
                outcome.ok = intake.imported["kind"] == "ready"
                outcome.error = intake.imported.get("error")
            elif sandbox.zygote_gone:
                outcome.problem = self._death_or("the sandbox stopped before the import finished")
            else:
                outcome.timed_out = True
                outcome.problem = f"importing the submission took longer than {import_seconds:g} s"
                sandbox.end(End.KILL)
        outcome.duration = time.monotonic() - begin
        if zygote is not None:
            zygote.drain(results=False)
            outcome.stdout, outcome.stderr = (capture.text() for capture in zygote.captures)
        if outcome.ok:  # no scenario has started yet: every other process, the zygote's children too, is a stray
            self._sweep(with_zygote_children=True)
        return outcome

    # ------------------------------------------------------------------ the runs

    def run(self, index: int, seconds: float, scenario: dict) -> RunOutcome:
        """Run one ``scenario`` (a ``Program.payload``), public; see :meth:`run_all`."""
        return next(self.run_all([RunRequest(index, seconds, scenario)]))[1]

    def run_all(self, runs: Iterable[RunRequest | tuple]) -> Iterator[tuple[int, RunOutcome]]:
        """Run each of ``runs`` (:class:`RunRequest`, or a tuple of its fields), each in a fresh
        fork; yield ``(index, outcome)`` in the order of ``runs``. Public runs go first, up to
        :attr:`at_once` at the same time; hidden ones after every public one has come back, alone
        (a public run after a hidden one is a ValueError). A run may take its ``seconds`` of
        wall-clock time, counted from the end of the run before it in that order.

        ``runs`` is consumed ahead: up to :data:`QUEUED_AHEAD` commands wait in the job pipe while
        scenarios run. After a timeout or a dead zygote the iteration ends (the zygote is killed,
        with any run beside it and the commands queued): the submission must begin again
        (``Sandbox.begin``) for the runs that are left; the runner does that.
        """
        streams = _Streams(runs, self.at_once)
        queued: deque[_Queued] = deque()
        previous_end = 0.0
        while True:
            self._fill(streams, queued)
            if not queued:
                return
            current = queued.popleft()
            outcome = self._await(current, max(current.written, previous_end))
            previous_end = time.monotonic()
            if outcome.timed_out or outcome.sandbox_died:
                yield current.index, outcome
                return
            self._fill(streams, queued)  # the zygote has the next commands while the caller judges this one
            yield current.index, outcome

    def _fill(self, streams: _Streams, queued: deque[_Queued]) -> None:
        """Queue commands until ``at_once`` run and QUEUED_AHEAD more wait in the job pipe (or none is
        left, or the next is hidden and public runs are in flight)."""
        zygote = self._sandbox.zygote
        while zygote is not None and len(queued) < min(len(zygote.channel_captures), streams.at_once + QUEUED_AHEAD):
            run = streams.take(len(queued))
            if run is None:
                return
            self._send(zygote, run, streams.at_once, queued)

    def _send(self, zygote: ZygoteLink, run: RunRequest, at_once: int, queued: deque[_Queued]) -> None:
        """Send ``run``'s command on the zygote's next output channel (emptied for it)."""
        channel = zygote.next_channel()
        zygote.channel_captures[channel] = self._fresh_captures()
        token = zygote.channel_tokens[channel] = zygote.intake.expect(run.index)
        command = {"run": run.index, "channel": channel, "scenario": run.scenario}
        if at_once > 1:
            command["at_once"] = at_once
        zygote.send(command)
        queued.append(_Queued(run.index, run.seconds, channel, written=time.monotonic(), token=token))

    def _await(self, run: _Queued, begin: float) -> RunOutcome:
        """Read until ``run`` has ended, or kill the container once its time is up."""
        sandbox = self._sandbox
        outcome = RunOutcome()
        zygote = sandbox.zygote
        if sandbox.zygote_gone or zygote is None:
            outcome.sandbox_died = True
            return outcome
        zygote.captures = zygote.channel_captures[run.channel]
        intake = zygote.intake
        finished = sandbox.pump(lambda: intake.exit(run.token) is not None or intake.exceeded is not None,
                                begin + run.seconds)
        outcome.duration = time.monotonic() - begin
        if intake.exceeded is not None and intake.exit(run.token) is None:
            outcome.problem = intake.exceeded
            outcome.sandbox_died = True
            sandbox.end(End.KILL)
        elif not finished and intake.exit(run.token) is None:
            if sandbox.zygote_gone:
                outcome.sandbox_died = True
            else:
                outcome.timed_out = True
                self._ask_where(zygote, run.token)
                sandbox.end(End.KILL)  # the zygote too: it cannot be trusted to stop the program
        elif not sandbox.zygote_gone:
            self._sweep(with_zygote_children=False)  # first: a stray's last words land here, not in a later run
        zygote.drain(results=False, channel=run.channel)  # its result may still be in its pipe
        self._collect(zygote, run.token, outcome)
        outcome.where = intake.where(run.token) if outcome.timed_out else None
        intake.forget(run.token)
        outcome.output_capped = any(capture.dropped for capture in zygote.captures)
        outcome.stdout, outcome.stderr = (capture.text() for capture in zygote.captures)
        return outcome

    def _ask_where(self, zygote: ZygoteLink, token: int) -> None:
        """Before the kill: ask the zygote's process group (its own session: the zygote, its scenario
        processes and what they forked) where the run is. The scenario process answers on its channel
        (plain text, shown as it is); the zygote ignores the signal. At most WHERE_SECONDS."""
        if zygote.pid is None or zygote.pid <= 0 or zygote.ended is not None:
            return
        try:
            os.killpg(zygote.pid, WHERE_SIGNAL)
        except (ProcessLookupError, PermissionError, OverflowError):
            return
        intake = zygote.intake
        self._sandbox.pump(lambda: intake.where(token) is not None or intake.exit(token) is not None
                           or intake.exceeded is not None, time.monotonic() + WHERE_SECONDS)

    def _collect(self, zygote: ZygoteLink, token: int, outcome: RunOutcome) -> None:
        """Move what the intake kept for the run ``token`` into ``outcome``."""
        intake = zygote.intake
        result, ended = intake.result(token), intake.exit(token)
        if result is not None:
            outcome.has_result = True
            outcome.observations = result.get("observations")
            outcome.error = result.get("error")
        if ended is not None:
            outcome.exit = {k: v for k, v in ended.items() if k in ("code", "signal")}
        elif not outcome.timed_out:
            outcome.sandbox_died = True
        if outcome.problem is None:
            outcome.problem = intake.problem(token)

    # ------------------------------------------------------------------ strays and captures

    def _sweep(self, with_zygote_children: bool) -> int:
        """Kill every process of the current container but the zygote: the strays a scenario left.
        Orphans come to the container's reaper (process 1 of its PID namespace) or, without one, to
        the warden (a subreaper), while the scenario processes, the next one included, are the
        zygote's children: those are spared, unless ``with_zygote_children`` (after the import,
        when no scenario has started yet)."""
        zygote, warden = self._sandbox.zygote, self._sandbox.process
        if zygote is None or zygote.pid is None or zygote.ended is not None or warden.poll() is not None:
            return 0
        roots = [zygote.reaper or warden.pid] + ([zygote.pid] if with_zygote_children else [])
        return proctree.kill_children(roots, keep=frozenset({zygote.pid}))

    def _fresh_captures(self) -> tuple[Capture, Capture]:
        """Empty stdout and stderr captures, each bounded by the job's output limit."""
        return Capture(self.output_limit), Capture(self.output_limit)

    def _death_or(self, default: str) -> str:
        code = self._sandbox.process.poll()
        if code is None:
            return default
        return default + (f" (killed by signal {-code})" if code < 0 else f" (exit code {code})")
