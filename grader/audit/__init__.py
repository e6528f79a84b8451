"""``grader audit``: prove a rubric before students see it.

The audit grades, through the ordinary runner and sandbox, the reference on every scenario for many
seeds, the handout as students receive it, and *mutants* of the reference (named ones from the
instructor's ``mutants.yaml`` and automatic ones from syntax-tree operators, on the task functions and
on the provided code), then reports what the scenarios catch and what they miss.

Pure core: :mod:`~grader.audit.functions` (finding and normalising functions),
:mod:`~grader.audit.mutants_file` (the named mutants and their edits), :mod:`~grader.audit.operators`
(automatic mutants: the driver and the simple changes), :mod:`~grader.audit.slips` (the realistic
operators), :mod:`~grader.audit.lies` (the task-wide lies), :mod:`~grader.audit.edits` (splicing),
:mod:`~grader.audit.misconceptions`, :mod:`~grader.audit.verdicts` (the vocabulary),
:mod:`~grader.audit.analysis` (kill matrix to outcomes), :mod:`~grader.audit.findings` (outcomes to what
to fix), :mod:`~grader.audit.console`, :mod:`~grader.audit.json_report`, :mod:`~grader.audit.stryker`.
Shell: :mod:`~grader.audit.run` (files, sandboxes, progress).
"""

from __future__ import annotations

__all__ = ["AuditOptions", "run_audit"]


def __getattr__(name):
    if name in __all__:
        from grader.audit import run
        return getattr(run, name)
    raise AttributeError(name)
