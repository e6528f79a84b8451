"""The scenario file index: what the rubric and the loader read from a scenario file's text alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from grader import scenario_index

TEXT = textwrap.dedent('''\
    from __future__ import annotations
    import numpy as np
    from grader.scenario import scenario

    def make(rng):
        return {"x": rng.normal(size=3)}

    @scenario(inputs=make)
    def with_inputs(ad, x):
        def inner(y):
            return helper(y)
        return {"y": inner(x) + np.ones(3)}

    @scenario
    def plain(ad):
        return {"z": attempt(lambda: ad.f())}
    ''')


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GRADER_CACHE_DIR", str(folder))
    scenario_index.functions.cache_clear()
    yield folder
    scenario_index.functions.cache_clear()


def test_every_function_with_its_lines_inputs_and_globals(cache):
    records = {record["name"]: record for record in scenario_index.functions(TEXT)}
    assert set(records) == {"make", "with_inputs", "inner", "plain"}
    assert records["with_inputs"] == {"name": "with_inputs", "start": 8, "line": 9, "end": 12, "top": True,
                                      "inputs": True, "params": True, "globals": ["helper", "np"]}
    assert records["plain"]["inputs"] is False and records["plain"]["globals"] == ["attempt"]
    assert records["inner"]["top"] is False and records["inner"]["globals"] is None  # nested: not analysed
    assert (records["make"]["start"], records["make"]["line"], records["make"]["end"]) == (5, 5, 6)


def test_an_index_comes_back_from_the_cache_in_another_process(cache):
    program = textwrap.dedent(f"""
        import json, sys
        from grader import scenario_index
        records = scenario_index.functions({TEXT!r})
        print(json.dumps({{"symtable": "symtable" in sys.modules, "records": records}}))
        """)
    first, second = (json.loads(subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                                               check=True, env={**os.environ, "GRADER_CACHE_DIR": str(cache)}).stdout)
                     for _ in range(2))
    assert first["symtable"] is True and second["symtable"] is False, "the second process analysed the file again"
    assert second["records"] == first["records"] == list(scenario_index.functions(TEXT))


def test_a_damaged_or_foreign_entry_only_costs_an_analysis(cache):
    expected = scenario_index._index(TEXT)
    scenario_index.functions(TEXT)
    entry = next(cache.iterdir())
    stored = json.loads(entry.read_text())
    for damage in ("", "{", json.dumps({**stored, "stamp": "1:another python", "value": []}),
                   json.dumps({**stored, "value": [{"name": "with_inputs"}]}),
                   json.dumps({**stored, "value": [{**expected[0], "line": "9"}]})):
        entry.write_text(damage)
        scenario_index.functions.cache_clear()
        assert list(scenario_index.functions(TEXT)) == expected


def test_a_syntax_error_is_raised_and_not_cached(cache):
    with pytest.raises(SyntaxError):
        scenario_index.functions("def broken(:\n")
    assert not cache.exists() or not list(cache.iterdir())
