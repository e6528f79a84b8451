"""Isolation levels as a requirement: what ``--require-isolation`` asks of every sandbox of a batch.

A sandbox reports what it achieved as names (a result's ``isolation``): ``rlimits`` always,
``uid-drop`` when the grader ran as root, ``landlock-vN`` with the Landlock ABI it applied
(docs/security.md says what each stops). The levels are not a line (a uid drop and Landlock stop
different things), so a requirement names the mechanisms it needs, and a level meets it when it
has each of them, Landlock at that ABI or newer: ``uid-drop``, ``landlock-v6``, ``uid-drop,landlock-v6``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from grader.errors import UsageError


class Mechanism(str, Enum):
    """The mechanisms a sandbox reports (``landlock`` with its ABI: ``landlock-v6``)."""

    RLIMITS = "rlimits"
    UID_DROP = "uid-drop"
    LANDLOCK = "landlock"


_LANDLOCK = re.compile(r"landlock(?:-v(\d+))?")


@dataclass(frozen=True)
class Requirement:
    uid_drop: bool = False
    landlock: int = 0          # the oldest Landlock ABI accepted; 0: Landlock not required

    @classmethod
    def parse(cls, text: str) -> Requirement:
        """``"uid-drop,landlock-v6"`` (commas or spaces between names; ``landlock`` alone is ABI 1)."""
        uid_drop, abi = False, 0
        names = [name for name in re.split(r"[,\s]+", text.strip().lower()) if name]
        if not names:
            raise UsageError("--require-isolation needs a level, such as uid-drop,landlock-v6")
        for name in names:
            landlock = _LANDLOCK.fullmatch(name)
            if name == Mechanism.UID_DROP.value:
                uid_drop = True
            elif landlock is not None:
                abi = max(abi, int(landlock.group(1) or 1))
            elif name != Mechanism.RLIMITS.value:
                raise UsageError(f"--require-isolation {text!r}: {name!r} is not an isolation mechanism; use "
                                 "rlimits, uid-drop and landlock-vN (N the oldest Landlock ABI to accept), "
                                 "such as uid-drop,landlock-v6")
        return cls(uid_drop, abi)

    def met_by(self, achieved: Sequence[str]) -> bool:
        """Whether a sandbox that achieved ``achieved`` (a result's ``isolation``) meets this."""
        names = set(achieved)
        abis = [int(match.group(1) or 1) for name in names if (match := _LANDLOCK.fullmatch(name))]
        return (Mechanism.RLIMITS.value in names and (not self.uid_drop or Mechanism.UID_DROP.value in names)
                and (not self.landlock or max(abis, default=0) >= self.landlock))

    def __str__(self) -> str:
        return ",".join([Mechanism.RLIMITS.value] + ([Mechanism.UID_DROP.value] if self.uid_drop else [])
                        + ([f"landlock-v{self.landlock}"] if self.landlock else []))


def predicted(slot: int = 0) -> tuple[str, ...]:
    """What a sandbox started by this process in ``slot`` will report, decided as the sandbox
    decides it (:func:`grader.sandbox.isolation.plan_isolation`), without starting one."""
    from grader.sandbox.isolation import plan_isolation
    plan = plan_isolation(slot)
    return ((Mechanism.RLIMITS.value,) + ((Mechanism.UID_DROP.value,) if plan.uid is not None else ())
            + ((f"landlock-v{plan.landlock_abi}",) if plan.landlock_abi else ()))


def shown(achieved: Sequence[str]) -> str:
    """A level for a message: ``rlimits, uid-drop, landlock-v6``."""
    return ", ".join(achieved) or "none reported"
