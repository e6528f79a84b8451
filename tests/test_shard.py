"""Shards: a deterministic slice of a class by a hash of the student id, the same everywhere."""

from __future__ import annotations

import subprocess
import sys

import pytest

from grader.errors import UsageError
from grader.shard import Shard, shard_of

IDS = [f"student{number:04d}" for number in range(3000)] + ["zoë", "Jane Doe_123457", "smithjane_4242", "=cmd"]


def test_every_student_is_in_exactly_one_shard_of_any_split():
    for count in (1, 2, 3, 7):
        shards = [Shard(index, count) for index in range(1, count + 1)]
        for student in IDS:
            assert sum(shard.holds(student) for shard in shards) == 1


def test_the_split_is_even_and_independent_of_the_other_students():
    sizes = [sum(shard_of(student, 3) == index for student in IDS) for index in (1, 2, 3)]
    assert all(900 < size < 1120 for size in sizes), sizes
    # A student's shard depends on nothing but the id: adding or removing others moves nobody.
    assert [shard_of(s, 3) for s in IDS[::-1]] == [shard_of(s, 3) for s in IDS][::-1]


def test_the_same_on_another_interpreter_whatever_its_hash_seed():
    """Python's own hash() is salted per process: a shard must not be."""
    here = [shard_of(student, 5) for student in IDS[:50]]
    code = ("import sys; from grader.shard import shard_of; "
            "print(','.join(str(shard_of(s, 5)) for s in sys.argv[1:]))")
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", code, *IDS[:50]], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"})
        assert done.stdout.strip() == ",".join(map(str, here))


def test_known_values_never_change():
    """Shards graded by an older grader must merge with a newer one's: the function is pinned."""
    assert [shard_of(s, 3) for s in ("alice", "bob", "dave", "erin", "hank", "kim")] == [3, 3, 2, 1, 1, 2]


@pytest.mark.parametrize("text, shard", [("1/3", Shard(1, 3)), (" 3/3 ", Shard(3, 3)), ("1/1", Shard(1, 1))])
def test_parse(text, shard):
    assert Shard.parse(text) == shard and str(shard) == text.strip()


@pytest.mark.parametrize("text, message", [("0/3", "numbered 1 to N"), ("4/3", "numbered 1 to N"),
                                           ("1/0", "numbered 1 to N"), ("2", "expected I/N"),
                                           ("a/b", "expected I/N"), ("-1/3", "expected I/N")])
def test_bad_shards_say_the_right_form(text, message):
    with pytest.raises(UsageError, match=message):
        Shard.parse(text)
