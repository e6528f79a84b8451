"""The grader's link to one zygote: its fresh pipes, what it sends, what is queued for it (grader side).

A :class:`ZygoteLink` lives exactly as long as its zygote. It reads the zygote's pipes without ever
blocking: results go to its :class:`~grader.sandbox.intake.Intake` (bounded), output to bounded
:class:`Capture` objects, and what the grader sends (the job, then each run's command) waits in an
outbox that the pump writes as the zygote reads, so the grader never blocks on a zygote that is
itself blocked writing output nobody reads. Its life is :mod:`grader.sandbox.launcher`'s, the runs
it carries :mod:`grader.sandbox.scheduler`'s.
"""

from __future__ import annotations

import os
import selectors
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from grader.sandbox.framing import frame
from grader.sandbox.intake import Intake
from grader.sandbox.safe_text import printable
from grader.sandbox.spawn import ZygotePipes

if TYPE_CHECKING:
    from grader.sandbox.cgroups import Container

_CHUNK = 65536


@dataclass
class Capture:
    """The first ``limit`` bytes of a stream; the rest is counted and dropped, never held."""

    limit: int
    data: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        self.data += chunk[:max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        text = printable(self.data.decode("utf-8", errors="replace"))
        return text + (f"\n... [{self.dropped:,} more bytes not shown]" if self.dropped else "")


class ZygoteLink:
    """One zygote's pipes, registered with the sandbox's selector, and what they carried."""

    def __init__(self, pipes: ZygotePipes, intake: Intake, container: Container | None,
                 selector: selectors.BaseSelector) -> None:
        self.pipes, self.intake, self.container = pipes, intake, container
        self.pid: int | None = None        # as the warden reported it (None: not started yet)
        self.reaper: int | None = None     # process 1 of its container (None: the zygote is the warden's child)
        self.ended: dict | None = None     # the warden's report that its container is over
        self.given_up = False              # it never said it started: wait for nothing more from it
        self._selector = selector
        self._outbox = bytearray()         # bytes for the job pipe, written as it takes them
        # Where output read now goes, per stream: the zygote's own pipes (import time, and anything
        # the zygote prints later, charged to the scenario running) and each output channel's.
        self.captures = (Capture(0), Capture(0))
        self.channel_captures = [(Capture(0), Capture(0)) for _ in pipes.channels_r]
        self.channel_tokens: list[int | None] = [None for _ in pipes.channels_r]  # the run each channel is for
        self._next_channel = 0
        self._roles: dict[int, tuple] = {pipes.results_r: ("results",), pipes.out_r: ("own", 0),
                                         pipes.err_r: ("own", 1)}
        for number, (out_r, err_r, res_r) in enumerate(pipes.channels_r):
            self._roles[out_r], self._roles[err_r] = ("channel", number, 0), ("channel", number, 1)
            self._roles[res_r] = ("channel", number, "results")
        for fd in self._roles:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        os.set_blocking(pipes.job_w, False)

    @property
    def namespaced(self) -> bool:
        """Whether the zygote said (before any student code ran) that it has a PID namespace."""
        return "pid-namespace" in self.intake.isolation

    @property
    def gone(self) -> bool:
        """Nothing more will come from it: the warden reported it over, or it was given up on."""
        return self.ended is not None or self.given_up

    def owns(self, fd: int) -> bool:
        return fd in self._roles or fd == self.pipes.job_w

    def next_channel(self) -> int:
        """The output channel for the next run: each in turn, so a channel is reused only after
        every other one (by then its run has been collected)."""
        channel = self._next_channel
        self._next_channel = (channel + 1) % len(self.channel_captures)
        return channel

    # ------------------------------------------------------------------ the job pipe

    def send(self, message: dict) -> None:
        """Queue a message for the zygote's job pipe; what the pipe takes now is written now."""
        self._outbox += frame(message)
        self.flush()

    def flush(self) -> None:
        try:
            while self._outbox:
                written = os.write(self.pipes.job_w, self._outbox[:_CHUNK * 4])
                del self._outbox[:written]
        except BlockingIOError:
            pass
        except OSError:  # the zygote is gone
            self._outbox.clear()
        registered = self.pipes.job_w in self._selector.get_map()
        if self._outbox and not registered:
            self._selector.register(self.pipes.job_w, selectors.EVENT_WRITE)
        elif not self._outbox and registered:
            self._selector.unregister(self.pipes.job_w)

    # ------------------------------------------------------------------ reading

    def readable(self, fd: int) -> None:
        """``fd`` (one of ours) is ready: write the outbox, or read what is there."""
        if fd == self.pipes.job_w:
            self.flush()
            return
        try:
            chunk = os.read(fd, _CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # every writer is gone: the zygote and whatever held a copy
            self._selector.unregister(fd)
            del self._roles[fd]
            return
        self._take(self._roles[fd], chunk)

    def drain(self, *, results: bool = True, own: bool = True, channel: int | None = None, every: bool = False) -> None:
        """Read what dead (or slow) writers left in these pipes, without waiting for more."""
        for fd, role in list(self._roles.items()):
            wanted = every or (results and role[0] == "results") or (own and role[0] == "own") or (
                channel is not None and role[:2] == ("channel", channel))
            for _ in range(64 if wanted else 0):
                try:
                    chunk = os.read(fd, _CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                self._take(role, chunk)

    def _take(self, role: tuple, chunk: bytes) -> None:
        if role[0] == "results":
            self.intake.feed(chunk)
        elif role[0] == "own":
            self.captures[role[1]].add(chunk)
        elif role[2] == "results":
            self.intake.feed_run(self.channel_tokens[role[1]], chunk)
        else:
            self.channel_captures[role[1]][role[2]].add(chunk)

    def close(self) -> None:
        """Read what is left, unregister and close the grader's ends."""
        self.drain(every=True)
        for fd in self.pipes.grader_ends():
            if fd in self._selector.get_map():
                self._selector.unregister(fd)
            try:
                os.close(fd)
            except OSError:
                pass
        self._roles = {}
