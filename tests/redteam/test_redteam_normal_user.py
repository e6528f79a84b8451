"""The normal-user path: ``grader check`` and ``grade`` run by an ordinary user, where Landlock,
seccomp and the namespaces of a user namespace are the fences (no sandbox user of its own).

Runs only as root (CI): it creates a user with ``useradd`` and a copy of the interpreter that user
can run (ours lives under /root, mode 0700): the binary with its library search path pointed at
``$ORIGIN/../lib``, libpython, the standard library without its tests, numpy, click, PyYAML and the
grader package. The instructor's files are world-readable here on purpose: only the sandbox can keep
a submission from reading them, or from signalling the grader that runs as the same user; and the
user's own Unix socket (as its tmux server's would be) is one only its own processes may reach.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from .attacks import BY_ID, KERNEL_OBJECTS, ROOT
from .conftest import ASSIGNMENT, CANARY_TEXT, HIDDEN, REFERENCE, Arena, Listeners
from .traces import filled, hidden_in, left_behind, printed, traces

USER = "grader-redteam"
PYTHON_VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"
SKIP_STDLIB = shutil.ignore_patterns("test", "idlelib", "tkinter", "turtledemo", "ensurepip", "site-packages")


@pytest.fixture(scope="module")
def student():
    """(uid, gid) of an ordinary user, created for the test."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create an ordinary user (run as root in CI)")
    if shutil.which("useradd") is None or shutil.which("setpriv") is None:
        pytest.skip("useradd or setpriv is missing")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
                              capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"useradd failed: {made.stderr.strip()}")
    entry = pwd.getpwnam(USER)
    return entry.pw_uid, entry.pw_gid


@pytest.fixture(scope="module")
def place(student):
    """A world-readable folder with a runnable Python, the course files and the user's submissions."""
    base = Path(tempfile.mkdtemp(prefix="redteam-user-"))
    base.chmod(0o755)
    python = _portable_python(base / "python")
    course = base / "course"
    shutil.copytree(ASSIGNMENT, course / "exercises" / "autodiff")
    shutil.copytree(HIDDEN, course / "solutions" / "autodiff")
    canary, out = base / "canary" / "canary.txt", base / "out"
    for folder in (canary.parent, out, base / "work"):
        folder.mkdir()
        folder.chmod(0o777)
    canary.write_text(CANARY_TEXT)
    canary.chmod(0o666)
    subprocess.run(["chmod", "-R", "a+rX", str(base)], check=True)
    yield base, python, course, canary, out
    shutil.rmtree(base, ignore_errors=True)


def _portable_python(target: Path) -> Path:
    prefix = Path(sys.base_prefix)
    binary = target / "bin" / PYTHON_VERSION
    binary.parent.mkdir(parents=True)
    data = Path(os.path.realpath(sys.executable)).read_bytes()
    runpath = str(prefix / "lib").encode() + b"\0"
    if data.count(runpath) != 1 or len(b"$ORIGIN/../lib") >= len(runpath):
        pytest.skip("cannot relocate this interpreter (its library path is not a single RUNPATH entry)")
    binary.write_bytes(data.replace(runpath, b"$ORIGIN/../lib".ljust(len(runpath), b"\0")))
    binary.chmod(0o755)
    lib = target / "lib"
    lib.mkdir()
    for shared in (prefix / "lib").glob("libpython*"):
        shutil.copy2(shared, lib / shared.name, follow_symlinks=False)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(stdlib, lib / PYTHON_VERSION, ignore=SKIP_STDLIB, symlinks=True)
    site = lib / PYTHON_VERSION / "site-packages"
    site.mkdir()
    installed = Path(sysconfig.get_paths()["purelib"])
    for name in ("numpy", "numpy.libs", "click", "yaml", "_yaml"):
        if (installed / name).exists():
            shutil.copytree(installed / name, site / name, symlinks=True)
    shutil.copytree(ROOT / "grader", site / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    return binary


@pytest.fixture(scope="module")
def listening(student, place):
    """Listeners on loopback, and a Unix socket of the user's own in the user's own folder (0700)."""
    folder = place[0] / "sockets"
    with Listeners(owner=student, folder=folder) as listeners:
        yield listeners


def expected_isolation(student) -> set[str]:
    """What this kernel lets an ordinary user's sandbox have: a user namespace (with PID, network,
    IPC and mount namespaces in it) where unprivileged ones are allowed, and seccomp where it is built in."""
    uid, gid = student
    allowed = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--",
                              "unshare", "--user", "--pid", "--net", "--ipc", "--mount", "--fork", "true"],
                             capture_output=True)
    names = {"rlimits"}
    if allowed.returncode == 0:
        names |= {"user-namespace", "pid-namespace", "net-namespace", "ipc-namespace", "mount-namespace"}
    if "Seccomp:" in Path("/proc/self/status").read_text():
        names.add("seccomp")
    return names


def check_as_student(student, place, submission: Path, name: str) -> tuple[int, dict]:
    """``grader check --json -v`` as the ordinary user; returns the exit code and the JSON it wrote."""
    base, python, course, _, out = place
    uid, gid = student
    result = out / f"{name}.json"
    with open(result, "w") as handle:
        os.chmod(result, 0o666)
        done = subprocess.run(
            ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--",
             str(python), "-P", "-m", "grader", "check", str(submission), "--assignment",
             str(course / "exercises" / "autodiff"), "--json", "--seed", "1"],
            cwd=base / "work", stdout=handle, stderr=subprocess.PIPE, timeout=120,
            env={"PATH": "/usr/bin:/bin", "HOME": str(base / "work"), "LANG": "C.UTF-8"})
    assert done.returncode in (0, 1), done.stderr.decode(errors="replace")
    return done.returncode, json.loads(result.read_text())


def _submit(place, name: str, source: str) -> Path:
    folder = place[0] / "submissions" / name
    folder.mkdir(parents=True)
    path = folder / "autodiff.py"
    path.write_text(source)
    subprocess.run(["chmod", "-R", "a+rX", str(place[0] / "submissions")], check=True)
    return path


def _attack_source(place, attack_id: str, listening: Listeners | None = None) -> str:
    base, _, course, canary, out = place
    arena = Arena(base, canary, out, base, 9, "unused")
    if listening is not None:
        arena = Arena(base, canary, out, base, listening.port, "unused", listening.received, listening.udp_port,
                      listening.unix_path, listening.abstract_name)
    places = {**arena.places(BY_ID[attack_id]), "REPO": str(course)}
    return BY_ID[attack_id].source(places)


def test_reference_gets_full_marks_under_landlock_alone(student, place):
    code, result = check_as_student(student, place, _submit(place, "reference", REFERENCE.read_text()), "reference")
    assert code == 0 and result["score"] == result["max_score"] > 0
    assert any(level.startswith("landlock-v") for level in result["isolation"])
    assert "uid-drop" not in result["isolation"]
    assert expected_isolation(student) <= set(result["isolation"]), result["isolation"]


@pytest.mark.parametrize("attack_id", ["read_solution", "read_hidden_scenarios", "files_in_output_folder",
                                       "kill_everything", "kill_parents", "forbidden_import_unhooked"])
def test_attack_earns_nothing_and_harms_nothing_as_a_normal_user(student, place, attack_id):
    code, result = check_as_student(student, place, _submit(place, attack_id, _attack_source(place, attack_id)),
                                    attack_id)
    assert code == 1 and result["score"] == 0   # and the grader, same user, survived to write it
    assert not [s for s in result["scenarios"] if s["task"] in ("detach", "tape") and s["status"] == "passed"]
    assert "landlock" in " ".join(result["isolation"])
    text = json.dumps(result)
    assert "ADOPTED-" not in text and "releasing the tape freed the records" not in text
    assert place[3].read_text() == CANARY_TEXT and os.listdir(place[3].parent) == ["canary.txt"]


def test_the_users_own_sockets_and_loopback_are_out_of_reach(student, place, listening):
    # The sandbox runs as the user, so the user's own socket lets it in by its modes: only seccomp
    # (no socket of any family) and the network namespace keep it out, Landlock does not.
    source = _attack_source(place, "sockets_everywhere", listening)
    code, result = check_as_student(student, place, _submit(place, "sockets", source), "sockets")
    assert code == 1 and result["score"] == 0
    assert listening.received == [], listening.received
    assert "refused unix" in result["import_stdout"], result["import_stdout"]


def test_threads_of_the_users_other_programs_do_not_count_against_the_sandbox(student, place):
    # RLIMIT_NPROC counts every thread of the user: a browser's 201 threads once left the sandbox
    # no process to fork. The sandbox counts only its own (a user namespace of its own), or adds them.
    uid, gid = student
    busy = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--",
                             str(place[1]), "-c", "import threading, time\n"
                             "for _ in range(201):\n"
                             "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
                             "print('ready', flush=True); time.sleep(60)"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert busy.stdout.readline().strip() == "ready"
        code, result = check_as_student(student, place, _submit(place, "reference-busy", REFERENCE.read_text()),
                                        "reference-busy")
        assert code == 0 and result["score"] == result["max_score"] > 0
    finally:
        busy.kill()
        busy.wait()


# The reference first, then attackers that scan memory for it, leave strays behind (forging frames,
# copying pipes, holding every process slot), leave kernel objects, memory and files behind, then
# honest neighbours.
BATCH = ("a_reference", "b_heap_remnants", "c_zombie_leader_strays", "d_nproc_hog", *(
    f"k_{attack.id}" for attack in KERNEL_OBJECTS), "zz_reference")


@pytest.fixture(scope="module")
def user_batch(student, place, listening):
    """``grade`` of BATCH as the user, one at a time; what was left once the grader exited."""
    base, python, course, _, _ = place
    uid, gid = student
    submissions, out, temp = base / "batch" / "submissions", base / "batch" / "out", base / "batch" / "tmp"
    for name in BATCH:
        (submissions / name).mkdir(parents=True)
        attack = name.split("_", 1)[1]
        source = REFERENCE.read_text() if attack == "reference" else _attack_source(place, attack, listening)
        (submissions / name / "autodiff.py").write_text(source)
    out.mkdir(parents=True)
    temp.mkdir()
    subprocess.run(["chmod", "-R", "a+rwX", str(base / "batch")], check=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(base / "work"), "LANG": "C.UTF-8", "TMPDIR": str(temp)}
    as_user = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", str(python), "-P", "-m", "grader"]
    before = traces(range(uid, uid + 1), temp)
    done = subprocess.run(
        [*as_user, "grade", str(submissions), "--assignment", str(course / "exercises" / "autodiff"), "--solutions",
         str(course / "solutions" / "autodiff"), "--out", str(out), "--seed", "1", "-j", "1"],
        cwd=base / "work", capture_output=True, text=True, timeout=600, env=env)
    left = left_behind(before, range(uid, uid + 1), temp)
    results = {name: json.loads((out / "results" / f"{name}.json").read_text()) for name in BATCH}
    return {"done": done, "left": left, "results": results, "submissions": submissions, "as_user": as_user,
            "env": env, "course": course}


def test_a_batch_as_the_user_keeps_neighbours_apart_and_leaves_nothing_behind(user_batch, listening):
    # The neighbours' results are their results alone, and once the grader exits nothing of the
    # batch is left: no process of the user, no IPC object, no shared memory, no byte in the temp folder.
    from grader import grade_submission, load_assignment
    done, results = user_batch["done"], user_batch["results"]
    # 1: some submissions "could not be graded" (an attacker's own error), never a crash of ours (3)
    assert done.returncode in (0, 1) and "Error:" not in done.stderr, done.stdout[-3000:] + done.stderr
    assert user_batch["left"] == [], f"the batch left, once the grader exited: {user_batch['left']}"
    alone = grade_submission(REFERENCE, load_assignment(ASSIGNMENT, hidden=HIDDEN), seed=1, scope="all").to_dict()
    for name in ("a_reference", "zz_reference"):
        got = results[name]
        assert (got["score"], got["error"]) == (alone["score"], None), name
        assert {s["id"]: s["status"] for s in got["scenarios"]} == {s["id"]: s["status"] for s in alone["scenarios"]}
        assert "STOLEN" not in json.dumps(got) and "STRAY" not in json.dumps(got)
    for name in BATCH[1:-1]:
        assert results[name]["score"] == 0, name
    assert "ADOPTED" not in results["b_heap_remnants"]["import_stdout"]
    assert listening.received == []


def test_kernel_objects_of_a_batch_as_the_user_stay_in_their_container(user_batch):
    from grader.sandbox.isolation import JOB_FOLDER_FILES, JOB_FOLDER_MB
    results = user_batch["results"]
    isolation = set(results["k_shared_memory_left"]["isolation"])
    assert "ipc-namespace" in isolation and "mount-namespace" in isolation, isolation
    # No memory cgroup here: seccomp refuses System V IPC (its memory would count against no limit).
    expected = {"k_shared_memory_left": "refused shmget 1", "k_semaphore_flood": "FLOOD 0 semaphore sets 0 queues",
                "k_message_queue_drop_box": "refused msgget refused mq_open",
                "k_job_pipe_reader_thread": "refused shmget",
                "k_memfd_beyond_the_limit": "memfd stopped PermissionError 1"}
    if "memory-limit" in isolation:   # a delegated cgroup: then they are let through, in the namespace
        expected = {"k_memfd_beyond_the_limit": expected["k_memfd_beyond_the_limit"]}
    for name, said in expected.items():
        assert said in results[name]["import_stdout"], (name, results[name]["import_stdout"])
    others = printed(results["k_limits_of_other_processes"])   # process 1 is the reaper, of the user's uid
    assert "refused prlimit 1 1" in others and "CHANGED" not in others, others
    mib, files, errors = filled(results["k_disk_and_inode_filling"])
    assert mib <= JOB_FOLDER_MB and files <= JOB_FOLDER_FILES and "{28:" in errors, (mib, files, errors)  # ENOSPC


@pytest.mark.parametrize("attack_id", ["message_queue_drop_box", "job_pipe_reader_thread", "shared_memory_left"])
def test_a_later_check_as_the_user_shows_nothing_of_the_batchs_hidden_scenarios(user_batch, attack_id):
    course = user_batch["course"]
    done = subprocess.run([*user_batch["as_user"], "check", "autodiff.py", "--assignment",
                           str(course / "exercises" / "autodiff"), "--json", "--seed", "1"],
                          cwd=user_batch["submissions"] / f"k_{attack_id}", capture_output=True, text=True,
                          timeout=120, env=user_batch["env"])
    assert done.returncode == 1, done.stderr
    shown = json.dumps(json.loads(done.stdout))
    assert not hidden_in(shown), shown[:3000]
    assert "SEGMENT-OF-" not in shown
