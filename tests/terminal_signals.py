"""Signals as a student's shell hands them to a command it starts: at their defaults.

A test runner started in the background or under ``nohup`` (a CI step, a job left running) passes
SIGINT and SIGHUP on ignored to every process it starts, and an interpreter started with SIGINT
ignored never raises KeyboardInterrupt. Tests of what Ctrl-C or a closed terminal does to the
grader start it with this as ``preexec_fn``, so they test the grader, not the runner's start.
"""

from __future__ import annotations

import signal


def default_signals() -> None:
    """In the child, before it runs the command: SIGINT, SIGHUP and SIGQUIT as a shell leaves them."""
    for number in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
