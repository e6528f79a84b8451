"""A mutant: the reference submission with one deliberate mistake, and how to show the mistake. Pure."""

from __future__ import annotations

import difflib
from enum import Enum

from grader.records import record


class Kind(str, Enum):
    NAMED = "named"           # written by the instructor in mutants.yaml, with its misconception
    AUTOMATIC = "automatic"   # made by an operator of grader.audit.operators


@record
class Mutant:
    id: str
    kind: Kind
    task: str                              # the task whose code it changes
    source: str                            # the whole mutated submission file
    description: str                       # one line: what changed
    misconceptions: tuple[str, ...] = ()   # named: the sentences a right diagnosis may name
    function: str | None = None            # the function changed, when it is one function
    operator: str | None = None            # automatic: the operator's name
    may_cost: tuple[str, ...] = ()         # named: other tasks it is declared to cost points in
    equivalent: str | None = None          # automatic: why it behaves as the reference (excluded)
    lie: bool = False                      # named: a lie (an impostor, a hard-coded answer) that must earn no points


@record
class Span:
    """Where a mutant differs from the reference: lines and columns are 1-based, ``end`` exclusive
    (as in the mutation-testing report format), and the text that replaces the span."""

    start_line: int
    start_column: int
    end_line: int
    end_column: int
    replacement: str


def diff(reference: str, mutant: str, name: str) -> str:
    """A unified diff, reference to mutant, two lines of context."""
    lines = difflib.unified_diff(reference.splitlines(keepends=True), mutant.splitlines(keepends=True),
                                 f"reference/{name}", f"mutant/{name}", n=2)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def changed_span(reference: str, mutant: str) -> Span:
    """The smallest run of whole lines of ``reference`` that the mutant replaces."""
    old, new = reference.splitlines(), mutant.splitlines()
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    replacement = "\n".join(new[start:end_new])
    if end_old == start:   # a pure insertion: an empty span before line start + 1
        line = min(start + 1, max(len(old), 1))
        return Span(line, 1, line, 1, replacement + "\n")
    return Span(start + 1, 1, end_old, len(old[end_old - 1]) + 1, replacement)
