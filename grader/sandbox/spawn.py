"""Start a sandbox warden: one clean interpreter and its pipes. Deliberately light to import.

``grader check`` calls this before anything else is imported, so the warden's interpreter loads
numpy while the grader loads click, the spec and the checks. :class:`~grader.sandbox.launcher.Sandbox`
adopts what this returns. Only modules the interpreter has loaded at startup (and the C module
``_socket``) are imported here: not json, which brings ``re``, nor typing, which brings ``re``,
``enum`` and ``collections``, on the way to starting the warden.
"""

from __future__ import annotations

import _thread
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name the same way)
if TYPE_CHECKING:
    from grader.sandbox.uids import UidClaim

CHILD_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
# child.py is imported as a module, not run as a script: a script is compiled on every start, a
# module comes from its cached bytecode (pip writes it at install). Its path stays on the command line.
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1].rpartition('/')[0]); import child; "
         "child.main(sys.argv[2:])")


# The warden's end of its socket is inheritable only while it is spawned, under this lock: a warden
# spawned by another thread at that moment would inherit it (posix_spawn keeps every inheritable
# descriptor), and with it a way into this warden's submissions.
_SPAWNING = _thread.allocate_lock()  # threading's Lock, without importing threading first


class Warden:
    """A started warden process and the grader's end of its control socket.

    The control socket (a Unix socket pair: message boundaries, and descriptors passed along) is
    the warden's only tie to the grader: the grader sends it each zygote's plan with the zygote's
    own pipes attached (:class:`ZygotePipes`), the warden reports what became of that zygote, and
    its end of file tells the warden that the grader is gone."""

    def __init__(self, slot: int = 0, claim: UidClaim | None = None, uid: int | None = None) -> None:
        """As root the warden is given its sandbox uid, held machine-wide: ``claim`` (one held
        already), else ``uid`` itself, else the first free one from base + ``slot``. It kills any
        process of that uid (a dead grader's leftovers) while it starts, before its first zygote."""
        import _socket  # a C module; socket.py would import selectors, enum... on the way to the warden
        if claim is None and os.geteuid() == 0:
            from grader.sandbox import uids
            claim = uids.claim_exactly(uid) if uid is not None else uids.claim(uids.base() + slot)
        self.claim = claim
        self.control, warden_end = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
        child_fds = (warden_end.fileno(),)
        # LD_BIND_NOW: the warden binds every C symbol once, and each fork inherits the bindings;
        # lazily, a scenario process would bind (copying a page for) each function its zygote
        # never called (benchmarks/README.md).
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": "/nonexistent",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "LD_BIND_NOW": "1"}
        # -I: no user site, no PYTHON* variables, no script or working folder on sys.path, so
        # nothing next to the submission can shadow the standard library or numpy. -S: no site
        # (no .pth hooks; numpy's folder is appended explicitly). -B: no .pyc. -u: output is
        # written as it happens, so it is attributed to the right scenario and survives a kill.
        argv = [sys.executable, "-I", "-S", "-B", "-u", "-c", _BOOT, CHILD_SCRIPT, numpy_path(), *map(str, child_fds),
                *([str(claim.uid)] if claim is not None else [])]
        # posix_spawn, not subprocess: importing subprocess alone took 10-20 ms, on the way to
        # starting the sandbox. stdin and stdout are /dev/null (each zygote gets output pipes of its
        # own), stderr is the grader's: the warden writes there only if it fails. A session of its own.
        actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)]
        with _SPAWNING:
            try:
                for fd in child_fds:
                    os.set_inheritable(fd, True)
                pid = os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
            finally:
                warden_end.close()
        self.process = WardenProcess(pid)

    def start(self, plan: dict, fds: list[int]) -> bool:
        """Send the warden a zygote's plan, with the zygote's ends of its pipes; False if it is gone."""
        import _socket
        import json
        import struct
        body = json.dumps({"kind": "start", "plan": plan}).encode()
        blocking = self.control.getblocking()
        try:
            self.control.setblocking(True)
            self.control.sendmsg([body], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack(f"={len(fds)}i", *fds))])
            return True
        except OSError:
            return False
        finally:
            self.control.setblocking(blocking)

    def reports(self) -> tuple[list[dict], bool]:
        """The warden's reports waiting on the (non-blocking) socket, and whether it is still there."""
        import json
        reports: list[dict] = []
        while True:
            try:
                body = self.control.recv(65536)
            except (BlockingIOError, InterruptedError):
                return reports, True
            except OSError:
                body = b""
            if not body:
                return reports, False
            reports.append(json.loads(body))


class ZygotePipes:
    """Fresh pipes for one zygote, made by the grader: it keeps one end of each, and hands the
    other ends to the warden (which passes them to that zygote alone and closes its copies).
    Nothing a zygote or its strays held can reach the next one: the next one gets new pipes."""

    def __init__(self, channels: int) -> None:
        self.job_r, self.job_w = os.pipe()
        self.results_r, self.results_w = os.pipe()
        self.out_r, self.out_w = os.pipe()
        self.err_r, self.err_w = os.pipe()
        # Each run gets one of the channels, in turn: an output pipe, an error pipe and a result
        # pipe, so that what a scenario still running writes is never taken for another's, the one
        # before it or one running beside it (see Scheduler.run_all).
        self.channels_r: list[tuple[int, int, int]] = []
        self._channels_w: list[int] = []
        for _ in range(channels):
            (out_r, out_w), (err_r, err_w), (res_r, res_w) = os.pipe(), os.pipe(), os.pipe()
            self.channels_r.append((out_r, err_r, res_r))
            self._channels_w += [out_w, err_w, res_w]

    def child_ends(self) -> list[int]:
        """In the order child.Warden._start reads them: job, results, stdout, stderr, channels."""
        return [self.job_r, self.results_w, self.out_w, self.err_w, *self._channels_w]

    def close_child_ends(self) -> None:
        for fd in self.child_ends():
            os.close(fd)
        self._channels_w = []

    def grader_ends(self) -> list[int]:
        return [self.job_w, self.results_r, self.out_r, self.err_r, *(fd for pair in self.channels_r for fd in pair)]


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
        code = self._reap(0)
        assert code is not None  # a blocking wait reaps it
        return code

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
    if spec is None or spec.origin is None:
        raise RuntimeError("numpy is not installed for this interpreter: the sandbox needs it")
    return os.path.dirname(os.path.dirname(spec.origin))
