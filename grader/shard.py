"""A shard of a class: a deterministic slice of its students, for grading one class on N machines.

Shard ``i/N`` holds the students whose id hashes to ``i`` (1 to N): SHA-256 of the id's UTF-8 bytes
(the ids discovery gives are NFC already), its first 8 bytes as a number, modulo N. Not Python's
``hash`` (salted per process) and not a position in a list (which moves when one student is added),
so every machine, every rerun and every Python agrees on who is in which shard, and the N shards of
a class hold each student exactly once. ``grader merge`` puts their output folders back together.
"""

from __future__ import annotations

import re

from grader.digests import sha256
from grader.errors import UsageError
from grader.records import record

_FORM = re.compile(r"(\d+)/(\d+)")


@record
class Shard:
    index: int   # 1 to count
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/3"``: the second of three shards. A bad form is a :class:`UsageError` saying the right one."""
        match = _FORM.fullmatch(text.strip())
        if match is None:
            raise UsageError(f"--shard {text!r}: expected I/N, such as 1/3 (shard I of N)")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise UsageError(f"--shard {text}: shards are numbered 1 to N, and N is at least 1 (1/{max(count, 1)} "
                             f"to {max(count, 1)}/{max(count, 1)})")
        return cls(index, count)

    def holds(self, student_id: str) -> bool:
        return shard_of(student_id, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(student_id: str, count: int) -> int:
    """The shard (1 to ``count``) that holds ``student_id``."""
    number = int.from_bytes(sha256(student_id.encode("utf-8", "surrogateescape")).digest()[:8], "big")
    return number % count + 1
