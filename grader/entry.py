"""The ``grader`` console script and ``python -m grader``: start the sandbox first, then the CLI.

``grader check`` always needs a sandbox, and a sandbox's interpreter must import numpy before it can
run anything. Spawning its warden before anything else is imported (even typing) lets that import
overlap with all of ours; the sandbox around it is made next, so that its cgroup is ready while the
warden still imports. The CLI gets it in its :class:`~grader.cli.Session` (click's context object)
and the ``check`` command takes it instead of starting its own.
"""

from __future__ import annotations

import gc
import os
import sys


def main() -> None:
    # The grader's own numpy only computes the checks' small expected values: one BLAS thread is
    # plenty, and starting OpenBLAS's others costs `grader check` time (unless the user chose).
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    checking = sys.argv[1:2] == ["check"] and "--help" not in sys.argv and "-h" not in sys.argv
    sandbox = None
    if checking:
        # A check makes nearly all of its objects while it imports (numpy, click, the checks), and
        # they live to its end: the cyclic collector's passes over them find nothing to free, and
        # are a good part of a check's CPU (benchmarks/README.md). Off until the check is done
        # (Session.resume_collector).
        gc.disable()
        from grader.sandbox.spawn import Warden
        warden = Warden()
        from grader.sandbox.launcher import Sandbox
        sandbox = Sandbox.for_a_check(warden)
    from grader.cli import Session
    from grader.cli import main as cli
    session = Session(early_sandbox=sandbox, collector_paused=checking)
    try:
        cli(prog_name="grader", obj=session)
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
        session.close_unused()
