"""Wake-ups on saves (grader.file_events), with the real kernel: inotify on a real folder."""

from __future__ import annotations

import os
import threading
import time

import pytest

from grader.file_events import FolderEvents


def _after(seconds: float, action) -> threading.Thread:
    def run():
        time.sleep(seconds)
        action()
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _waited(events: FolderEvents, seconds: float = 5.0) -> float:
    began = time.monotonic()
    events.wait(seconds)
    return time.monotonic() - began


@pytest.fixture
def events(tmp_path):
    with FolderEvents([tmp_path]) as watching:
        if not watching.active:
            pytest.skip("no inotify here")
        yield watching


def test_a_save_by_rename_wakes_the_watcher_at_once(tmp_path, events):
    def save():
        (tmp_path / ".autodiff.py.tmp").write_text("x = 1\n")
        os.replace(tmp_path / ".autodiff.py.tmp", tmp_path / "autodiff.py")
    thread = _after(0.05, save)
    assert _waited(events) < 2.0
    thread.join()


def test_an_in_place_save_wakes_it_when_the_file_is_closed_not_at_its_first_write(tmp_path, events):
    target = tmp_path / "autodiff.py"
    target.write_text("x = 0\n")
    events.wait(0)  # that write's own event
    handle = open(target, "w")  # truncated: a save that has only begun
    assert _waited(events, 0.3) >= 0.3, "woken by a file still being written"
    handle.write("x = 1\n")
    thread = _after(0.05, handle.close)
    assert _waited(events) < 2.0
    thread.join()


def test_events_are_consumed_so_the_next_wait_waits(tmp_path, events):
    (tmp_path / "a.py").write_text("1")
    (tmp_path / "b.py").write_text("2")
    events.wait(1.0)
    assert _waited(events, 0.2) >= 0.2


def test_a_folder_that_cannot_be_watched_leaves_a_plain_timer(tmp_path):
    with FolderEvents([tmp_path / "missing"]) as events:
        assert not events.active
        assert 0.1 <= _waited(events, 0.1) < 2.0
