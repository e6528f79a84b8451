"""The ``grader`` console script and ``python -m grader``: start the sandbox first, then the CLI.

``grader check`` always needs a sandbox, and a sandbox's interpreter needs ~0.1 s to import numpy.
Starting it before click and the rest of the grader are even imported lets that time overlap with
ours; the ``check`` command then takes this sandbox instead of starting its own.
"""

from __future__ import annotations

import sys

_early = None


def main() -> None:
    global _early
    if sys.argv[1:2] == ["check"] and "--help" not in sys.argv and "-h" not in sys.argv:
        from grader.sandbox.launcher import Sandbox
        _early = Sandbox()
    from grader.cli import main as cli
    try:
        cli(prog_name="grader")
    finally:  # a usage error exits before `check` takes the sandbox: close it, with its job folder
        unused = take_early_sandbox()
        if unused is not None:
            unused.close()


def take_early_sandbox():
    """The sandbox started by :func:`main`, once (None when there is none)."""
    global _early
    sandbox, _early = _early, None
    return sandbox
