"""Start a sandbox warden: one clean interpreter and its pipes. Deliberately light to import.

``grader check`` calls this before anything else is imported, so the warden's interpreter loads
numpy while the grader loads click, the spec and the checks. :class:`~grader.sandbox.launcher.Sandbox`
adopts what this returns. Only modules the interpreter has loaded at startup are imported here
(not json, which brings ``re``: ~10 ms before the warden could start).
"""

from __future__ import annotations

import _thread
import os
import sys

OUTPUT_CHANNELS = 2  # scenarios in the sandbox at once: the one running and the next one queued
CHILD_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
# child.py is imported as a module, not run as a script: a script is compiled on every start, a
# module comes from its cached bytecode (pip writes it at install). Its path stays on the command line.
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1].rpartition('/')[0]); import child; "
         "child.main(sys.argv[2:])")


# The warden's ends of its pipes are inheritable only while it is spawned, under this lock: a warden
# spawned by another thread at that moment would inherit them (posix_spawn keeps every inheritable
# descriptor), and with them a way into this warden's submissions.
_SPAWNING = _thread.allocate_lock()  # threading's Lock, without importing threading first


class Warden:
    """A started warden process and the grader's ends of its pipes."""

    def __init__(self) -> None:
        job_r, self.job_w = os.pipe()
        self.results_r, results_w = os.pipe()
        lifeline_r, self.lifeline_w = os.pipe()
        self.status_r, status_w = os.pipe()
        self.out_r, out_w = os.pipe()
        self.err_r, err_w = os.pipe()
        # Scenario output goes to one of OUTPUT_CHANNELS pairs of pipes, in turn, so the output of a
        # scenario still running is never mixed up with that of the one before it (see Sandbox.run_all).
        self.channels_r: list[tuple[int, int]] = []
        channels_w: list[tuple[int, int]] = []
        for _ in range(OUTPUT_CHANNELS):
            (channel_out_r, channel_out_w), (channel_err_r, channel_err_w) = os.pipe(), os.pipe()
            self.channels_r.append((channel_out_r, channel_err_r))
            channels_w.append((channel_out_w, channel_err_w))
        # In the order child.main() reads them, after numpy's folder.
        child_fds = (job_r, results_w, lifeline_r, status_w, *(fd for pair in channels_w for fd in pair))
        # LD_BIND_NOW: the warden binds every C symbol once, and each fork inherits the bindings;
        # lazily, a scenario process bound (copying a page for) each function its zygote never
        # called, ~15 of its ~450 page faults.
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": "/nonexistent",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "LD_BIND_NOW": "1"}
        # -I: no user site, no PYTHON* variables, no script or working folder on sys.path, so
        # nothing next to the submission can shadow the standard library or numpy. -S: no site
        # (no .pth hooks; numpy's folder is appended explicitly). -B: no .pyc. -u: output is
        # written as it happens, so it is attributed to the right scenario and survives a kill.
        argv = [sys.executable, "-I", "-S", "-B", "-u", "-c", _BOOT, CHILD_SCRIPT, numpy_path(), *map(str, child_fds)]
        # posix_spawn, not subprocess: importing subprocess alone took 10-20 ms, on the way to
        # starting the sandbox. stdin is /dev/null, a session of its own; child.main moves to "/".
        actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
        with _SPAWNING:
            try:
                for fd in child_fds:
                    os.set_inheritable(fd, True)
                pid = os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
            finally:
                for fd in (*child_fds, out_w, err_w):
                    os.close(fd)
        self.process = WardenProcess(pid)


class WardenProcess:
    """The warden's process, as the grader handles it: ``pid``, ``poll()``, ``wait()``, ``kill()``
    and ``returncode`` (negative: the signal that ended it), like :class:`subprocess.Popen`'s."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """The exit code once the warden has ended (it is reaped then), else None."""
        return self._reap(os.WNOHANG)

    def wait(self) -> int:
        """Wait for the warden to end, reap it, return its exit code."""
        return self._reap(0)

    def kill(self) -> None:
        """SIGKILL the warden, unless it has been reaped already (its pid may be another's now)."""
        if self.returncode is None:
            import signal
            os.kill(self.pid, signal.SIGKILL)

    def _reap(self, options: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, options)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                pid, status = self.pid, 0
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def numpy_path() -> str:
    """The folder that holds the numpy package (site-packages, usually), found without importing it."""
    import importlib.machinery  # loaded with the interpreter already, unlike importlib.util
    spec = importlib.machinery.PathFinder.find_spec("numpy")
    return os.path.dirname(os.path.dirname(spec.origin))
