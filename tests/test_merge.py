"""Shards through the real CLI: ``grade --shard i/N`` on each, ``grader merge``, the same bytes as one run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from classes import ASSIGNMENT, mixed_class

GRADER = [sys.executable, "-m", "grader"]
DERIVED = ("gradebook.csv", "summary.json")


def run(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([*GRADER, *arguments], capture_output=True, text=True, timeout=600)


def grade(submissions: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return run("grade", str(submissions), "--assignment", str(ASSIGNMENT), "--out", str(out), *extra)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, Path]:
    """One local run of the class and its three shards, each graded on its own, all with seed 3."""
    work = tmp_path_factory.mktemp("shards")
    folder = mixed_class(work / "class")
    outs = {"local": work / "local", **{f"{i}/3": work / f"shard{i}" for i in (1, 2, 3)}}
    done = grade(folder, outs["local"], "--seed", "3", "-j", "2")
    assert done.returncode == 1, done.stderr  # carol, dave and ivy could not be graded
    for shard in ("1/3", "2/3", "3/3"):
        done = grade(folder, outs[shard], "--seed", "3", "-j", "2", "--shard", shard)
        assert done.returncode in (0, 1), done.stderr
        assert f"(shard {shard})" in done.stdout
    return {**outs, "class": folder, "work": work}


def test_each_shard_grades_only_its_students(graded):
    students = {shard: json.loads((graded[shard] / "manifest.json").read_text())["students"] for shard in
                ("1/3", "2/3", "3/3")}
    assert [s["id"] for s in students["1/3"]] == ["erin", "hank", "leo", "olga"]
    assert [s["id"] for s in students["2/3"]] == ["dave", "kim"]
    assert [s["id"] for s in students["3/3"]] == ["alice", "bob", "carol", "gina", "ivy"]
    assert sorted(p.stem for p in (graded["1/3"] / "results").glob("*.json")) == ["erin", "hank", "leo", "olga"]
    # Ignored files are nobody's: every shard lists them, and the merge lists them once.
    for shard in ("1/3", "2/3", "3/3"):
        assert json.loads((graded[shard] / "summary.json").read_text())["ignored"][0]["path"] == ".DS_Store"


def test_three_shards_merged_are_byte_identical_to_one_run(graded, tmp_path):
    merged = tmp_path / "merged"
    done = run("merge", str(graded["1/3"]), str(graded["2/3"]), str(graded["3/3"]), "--out", str(merged))
    assert done.returncode == 1, done.stderr  # like the run: some could not be graded
    assert done.stdout.startswith(f"Merged 3 folders (11 students, seed 3) into {merged}")
    assert "8 of 11 submissions graded, 3 could not be graded" in done.stdout
    for name in DERIVED:
        assert (merged / name).read_bytes() == (graded["local"] / name).read_bytes(), name
    assert sorted(p.name for p in (merged / "results").glob("*.json")) == sorted(
        p.name for p in (graded["local"] / "results").glob("*.json"))
    manifest = json.loads((merged / "manifest.json").read_text())
    assert manifest["shard"] is None and manifest == json.loads((graded["local"] / "manifest.json").read_text())

    # The merged folder is an ordinary OUT: grading the class into it again regrades nothing.
    again = grade(graded["class"], merged, "-j", "2")
    assert "Graded 0 submissions (9 unchanged since the last run) with seed 3" in again.stdout, again.stderr
    assert (merged / "gradebook.csv").read_bytes() == (graded["local"] / "gradebook.csv").read_bytes()


def test_overlapping_folders_merge_when_their_results_agree(graded, tmp_path):
    """The whole class and one of its shards: every student of the shard is in both, graded alike
    (on another run, so with other timings)."""
    merged = tmp_path / "merged"
    done = run("merge", str(graded["local"]), str(graded["2/3"]), str(graded["1/3"]), str(graded["3/3"]),
               "--out", str(merged))
    assert done.returncode == 1, done.stderr
    for name in DERIVED:
        assert (merged / name).read_bytes() == (graded["local"] / name).read_bytes(), name


def test_what_merge_refuses(graded, tmp_path):
    shards = [str(graded[s]) for s in ("1/3", "2/3", "3/3")]
    target = str(tmp_path / "merged")

    done = run("merge", shards[0], shards[2], "--out", target)
    assert done.returncode == 2 and "shard 2/3 of the class is missing" in done.stderr

    done = run("merge", *shards, "--out", shards[0])
    assert done.returncode == 2 and "is one of the folders to merge" in done.stderr

    other_seed = tmp_path / "seed4"
    assert grade(graded["class"], other_seed, "--seed", "4", "-j", "2", "--shard", "2/3").returncode in (0, 1)
    done = run("merge", shards[0], str(other_seed), shards[2], "--out", target)
    assert done.returncode == 2 and "was graded with seed 4" in done.stderr and "the same --seed" in done.stderr

    changed = tmp_path / "changed"
    shutil.copytree(graded["local"], changed)
    result = json.loads((changed / "results" / "alice.json").read_text())
    result["scenarios"][0].update(status="failed", points=0)
    result["score"] -= result["scenarios"][0]["max_points"]
    (changed / "results" / "alice.json").write_text(json.dumps(result))
    done = run("merge", *shards, str(changed), "--out", target)
    assert done.returncode == 2 and "alice is in" in done.stderr and "with different results" in done.stderr

    unfinished = tmp_path / "unfinished"
    shutil.copytree(graded["1/3"], unfinished)
    (unfinished / "manifest.json").unlink()
    done = run("merge", str(unfinished), *shards[1:], "--out", target)
    assert done.returncode == 2 and "holds no finished batch" in done.stderr
    assert not (tmp_path / "merged").exists(), "a refused merge writes nothing"


def test_a_shard_needs_a_seed_and_a_valid_form(graded, tmp_path):
    done = grade(graded["class"], tmp_path / "out", "--shard", "1/3")
    assert done.returncode == 2 and "--shard 1/3 needs --seed" in done.stderr
    done = grade(graded["class"], tmp_path / "out", "--shard", "4/3", "--seed", "1")
    assert done.returncode == 2 and "numbered 1 to N" in done.stderr


