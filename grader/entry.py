"""The ``grader`` console script and ``python -m grader``: start the sandbox first, then the CLI.

``grader check`` always needs a sandbox, and a sandbox's interpreter needs ~0.1 s to import numpy.
Starting its warden before click and the rest of the grader are even imported lets that time
overlap with ours; the ``check`` command then takes this sandbox instead of starting its own.
"""

from __future__ import annotations

import os
import sys

_early = None


def main() -> None:
    global _early
    # The grader's own numpy only computes the checks' small expected values: one BLAS thread is
    # plenty, and starting OpenBLAS's others costs `grader check` ~5 ms (unless the user chose).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    checking = sys.argv[1:2] == ["check"] and "--help" not in sys.argv and "-h" not in sys.argv
    if checking:
        from grader.sandbox.spawn import Warden
        _early = Warden()
    from grader.cli import main as cli
    try:
        cli(prog_name="grader")
    except SystemExit as done:
        if not checking:
            raise
        # check is done: its sandbox is closed and nothing is left to write. Skip the interpreter's
        # teardown (tens of ms with numpy loaded), which a student waits for on every check.
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)
    finally:  # a usage error exits before `check` takes the sandbox: close it, with its job folder
        if _early is not None:
            take_early_sandbox().close()


def take_early_sandbox():
    """A sandbox around the warden started by :func:`main`, once (None when there is none)."""
    global _early
    warden, _early = _early, None
    if warden is None:
        return None
    from grader.sandbox.launcher import Sandbox
    return Sandbox(warden=warden)
