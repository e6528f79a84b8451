"""Results of the engine-test assignment (tests/fixtures/mini), graded once per session for reporter tests."""

import os
from pathlib import Path

import pytest

import grader

MINI = Path(__file__).parent / "fixtures" / "mini"


@pytest.fixture(scope="session", autouse=True)
def spec_cache_folder(tmp_path_factory):
    """Parsed specs are cached in a folder of the test session's, not the user's (subprocesses too)."""
    previous = os.environ.get("GRADER_CACHE_DIR")
    os.environ["GRADER_CACHE_DIR"] = str(tmp_path_factory.mktemp("spec-cache"))
    yield
    if previous is None:
        os.environ.pop("GRADER_CACHE_DIR", None)
    else:
        os.environ["GRADER_CACHE_DIR"] = previous


@pytest.fixture(scope="session")
def assignment():
    return grader.load_assignment(MINI)


@pytest.fixture(scope="session")
def correct(assignment):
    """Full marks."""
    return grader.grade_submission(MINI / "squares.py", assignment, seed=1)


@pytest.fixture(scope="session")
def wrong(assignment, tmp_path_factory):
    """square() returns 2x: one scenario failed with a misconception."""
    path = tmp_path_factory.mktemp("wrong") / "squares.py"
    path.write_text((MINI / "squares.py").read_text().replace("** 2", "* 2"))
    return grader.grade_submission(path, assignment, seed=1)


@pytest.fixture(scope="session")
def ungradable(assignment, tmp_path_factory):
    """The file does not exist: a result with an error and nothing run."""
    return grader.grade_submission(tmp_path_factory.mktemp("missing") / "squares.py", assignment, seed=1)
