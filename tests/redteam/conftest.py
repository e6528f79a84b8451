"""The red team's arena: grade every attack once (library and CLI, in parallel), keep the evidence.

Everything an attack could reach is set up to make a hole visible: a world-writable canary file and
output folder (so only the sandbox, not file modes, protects them), a forbidden library a sandbox
could import if it could read it, listeners on loopback (TCP and UDP) and on Unix sockets (a
pathname one in a folder anyone may reach, an abstract one), a secret in the grader's environment,
and sandbox users of our own (``GRADER_SANDBOX_UID_BASE``) so that a surviving process is
unmistakably ours.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from queue import Queue

import pytest

from .attacks import ATTACKS, ROOT, Attack

ASSIGNMENT = ROOT / "exercises" / "autodiff"
HIDDEN = ROOT / "solutions" / "autodiff"
REFERENCE = HIDDEN / "autodiff.py"
GRADER = str(Path(sys.executable).with_name("grader"))  # the console script: no working folder on sys.path
UID_BASE = 62000      # sandbox users of this suite: 62000 + slot (library), 62100 + 10 * worker (CLI)
WORKERS = 4   # timeouts wait rather than compute, so more workers than CPUs pays
CANARY_TEXT = "canary: nobody may change this file\n"
# Lines only the instructor's files hold: if one shows up in a result, something was read or leaked.
SECRET_MARKERS = ("releasing the tape freed the records", "Tensor() copies the values; the new tensor")
LIBRARY_SECONDS = 45.0   # bounded time: import 10 s + two 5 s timeouts + restarts, with room on a busy CI
CLI_SECONDS = 45.0
# The System V IPC keys the attacks use (from this one on): this session's, so that an object found
# at one is this suite's doing, whatever else runs on the machine.
IPC_KEY = (1 << 29) + secrets.randbelow(1 << 28)


@dataclass
class Arena:
    base: Path
    canary: Path
    out: Path
    fake_site: Path
    port: int
    secret: str
    connections: list[bytes] = field(default_factory=list)   # everything any listener received
    udp_port: int = 0
    unix_path: str = ""
    abstract_name: str = ""
    ipc_key: int = IPC_KEY

    def places(self, attack: Attack, out: Path | None = None) -> dict[str, str]:
        out = out or self.out
        return {"REPO": str(ROOT), "CANARY": str(self.canary), "OUT": str(out),
                "RESULT": str(out / f"{attack.id}.json"), "FAKE_SITE": str(self.fake_site), "PORT": str(self.port),
                "UDP": str(self.udp_port), "UNIX": self.unix_path, "ABSTRACT": self.abstract_name,
                "IPCKEY": str(self.ipc_key)}

    def submission(self, attack: Attack, folder: Path, name: str = "autodiff.py", out: Path | None = None) -> Path:
        """Write the hostile file (and its neighbours) into ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_text(attack.source(self.places(attack, out)))
        for neighbour, content in attack.neighbours:
            (folder / neighbour).write_text(content)
        return path


@dataclass
class Graded:
    attack: Attack
    library: object = None          # SubmissionResult
    library_seconds: float = 0.0
    cli_code: int | None = None
    cli_seconds: float = 0.0
    cli_result: Path | None = None
    cli_stderr: str = ""


@pytest.fixture(scope="session")
def arena():
    base = Path(tempfile.mkdtemp(prefix="redteam-"))
    base.chmod(0o755)
    canary = base / "canary" / "canary.txt"
    out = base / "out"
    fake_site = base / "fake_site"
    for folder, mode in ((canary.parent, 0o777), (out, 0o777), (fake_site / "autograd", 0o755)):
        folder.mkdir(parents=True)
        folder.chmod(mode)
    fake_site.chmod(0o755)
    canary.write_text(CANARY_TEXT)
    canary.chmod(0o666)
    # A "forbidden autodiff library" anyone may read; importing it would hand over the reference engine.
    (fake_site / "autograd" / "__init__.py").write_text(REFERENCE.read_text())
    with Listeners() as listening:
        arena = Arena(base, canary, out, fake_site, listening.port, f"redteam-{secrets.token_hex(8)}",
                      listening.received, listening.udp_port, listening.unix_path, listening.abstract_name)
        yield arena
    shutil.rmtree(base, ignore_errors=True)


class Listeners:
    """TCP and UDP on 127.0.0.1, a pathname Unix socket in a folder anyone may reach (as a user's
    tmux or desktop bus would be to that user's own processes) and an abstract one: whatever any
    of them receives lands in ``received``."""

    def __init__(self, owner: tuple[int, int] | None = None, folder: Path | None = None) -> None:
        self.received: list[bytes] = []
        self._folder = Path(folder or tempfile.mkdtemp(prefix="redteam-sockets-"))
        self._folder.mkdir(exist_ok=True)
        self._folder.chmod(0o777 if owner is None else 0o700)
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = str(self._folder / "listener.sock")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)
        self.abstract_name = f"redteam-{secrets.token_hex(6)}"
        self.abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract.bind("\0" + self.abstract_name)
        if owner is not None:   # the user's own socket, in the user's own folder
            os.chown(self._folder, *owner)
            os.chown(self.unix_path, *owner)
        self.port, self.udp_port = self.tcp.getsockname()[1], self.udp.getsockname()[1]
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._accept, args=(server,), daemon=True)
                         for server in (self.tcp, self.unix, self.abstract)]
        self._threads.append(threading.Thread(target=self._datagrams, daemon=True))

    def __enter__(self) -> Listeners:
        for server in (self.tcp, self.unix, self.abstract):
            server.listen()
            server.settimeout(0.2)
        self.udp.settimeout(0.2)
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        for server in (self.tcp, self.udp, self.unix, self.abstract):
            server.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _accept(self, server: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(1)
                try:
                    self.received.append(connection.recv(4096) or b"(connected)")
                except OSError:
                    self.received.append(b"(connected)")

    def _datagrams(self) -> None:
        while not self._stop.is_set():
            try:
                self.received.append(self.udp.recv(65536) or b"(empty datagram)")
            except OSError:
                continue


@pytest.fixture(scope="session")
def graded(arena):
    """Every attack graded by the library (all scenarios) and by ``grader check --json`` (public)."""
    from grader import grade_submission, load_assignment
    from grader.sandbox.launcher import Sandbox

    assignment = load_assignment(ASSIGNMENT, hidden=HIDDEN)
    slots: Queue[int] = Queue()
    for slot in range(WORKERS):
        slots.put(slot)
    saved = {name: os.environ.get(name) for name in ("GRADER_SANDBOX_UID_BASE", "REDTEAM_SECRET")}
    os.environ["GRADER_SANDBOX_UID_BASE"] = str(UID_BASE)
    os.environ["REDTEAM_SECRET"] = arena.secret   # the grader's environment holds a secret to steal

    def grade(attack: Attack) -> Graded:
        slot = slots.get()
        try:
            folder = arena.base / "submissions" / attack.id
            path = arena.submission(attack, folder)
            graded = Graded(attack)
            began = time.monotonic()
            with Sandbox(slot=slot) as sandbox:
                graded.library = grade_submission(path, assignment, seed=1, scope="all", sandbox=sandbox)
            graded.library_seconds = time.monotonic() - began
            _run_cli(arena, graded, folder, slot)
            return graded
        finally:
            slots.put(slot)

    try:
        with ThreadPoolExecutor(WORKERS) as pool:
            # Longest first: the timeouts mostly wait, so they overlap with everything else.
            ordered = sorted(ATTACKS, key=lambda attack: not attack.timeout)
            results = {graded.attack.id: graded for graded in pool.map(grade, ordered)}
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return results


def _run_cli(arena: Arena, graded: Graded, folder: Path, slot: int) -> None:
    """``grader check --json`` from the submission's own folder, its JSON going to the output folder."""
    result = arena.out / f"{graded.attack.id}.json"
    env = {**os.environ, "GRADER_SANDBOX_UID_BASE": str(UID_BASE + 100 + 10 * slot)}
    began = time.monotonic()
    with open(result, "w") as handle:
        os.chmod(result, 0o666)
        command = [GRADER, "check", "autodiff.py", "--assignment", str(ASSIGNMENT), "--json", "--seed", "1"]
        done = subprocess.run(command, cwd=folder, stdout=handle, stderr=subprocess.PIPE, env=env, timeout=120)
    graded.cli_seconds = time.monotonic() - began
    graded.cli_code, graded.cli_result = done.returncode, result
    graded.cli_stderr = done.stderr.decode(errors="replace")


def sandbox_processes(uid_low: int = UID_BASE, uid_high: int = UID_BASE + 300) -> list[str]:
    """Processes running as one of this suite's sandbox users (there must be none once grading ends).
    A process whose leader thread has exited shows as a zombie while its other threads run: it
    counts as long as any of its threads is not dead."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as handle:
                status = handle.read()
        except OSError:
            continue
        uid = int(status.split("\nUid:")[1].split()[0])
        if uid_low <= uid < uid_high and _running(entry):
            found.append(f"pid {entry} uid {uid}")
    return found


def _running(pid: str) -> bool:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2] not in "ZX":
            return True
    return False
