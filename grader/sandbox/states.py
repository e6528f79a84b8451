"""A sandbox's states, the ways its work ends, and which move leads where. Pure; a leaf module.

A :class:`~grader.sandbox.launcher.Sandbox` is always in one :class:`State`; what moves it is a
request of its driver (``prestart``, ``begin``) or one :meth:`~grader.sandbox.launcher.Sandbox.end`
with an :class:`End`. :data:`MOVES` is the whole table; a move it lacks is refused with a
:class:`StateError` (a bug of the caller's), before anything is done::

                      WARM      READY     RUNNING   STOPPING  ABORTED   CLOSED
    prestart(job)     READY     -         -         -         -         -
    begin(job)        RUNNING   RUNNING   RUNNING*  RUNNING*  -         -
    end(KILL)         WARM      STOPPING  STOPPING  STOPPING  ABORTED   CLOSED
    end(SUBMISSION)   WARM      WARM      WARM      WARM      ABORTED   CLOSED
    end(ABORT)        ABORTED   ABORTED   ABORTED   ABORTED   ABORTED   CLOSED
    end(CLOSE)        CLOSED    CLOSED    CLOSED    CLOSED    CLOSED    CLOSED

``*``: the same submission again, in a fresh zygote: the last one timed out, crashed or spent its
budget, and the runner begins it again for the runs that are left (its message budget goes on).
An end that finds nothing to end does nothing (``end(KILL)`` of a warm sandbox, any end but CLOSE
of an aborted or closed one). ABORTED is sticky: an abort comes from another thread (Ctrl-C), and
whatever the driving thread does next, only CLOSE leaves it.
"""

from __future__ import annotations

from enum import Enum


class State(Enum):
    """Where a sandbox is in its life."""

    WARM = "warm"          # no submission: its warden waits (one that died is replaced by the next start)
    READY = "ready"        # a zygote started ahead (prestart) waits for its job, holding nothing of any submission
    RUNNING = "running"    # a submission's job is in the current zygote: its import and its runs
    STOPPING = "stopping"  # the current zygote's container was killed; the warden has not reported it empty yet
    ABORTED = "aborted"    # its processes were killed from another thread: nothing starts in it again
    CLOSED = "closed"      # nothing is left of it: no process, pipe, job folder, cgroup or sandbox uid


class End(Enum):
    """How :meth:`Sandbox.end <grader.sandbox.launcher.Sandbox.end>` ends what the sandbox holds."""

    KILL = "kill"              # SIGKILL the current zygote's container now, without waiting for it
    SUBMISSION = "submission"  # end the submission: its container provably empty, its job folder gone
    ABORT = "abort"            # from any thread: kill every process of the sandbox now, start nothing more
    CLOSE = "close"            # the submission, the warden, the cgroup, the sandbox uid: everything


PRESTART, BEGIN = "prestart", "begin"
Move = End | str  # an End, PRESTART or BEGIN

_LIVE = (State.WARM, State.READY, State.RUNNING, State.STOPPING)


def _row(*targets: State | None) -> dict[State, State]:
    return {state: target for state, target in zip(State, targets, strict=True) if target is not None}


MOVES: dict[Move, dict[State, State]] = {
    PRESTART: _row(State.READY, None, None, None, None, None),
    BEGIN: _row(State.RUNNING, State.RUNNING, State.RUNNING, State.RUNNING, None, None),
    End.KILL: _row(State.WARM, State.STOPPING, State.STOPPING, State.STOPPING, State.ABORTED, State.CLOSED),
    End.SUBMISSION: _row(*(State.WARM for _ in _LIVE), State.ABORTED, State.CLOSED),
    End.ABORT: _row(*(State.ABORTED for _ in _LIVE), State.ABORTED, State.CLOSED),
    End.CLOSE: _row(*(State.CLOSED for _ in State)),
}


class StateError(RuntimeError):
    """A sandbox was asked for a move its state does not allow (see :data:`MOVES`)."""


def after(state: State, move: Move) -> State:
    """The state ``move`` leads to from ``state``; StateError when the table has no such move."""
    target = MOVES[move].get(state)
    if target is None:
        article = "an" if state.value[0] in "aeiou" else "a"
        raise StateError(f"{article} {state.value} sandbox cannot {move.value if isinstance(move, End) else move}")
    return target
