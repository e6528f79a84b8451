"""The naive baseline an instructor would write: pytest over the same scenarios, once per submission.

Run as ``SUBMISSION=path/to/autodiff.py python -m pytest benchmarks/baseline -q``. The submission
is imported straight into the pytest process (no isolation at all), and each scenario's program
and check run one after the other, exactly as the grader would judge them.
"""

import importlib.util
import json
import os
from pathlib import Path

import pytest

from grader.loading import load_assignment
from grader.sandbox.decoding import decode
from grader.sandbox.encoding import encode

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = load_assignment(ROOT / "exercises" / "autodiff", hidden=ROOT / "solutions" / "autodiff")


def _load_submission():
    spec = importlib.util.spec_from_file_location("autodiff", os.environ["SUBMISSION"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def submission():
    return _load_submission()


@pytest.mark.parametrize("scenario", ASSIGNMENT.scenarios, ids=lambda s: s.id)
def test_scenario(submission, scenario):
    inputs = scenario.code.inputs(1)
    observed = scenario.code.program(submission, **inputs)
    # The same plain data the grader would judge: exceptions become records, arrays copies.
    got = decode(json.dumps(encode(observed)).encode())
    scenario.code.check_fn(got, **inputs)
