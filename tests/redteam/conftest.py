"""The red team's arena: grade every attack once (library and CLI, in parallel), keep the evidence.

Everything an attack could reach is set up to make a hole visible: a world-writable canary file and
output folder (so only the sandbox, not file modes, protects them), a forbidden library a sandbox
could import if it could read it, a TCP listener, a secret in the grader's environment, and sandbox
users of our own (``GRADER_SANDBOX_UID_BASE``) so that a surviving process is unmistakably ours.
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


@dataclass
class Arena:
    base: Path
    canary: Path
    out: Path
    fake_site: Path
    port: int
    secret: str
    connections: list[bytes] = field(default_factory=list)

    def places(self, attack: Attack, out: Path | None = None) -> dict[str, str]:
        out = out or self.out
        return {"REPO": str(ROOT), "CANARY": str(self.canary), "OUT": str(out),
                "RESULT": str(out / f"{attack.id}.json"), "FAKE_SITE": str(self.fake_site), "PORT": str(self.port)}

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
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    arena = Arena(base, canary, out, fake_site, listener.getsockname()[1], f"redteam-{secrets.token_hex(8)}")
    stop = threading.Event()

    def listen() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(1)
                try:
                    arena.connections.append(connection.recv(4096) or b"(connected)")
                except OSError:
                    arena.connections.append(b"(connected)")

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    yield arena
    stop.set()
    thread.join()
    listener.close()
    shutil.rmtree(base, ignore_errors=True)


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
    """Processes running as one of this suite's sandbox users (there must be none once grading ends)."""
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
        if uid_low <= uid < uid_high and "\nState:\tZ" not in status:
            found.append(f"pid {entry} uid {uid}")
    return found
