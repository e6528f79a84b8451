"""The fast schema check agrees with nbformat's own validate, on valid and broken notebooks."""

import copy
import json

import nbformat
import pytest

from grader.formats.notebook_schema import schema_problem
from notebook_fixtures import dumps, notebook, widget_cell, with_image


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


def test_valid_notebooks_pass_both():
    assert nbformat_accepts(valid()) and schema_problem(valid()) is None


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_notebooks_fail_both_and_say_where(name):
    document = broken(BROKEN[name])
    assert not nbformat_accepts(document)
    problem = schema_problem(document)
    assert problem is not None and problem.startswith("notebook"), problem


def test_older_minor_versions_use_their_own_schema():
    document = valid()
    document["nbformat_minor"] = 4
    for cell in document["cells"]:
        cell.pop("id")
    assert nbformat_accepts(document) and schema_problem(document) is None
    document["cells"][0]["id"] = "cell-1"  # ids came with 4.5
    assert not nbformat_accepts(document) and schema_problem(document) is not None


def test_the_compiled_validator_is_cached(tmp_path, monkeypatch):
    import subprocess
    import sys
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    probe = ("import json, sys; from grader.formats.notebook_schema import schema_problem\n"
             "print(schema_problem(json.loads(sys.stdin.read())))\n")
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", probe], input=json.dumps(valid()), capture_output=True,
                             text=True, timeout=60, check=False)
        assert run.stdout.strip() == "None", run.stderr
    assert [p.name.startswith("nbschema-") for p in tmp_path.iterdir()] == [True]
