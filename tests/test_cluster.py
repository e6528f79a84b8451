"""``grader grade --scheduler`` for real: a stock LocalCluster of two worker processes on loopback
(Dask's defaults: no setting or resource of the grader's), and ``dask scheduler`` + ``dask worker``
as they come, the real CLI as their client, workers and clients killed with SIGKILL. Nothing leaves
127.0.0.1."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from classes import ASSIGNMENT, REFERENCE, STUB, mixed_class, plain_class

pytest.importorskip("distributed", reason="the cluster tests need the [dask] extra (part of [test])")

import dask
from cluster_poison import MARKER
from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import SchedulerPlugin
from own_processes import wait_until

import grader.sandbox.spawn
from grader.cluster.executor import DIED_TWICE

HERE = Path(__file__).parent
GRADER = [sys.executable, "-m", "grader"]
POISON = MARKER.decode()
DERIVED = ("gradebook.csv", "summary.json")


class Deaths(SchedulerPlugin):
    """Counts the workers the scheduler lost (these tests close none on purpose)."""

    def __init__(self):
        self.lost = 0

    def remove_worker(self, scheduler, worker, *, stimulus_id, **kwargs):
        self.lost += 1


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes (each one thread, so one sandbox), restarted by their nannies when
    killed; the scheduler's allowed-failures is Dask's default (3). A LocalCluster closes the nanny
    of a worker gone for lost-worker-timeout (15 s) unless a worker of the same name is back by then:
    a worker killed again while its nanny restarts it would lose its nanny for good, so these tests
    wait longer (the test's own harness, not a setting the grader needs)."""
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "1h"}):
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=None, preload=[str(HERE / "cluster_poison.py")],
                          silence_logs=50) as local:
            assert local.scheduler.allowed_failures == 3
            local.deaths = Deaths()
            local.scheduler.add_plugin(local.deaths)
            with Client(local.scheduler_address) as client:
                local.client = client
                yield local


def grade(submissions: Path, out: Path, *extra: str, scheduler: str | None = None,
          popen: bool = False, env: dict | None = None):
    command = [*GRADER, "grade", str(submissions), "--assignment", str(ASSIGNMENT), "--out", str(out), *extra,
               *(["--scheduler", scheduler] if scheduler else [])]
    if popen:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)


def rows(out: Path) -> dict[str, dict]:
    return {row["student_id"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


def results_in(out: Path) -> int:
    return len(list((out / "results").glob("*.json")))


def wait_for_results(out: Path, count: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 300
    while results_in(out) < count and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)


def worker_pids(cluster) -> dict[str, int]:
    return cluster.client.run(os.getpid)


def wait_for_workers(cluster, count: int = 2) -> None:
    deadline = time.monotonic() + 120
    while len(cluster.scheduler.workers) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(cluster.scheduler.workers) == count


def sandboxes_of(pid: int) -> list[int]:
    """The sandbox wardens a worker process started (their parent is the worker)."""
    script = grader.sandbox.spawn.CHILD_SCRIPT.encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes()
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if script in command and parent == pid:
                found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def local_runs(tmp_path_factory):
    """The classes of these tests graded on this machine, as the reference gradebooks."""
    work = tmp_path_factory.mktemp("cluster")
    classes = {"mixed": mixed_class(work / "mixed"), "plain": plain_class(work / "plain", 24)}
    outs = {}
    for name, folder in classes.items():
        outs[name] = work / f"local-{name}"
        done = grade(folder, outs[name], "--seed", "3", "-j", "2")
        assert done.returncode in (0, 1), done.stderr
    return classes, outs


def test_a_cluster_grades_byte_identical_to_one_machine(cluster, local_runs, tmp_path):
    classes, local = local_runs
    out = tmp_path / "out"
    done = grade(classes["mixed"], out, "--seed", "3", scheduler=cluster.scheduler_address)
    assert done.returncode == 1, done.stderr  # carol, dave and ivy could not be graded, as locally
    for name in DERIVED:
        assert (out / name).read_bytes() == (local["mixed"] / name).read_bytes(), name
    erin, olga = (json.loads((out / "results" / f"{who}.json").read_text()) for who in ("erin", "olga"))
    assert erin["timings"] == olga["timings"], "the same autodiff.py twice is graded once"
    assert erin["submission"].endswith("erin/autodiff.py") and olga["submission"].endswith("olga/autodiff.py")
    assert erin["isolation"] == json.loads((local["mixed"] / "results" / "erin.json").read_text())["isolation"]
    # A rerun regrades nothing, on the cluster as locally.
    again = grade(classes["mixed"], out, scheduler=cluster.scheduler_address)
    assert "Graded 0 submissions (9 unchanged since the last run) with seed 3" in again.stdout, again.stderr


def test_a_worker_killed_midway_leaves_a_complete_identical_gradebook(cluster, local_runs, tmp_path):
    classes, local = local_runs
    wait_for_workers(cluster)
    out = tmp_path / "out"
    before = cluster.deaths.lost
    process = grade(classes["plain"], out, "--seed", "3", scheduler=cluster.scheduler_address, popen=True)
    wait_for_results(out, 4, process)
    victim = next(iter(worker_pids(cluster).values()))
    wardens = sandboxes_of(victim)
    os.kill(victim, signal.SIGKILL)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr
    assert cluster.deaths.lost == before + 1
    assert results_in(out) == 24 and "Graded 24 submissions (0 unchanged since the last run)" in stdout
    for name in DERIVED:
        assert (out / name).read_bytes() == (local["plain"] / name).read_bytes(), name
    assert wardens and wait_until(lambda: not [pid for pid in wardens if Path(f"/proc/{pid}").exists()],
                                  timeout=5), "the killed worker's sandboxes died with it"


@pytest.mark.parametrize("allowed_failures", [3, 0], ids=["dask-default", "no-retries"])
def test_a_submission_that_kills_its_workers_is_one_error_row(cluster, local_runs, tmp_path, allowed_failures):
    # Whatever the scheduler's allowed-failures: Dask's default would let a poison submission take
    # down four workers, 0 would give up after one; the grader's own budget is two.
    classes, local = local_runs
    wait_for_workers(cluster)
    folder = tmp_path / "class"
    shutil.copytree(classes["plain"], folder)
    (folder / "s005.py").write_text(REFERENCE.read_text() + f"\n{POISON}\n")
    before = cluster.deaths.lost
    out = tmp_path / "out"
    cluster.scheduler.allowed_failures = allowed_failures
    try:
        done = grade(folder, out, "--seed", "3", scheduler=cluster.scheduler_address)
    finally:
        cluster.scheduler.allowed_failures = 3
    assert done.returncode == 1, done.stderr
    assert cluster.deaths.lost - before == 2, "a poison submission takes down two workers, not more"
    graded, expected = rows(out), rows(local["plain"])
    assert graded.pop("s005") == {**expected.pop("s005"), "score": "0", "status": f"error: {DIED_TWICE}",
                                  **{column: "" for column in list(expected["s000"])[4:]}}
    assert graded == expected, "every other submission is graded as on one machine"
    assert "s005: the grading machine died twice on this submission" in done.stdout
    wait_for_workers(cluster)


def test_a_rerun_after_the_client_is_killed_regrades_only_what_is_missing(cluster, local_runs, tmp_path):
    classes, local = local_runs
    wait_for_workers(cluster)
    out = tmp_path / "out"
    process = grade(classes["plain"], out, "--seed", "3", scheduler=cluster.scheduler_address, popen=True)
    wait_for_results(out, 5, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = results_in(out)
    assert 5 <= kept < 24 and not (out / "gradebook.csv").exists(), "the client was not killed midway"
    rerun = grade(classes["plain"], out, scheduler=cluster.scheduler_address)
    assert rerun.returncode == 0, rerun.stderr
    assert f"Graded {24 - kept} submissions ({kept} unchanged since the last run) with seed 3" in rerun.stdout
    for name in DERIVED:
        assert (out / name).read_bytes() == (local["plain"] / name).read_bytes(), name


def test_what_the_client_refuses(cluster, local_runs, tmp_path):
    classes, _ = local_runs
    address = cluster.scheduler_address
    done = grade(classes["mixed"], tmp_path / "a", "--require-isolation", "landlock-v99", scheduler=address)
    assert done.returncode == 2 and "below the required rlimits,landlock-v99" in done.stderr, done.stderr
    assert "never graded under mixed protection" in done.stderr and not (tmp_path / "a" / "results").exists()

    done = grade(classes["mixed"], tmp_path / "b", "-j", "2", scheduler=address)
    assert done.returncode == 2 and "-j has no meaning with --scheduler" in done.stderr

    impatient = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}  # Dask's own setting
    done = grade(classes["mixed"], tmp_path / "c", scheduler="tcp://127.0.0.1:9", env=impatient)
    assert done.returncode == 2 and "cannot reach a Dask scheduler there" in done.stderr
    assert "after 2 s" in done.stderr

    done = grade(classes["mixed"], tmp_path / "e", "--require-isolation", "uid-drop,landlock-v1", scheduler=address)
    if os.geteuid() == 0:
        assert done.returncode == 1, done.stderr  # met: graded (some rows are errors, as always)


def test_a_local_grade_never_imports_dask(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(STUB, folder / "alice.py")
    code = ("import sys\nfrom grader.cli import main\n"
            f"sys.argv = ['grader', 'grade', {str(folder)!r}, '--assignment', {str(ASSIGNMENT)!r}, "
            f"'--out', {str(tmp_path / 'out')!r}, '-j', '1']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(name for name in sys.modules if name.split('.')[0] in ('dask', 'distributed')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


def certificates(folder: Path) -> dict[str, Path]:
    """A CA and, signed by it, a certificate for the cluster's nodes and one for the client."""
    def openssl(*arguments: str) -> None:
        subprocess.run(["openssl", *arguments], cwd=folder, check=True, capture_output=True)
    folder.mkdir()
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test-ca",
            "-keyout", "ca-key.pem", "-out", "ca.pem")
    for role in ("node", "client"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={role}", "-keyout", f"{role}-key.pem",
                "-out", f"{role}.csr")
        openssl("x509", "-req", "-in", f"{role}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
                "-days", "1", "-out", f"{role}.pem")
    return {name: folder / f"{name}.pem" for name in ("ca", "node", "node-key", "client", "client-key")}


def _scheduler_address(scheduler_file: Path, deadline: float) -> str:
    """The address in a scheduler file once it holds one: the scheduler creates the file, then
    writes it (a read in between finds it empty, as CI once did on a loaded machine)."""
    while True:
        try:
            return json.loads(scheduler_file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="makes its certificates with openssl")
def test_the_documented_commands_over_tls(local_runs, tmp_path):
    """dask scheduler and dask worker as docs/cluster.md runs them, each a process of its own (two
    worker processes of one machine, claiming sandbox slots of their own), over TLS on loopback."""
    classes, local = local_runs
    tls = certificates(tmp_path / "tls")
    environment = {**os.environ, "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
                   "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(tls["ca"])}
    node = ["--tls-ca-file", str(tls["ca"]), "--tls-cert", str(tls["node"]), "--tls-key", str(tls["node-key"])]
    where = tmp_path / "scheduler.json"
    dask = str(Path(sys.executable).parent / "dask")
    processes = [subprocess.Popen([dask, "scheduler", "--protocol", "tls", "--host", "127.0.0.1",
                                   "--port", "0", "--no-dashboard", "--scheduler-file", str(where), *node],
                                  env=environment, start_new_session=True, stderr=subprocess.DEVNULL)]
    try:
        address = _scheduler_address(where, deadline=time.monotonic() + 60)
        assert address.startswith("tls://127.0.0.1:")
        processes.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2", "--nthreads", "1",
                                           "--resources", "sandbox=1", "--no-dashboard", *node],  # a resource too
                                          env=environment, start_new_session=True, stderr=subprocess.DEVNULL))
        client = {**environment, "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(tls["client"]),
                  "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(tls["client-key"])}
        out = tmp_path / "out"
        command = [*GRADER, "grade", str(classes["mixed"]), "--assignment", str(ASSIGNMENT), "--out", str(out),
                   "--seed", "3", "--scheduler", address]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=client)
        assert done.returncode == 1, done.stderr
        for name in DERIVED:
            assert (out / name).read_bytes() == (local["mixed"] / name).read_bytes(), name

        command[command.index("--out") + 1] = str(tmp_path / "out2")
        bare = subprocess.run(command, capture_output=True, text=True, timeout=600, env=environment)
        assert bare.returncode == 2 and "TLS needs the cluster's CA and a client certificate" in bare.stderr

        rogue = certificates(tmp_path / "rogue")  # a CA of its own: Dask's TLS checks both sides
        stranger = {**client, "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(rogue["client"]),
                    "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(rogue["client-key"]),
                    "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s"}
        refused = subprocess.run(command, capture_output=True, text=True, timeout=600, env=stranger)
        assert refused.returncode == 2 and "cannot reach a Dask scheduler there" in refused.stderr, refused.stderr
        assert not (tmp_path / "out2" / "results").exists()
    finally:
        stop(processes)


def stop(processes: list[subprocess.Popen]) -> None:
    """End the dask processes a test started (each the leader of a session of its own: its nanny's
    worker processes too)."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        process.wait(timeout=60)


def _free_port() -> int:
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_stock_scheduler_and_worker_as_they_come_with_a_worker_killed_midway(local_runs, tmp_path):
    """``dask scheduler`` and ``dask worker ADDRESS`` with Dask's defaults (one worker process of
    as many threads as the machine has cores, a nanny, no resources, allowed-failures 3): the
    scheduler is told only where to listen, as the default port may be taken on a shared machine."""
    classes, local = local_runs
    dask_command = str(Path(sys.executable).parent / "dask")
    address = f"tcp://127.0.0.1:{_free_port()}"
    processes = [subprocess.Popen([dask_command, "scheduler", "--host", "127.0.0.1",
                                   "--port", address.rsplit(":", 1)[1]],
                                  start_new_session=True, stderr=subprocess.DEVNULL)]
    try:
        processes.append(subprocess.Popen([dask_command, "worker", address], start_new_session=True,
                                          stderr=subprocess.DEVNULL))
        with Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=120)
            [info] = client.scheduler_info()["workers"].values()
            assert info["nthreads"] == os.cpu_count() and not info.get("resources")
            assert client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.allowed_failures) == 3
            out = tmp_path / "out"
            process = grade(classes["plain"], out, "--seed", "3", scheduler=address, popen=True)
            wait_for_results(out, 4, process)
            [victim] = client.run(os.getpid).values()
            assert results_in(out) < 24, "the worker was not killed midway"
            os.kill(victim, signal.SIGKILL)   # the only worker process: its nanny starts another
            stdout, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr
        assert results_in(out) == 24 and "Graded 24 submissions (0 unchanged since the last run)" in stdout
        for name in DERIVED:
            assert (out / name).read_bytes() == (local["plain"] / name).read_bytes(), name
    finally:
        stop(processes)
