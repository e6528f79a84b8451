"""The fast schema check (a trusted cache holds its compiled validator) agrees with nbformat's own
validate (what runs without one), on valid and broken notebooks."""

import copy
import json

import pytest

pytest.importorskip("nbformat", reason="the notebook tests need the [notebook] extra (part of [test])")

import nbformat
from notebook_fixtures import dumps, notebook, widget_cell, with_image

from grader.formats.notebook_schema import schema_problem
from grader.spec_cache import SpecCache


def valid():
    return json.loads(dumps(notebook(("md", "# Title"), "import numpy as np", widget_cell(),
                                     with_image("x = 1", megabytes=0.01))))


def broken(change):
    document = valid()
    change(document)
    return document


BROKEN = {
    "execution count a string": lambda d: d["cells"][1].update(execution_count="three"),
    "source a number": lambda d: d["cells"][1].update(source=7),
    "unknown cell type": lambda d: d["cells"][0].update(cell_type="picture"),
    "a code cell without outputs": lambda d: d["cells"][1].pop("outputs"),
    "an unknown top-level field": lambda d: d.update(extra=1),
    "metadata a list": lambda d: d.update(metadata=[]),
    "an id with spaces": lambda d: d["cells"][0].update(id="not an id"),
    "an output without output_type": lambda d: d["cells"][2]["outputs"][0].pop("output_type"),
    "cells not a list": lambda d: d.update(cells={}),
}


def nbformat_accepts(document) -> bool:
    try:
        nbformat.validate(copy.deepcopy(document))
    except nbformat.ValidationError:
        return False
    return True


@pytest.fixture(params=["cached validator", "nbformat"])
def cache(request, tmp_path):
    return SpecCache(tmp_path) if request.param == "cached validator" else None


def test_valid_notebooks_pass_both(cache):
    assert nbformat_accepts(valid()) and schema_problem(valid(), cache) is None


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_notebooks_fail_both_and_say_where(name, cache):
    document = broken(BROKEN[name])
    assert not nbformat_accepts(document)
    problem = schema_problem(document, cache)
    assert problem is not None and problem.startswith("notebook"), problem


def test_older_minor_versions_use_their_own_schema(cache):
    document = valid()
    document["nbformat_minor"] = 4
    for cell in document["cells"]:
        cell.pop("id")
    assert nbformat_accepts(document) and schema_problem(document, cache) is None
    document["cells"][0]["id"] = "cell-1"  # ids came with 4.5
    assert not nbformat_accepts(document) and schema_problem(document, cache) is not None


def test_the_compiled_validator_is_kept_and_loaded_without_importing_nbformat(tmp_path):
    import subprocess
    import sys
    probe = ("import json, sys; from pathlib import Path; from grader.spec_cache import SpecCache\n"
             "from grader.formats.notebook_schema import schema_problem\n"
             "print(schema_problem(json.loads(sys.stdin.read()), SpecCache(Path(sys.argv[1]))),\n"
             "      sorted(m for m in sys.modules\n"
             "             if m.split('.')[0] in ('nbformat', 'jsonschema', 'fastjsonschema')))\n")
    outputs = []
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], input=json.dumps(valid()),
                             capture_output=True, text=True, timeout=60, check=False)
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout.strip())
    assert [p.name.startswith("nbschema-") for p in tmp_path.iterdir()] == [True]
    first = outputs[0].split(" ", 1)[1]
    assert outputs[0].startswith("None [") and "'nbformat" not in first and "'jsonschema" not in first
    assert outputs[1] == "None []"  # from the cache: not even fastjsonschema's package is imported
