"""Job folders: held by the grader that made them, swept once their holder is gone (real processes,
real folders, the real CLI for a grader killed together with its warden)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.sandbox.job_folders import PREFIX, SETTLE_SECONDS, JobFolder, sweep

ROOT = Path(__file__).resolve().parent.parent
GRADER = Path(sys.executable).parent / "grader"
LATER = time.time() + 2 * SETTLE_SECONDS  # every folder made now is settled by then

# Makes a job folder in argv[1], says where, and holds it until its stdin closes.
HOLDER = ("import sys; from grader.sandbox.job_folders import JobFolder; "
          "folder = JobFolder(sys.argv[1]); print(folder.path, flush=True); sys.stdin.read()")


def _holder(parent: Path) -> tuple[subprocess.Popen, Path]:
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(parent)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def test_a_job_folder_is_held_by_its_process_until_removed_or_its_process_ends(tmp_path):
    folder = JobFolder(str(tmp_path))
    assert folder.path.parent == tmp_path and folder.path.name.startswith(PREFIX)
    (folder.path / "autodiff.py").write_text("x = 1\n")
    assert sweep(str(tmp_path), now=LATER) == 0 and folder.path.exists()
    folder.remove()
    assert not folder.path.exists()
    folder.remove()  # twice is fine

    holder, held = _holder(tmp_path)
    try:
        assert sweep(str(tmp_path), now=LATER) == 0 and held.is_dir(), "a live process's folder was swept"
    finally:
        holder.communicate("")
    assert sweep(str(tmp_path), now=LATER) == 1 and not held.exists()


def test_the_sweep_takes_only_settled_folders_nobody_holds_and_follows_no_link(tmp_path):
    left = tmp_path / f"{PREFIX}left"
    (left / "deep" / "deeper").mkdir(parents=True)
    (left / "deep" / "deeper" / "autodiff.py").write_text("x = 1\n")
    (left / "deep").chmod(0o000)  # what a submission may leave
    young = tmp_path / f"{PREFIX}young"
    young.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine\n")
    (tmp_path / f"{PREFIX}link").symlink_to(elsewhere, target_is_directory=True)
    (tmp_path / f"{PREFIX}file").write_text("not a folder\n")
    (tmp_path / "not-a-job-folder").mkdir()
    for path in (left, elsewhere, tmp_path / "not-a-job-folder"):
        os.utime(path, (LATER - 2 * SETTLE_SECONDS, LATER - 2 * SETTLE_SECONDS), follow_symlinks=False)
    os.utime(young, (LATER - SETTLE_SECONDS / 2, LATER - SETTLE_SECONDS / 2))

    assert sweep(str(tmp_path), now=LATER) == 1
    assert not left.exists()
    assert young.is_dir() and (tmp_path / f"{PREFIX}file").is_file()
    assert (tmp_path / f"{PREFIX}link").is_symlink() and (elsewhere / "keep.txt").read_text() == "mine\n"
    assert (tmp_path / "not-a-job-folder").is_dir()
    assert sweep(str(tmp_path / "missing"), now=LATER) == 0


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_an_ordinary_user_sweeps_its_own_leftovers_and_passes_over_another_users():
    nobody = 65534
    as_nobody = ["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups", "--", sys.executable]
    if subprocess.run([*as_nobody, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); import grader.sandbox"],
                      capture_output=True).returncode != 0:
        pytest.skip("this interpreter or the grader's source is out of an ordinary user's reach here")
    shared = Path(tempfile.mkdtemp(prefix="job-folders-"))  # as the temp folder is: anyone may enter
    try:
        shared.chmod(0o1777)
        theirs = shared / f"{PREFIX}root"
        theirs.mkdir(mode=0o700)
        mine = shared / f"{PREFIX}nobody"
        mine.mkdir(mode=0o700)
        (mine / "autodiff.py").write_text("x = 1\n")
        os.chown(mine / "autodiff.py", nobody, nobody)
        os.chown(mine, nobody, nobody)
        swept = subprocess.run(
            [*as_nobody, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
             f"from grader.sandbox.job_folders import sweep; print(sweep({str(shared)!r}, now={LATER}))"],
            capture_output=True, text=True, timeout=60)
        assert swept.returncode == 0, swept.stderr
        assert swept.stdout.strip() == "1"
        assert not mine.exists() and theirs.is_dir()
    finally:
        shutil.rmtree(shared)


def test_a_ctrl_c_as_the_folder_is_let_go_never_closes_its_descriptor_twice(tmp_path, monkeypatch):
    # Ctrl-C in check --watch landed as the descriptor's close returned (a KeyboardInterrupt there):
    # close() then removed the folder again, closed that number a second time, and the check ended
    # in "internal error: Bad file descriptor" instead of "Interrupted." (exit 3, not 130).
    folder = JobFolder(str(tmp_path))
    close, held = os.close, folder._fd

    def interrupted(fd: int) -> None:
        close(fd)
        if fd == held:   # the folder's own descriptor, not those remove_tree opens meanwhile
            raise KeyboardInterrupt
    monkeypatch.setattr(os, "close", interrupted)
    with pytest.raises(KeyboardInterrupt):
        folder.remove()
    monkeypatch.setattr(os, "close", close)
    folder.remove()   # as Sandbox.close does after the interrupt: nothing left to close
    assert not folder.path.exists()


def test_a_grader_killed_with_its_warden_leaves_a_folder_that_the_next_grader_sweeps(tmp_path):
    # A CI runner's timeout, or kill -9 of both: no process is left to remove the folder of the
    # zygote that --watch started ahead of the next save. The next grader's sandbox sweeps it.
    student = tmp_path / "autodiff"
    shutil.copytree(ROOT / "exercises" / "autodiff", student)
    shutil.copy(ROOT / "solutions" / "autodiff" / "autodiff.py", student / "autodiff.py")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary)}
    watcher = subprocess.Popen([str(GRADER), "check", "--watch"], cwd=student, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not (wardens := _children(watcher.pid)) or not any(_children(pid) for pid in wardens) \
                or not list(temporary.glob(f"{PREFIX}*")):
            assert time.monotonic() < deadline, "no zygote started ahead of the next save"
            time.sleep(0.02)
        for pid in (*wardens, watcher.pid):
            os.kill(pid, signal.SIGKILL)
        watcher.wait(timeout=10)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
    left = list(temporary.glob(f"{PREFIX}*"))
    assert len(left) == 1, "the case this test is about did not happen"
    old = time.time() - 2 * SETTLE_SECONDS
    os.utime(left[0], (old, old))

    checked = subprocess.run([str(GRADER), "check"], cwd=student, env=env, capture_output=True, text=True,
                             timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "55/55 points" in checked.stdout
    assert list(temporary.glob(f"{PREFIX}*")) == []


def _children(pid: int) -> list[int]:
    listed = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(line) for line in listed.stdout.split()]
