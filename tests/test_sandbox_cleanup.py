"""Removing a job folder cannot fail on depth, links, modes or names (grader/sandbox/cleanup.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from grader.sandbox.cleanup import remove_tree


def _nest(top, depth: int, name: str = "d") -> None:
    """``depth`` nested folders under ``top``, built with descriptors (the path would exceed PATH_MAX)."""
    folder = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for level in range(depth):
        os.mkdir(name, dir_fd=folder)
        if level % 500 == 0:
            with open(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=folder), "w") as handle:
                handle.write("x")
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = inner
    os.close(folder)


def test_three_thousand_nested_folders_are_removed(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    _nest(job, 3000)
    with pytest.raises(RecursionError):  # what the grader used to call, and why this module exists
        shutil.rmtree(job, ignore_errors=True)
    assert remove_tree(job) and not job.exists()


def test_links_are_removed_never_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    job = tmp_path / "job"
    (job / "a" / "b").mkdir(parents=True)
    (job / "a" / "b" / "to_outside").symlink_to(outside)
    (job / "to_file").symlink_to(outside / "keep.txt")
    os.link(outside / "keep.txt", job / "a" / "hard_link")
    os.mkfifo(job / "a" / "fifo")
    assert remove_tree(job) and not job.exists()
    assert (outside / "keep.txt").read_text() == "precious"


def test_a_link_given_as_the_folder_itself_is_only_unlinked(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    (tmp_path / "job").symlink_to(outside)
    assert remove_tree(tmp_path / "job") and (outside / "keep.txt").exists()


def test_names_that_clash_with_the_ones_it_picks(tmp_path):
    job = tmp_path / "job"
    for name in (".grader-removing-1", ".grader-removing-2/x", "a/.grader-removing-3/y", "a/b/c/d"):
        (job / name).mkdir(parents=True)
    (job / ".grader-removing-4").write_text("a file where a folder would go")
    assert remove_tree(job) and not job.exists()


def test_missing_folder_is_gone_already(tmp_path):
    assert remove_tree(tmp_path / "never-made")


def test_folders_their_owner_made_unreadable_are_removed_by_that_owner(tmp_path):
    # As an ordinary user the grader owns the job folder and everything in it, and so can give
    # itself back the rights the submission took away. Tried in a child that becomes a spare uid.
    if os.geteuid() != 0:
        pytest.skip("needs root to become another user for the test")
    uid = int(os.environ.get("GRADER_SANDBOX_UID_BASE", "61000")) + 990
    base = tempfile.mkdtemp(prefix="cleanup-test-")
    os.chown(base, uid, uid)
    job = Path(base) / "job"
    pid = os.fork()
    if pid == 0:
        try:
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            for name in ("locked/inner", "writeless/inner", "searchless/inner", "deep/a/b"):
                (job / name).mkdir(parents=True)
                (job / name / "file").write_text("x")
            _nest(job / "deep", 1200)
            for name, mode in (("locked/inner", 0), ("locked", 0), ("writeless", 0o500), ("searchless", 0o600)):
                os.chmod(job / name, mode)
            os._exit(0 if remove_tree(job) and not os.path.lexists(job) else 1)
        except BaseException as error:
            os.write(2, f"{error!r}\n".encode())
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    try:
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)
