"""Isolation levels as a requirement: what ``--require-isolation`` asks of every sandbox of a batch.

A sandbox reports what it achieved as names (a result's ``isolation``, docs/security.md says what
each stops): ``rlimits`` always, ``uid-drop`` when the grader ran as root, ``landlock-vN`` with the
Landlock ABI it applied, ``seccomp``, then its container (``cgroup``, ``pids-limit``,
``memory-limit``, ``pid-namespace``, ``net-namespace``, ``ipc-namespace``, ``mount-namespace``,
``user-namespace``). The levels are not a
line (a uid drop and Landlock stop different things), so a requirement names the mechanisms it
needs, and a level meets it when it has each of them, Landlock at that ABI or newer:
``uid-drop``, ``landlock-v6``, ``uid-drop,landlock-v6,seccomp``.

A requirement names only the mechanisms a machine can announce before it grades (the first four):
the container is made per submission, from what the kernel allows at that moment, so it is
recorded in each result rather than promised.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum

from grader.errors import UsageError
from grader.records import record


class Mechanism(str, Enum):
    """The mechanisms a sandbox reports (``landlock`` with its ABI: ``landlock-v6``)."""

    RLIMITS = "rlimits"
    UID_DROP = "uid-drop"
    LANDLOCK = "landlock"
    SECCOMP = "seccomp"


_CONTAINER = ("cgroup", "pids-limit", "memory-limit", "pid-namespace", "net-namespace", "ipc-namespace",
              "mount-namespace", "user-namespace")


_LANDLOCK = re.compile(r"landlock(?:-v(\d+))?")


@record
class Requirement:
    uid_drop: bool = False
    landlock: int = 0          # the oldest Landlock ABI accepted; 0: Landlock not required
    seccomp: bool = False

    @classmethod
    def parse(cls, text: str) -> Requirement:
        """``"uid-drop,landlock-v6,seccomp"`` (commas or spaces between names; ``landlock`` alone is ABI 1)."""
        uid_drop, abi, seccomp = False, 0, False
        names = [name for name in re.split(r"[,\s]+", text.strip().lower()) if name]
        if not names:
            raise UsageError("--require-isolation needs a level, such as uid-drop,landlock-v6")
        for name in names:
            landlock = _LANDLOCK.fullmatch(name)
            if name == Mechanism.UID_DROP.value:
                uid_drop = True
            elif name == Mechanism.SECCOMP.value:
                seccomp = True
            elif landlock is not None:
                abi = max(abi, int(landlock.group(1) or 1))
            elif name in _CONTAINER:
                raise UsageError(f"--require-isolation {text!r}: {name!r} is part of each submission's container, "
                                 "made from what the kernel allows at that moment, so it cannot be required "
                                 "in advance (every result's isolation records it); require rlimits, uid-drop, "
                                 "landlock-vN and seccomp")
            elif name != Mechanism.RLIMITS.value:
                raise UsageError(f"--require-isolation {text!r}: {name!r} is not an isolation mechanism; use "
                                 "rlimits, uid-drop, landlock-vN (N the oldest Landlock ABI to accept) and "
                                 "seccomp, such as uid-drop,landlock-v6,seccomp")
        return cls(uid_drop, abi, seccomp)

    def met_by(self, achieved: Sequence[str]) -> bool:
        """Whether a sandbox that achieved ``achieved`` (a result's ``isolation``) meets this."""
        names = set(achieved)
        abis = [int(match.group(1) or 1) for name in names if (match := _LANDLOCK.fullmatch(name))]
        return (Mechanism.RLIMITS.value in names and (not self.uid_drop or Mechanism.UID_DROP.value in names)
                and (not self.landlock or max(abis, default=0) >= self.landlock)
                and (not self.seccomp or Mechanism.SECCOMP.value in names))

    def __str__(self) -> str:
        return ",".join([Mechanism.RLIMITS.value] + ([Mechanism.UID_DROP.value] if self.uid_drop else [])
                        + ([f"landlock-v{self.landlock}"] if self.landlock else [])
                        + ([Mechanism.SECCOMP.value] if self.seccomp else []))


def predicted(slot: int = 0) -> tuple[str, ...]:
    """What a sandbox started by this process in ``slot`` will report of the mechanisms a
    requirement names (its container aside), decided as the sandbox decides it
    (:func:`grader.sandbox.isolation.plan_isolation`), without starting one."""
    from grader.sandbox.isolation import plan_isolation
    plan = plan_isolation(slot)
    return ((Mechanism.RLIMITS.value,) + ((Mechanism.UID_DROP.value,) if plan.uid is not None else ())
            + ((f"landlock-v{plan.landlock_abi}",) if plan.landlock_abi else ())
            + ((Mechanism.SECCOMP.value,) if plan.seccomp else ()))


def announced(achieved: Sequence[str]) -> tuple[str, ...]:
    """Of what a sandbox achieved, the part a requirement can name (what :func:`predicted` foretells)."""
    return tuple(name for name in achieved if name not in _CONTAINER)


def shown(achieved: Sequence[str]) -> str:
    """A level for a message: ``rlimits, uid-drop, landlock-v6``."""
    return ", ".join(achieved) or "none reported"
