"""The scenario file index: what the rubric and the loader read from a scenario file's text alone."""

from __future__ import annotations

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


def test_every_function_with_its_lines_inputs_and_globals():
    records = {record["name"]: record for record in scenario_index.functions(TEXT)}
    assert set(records) == {"make", "with_inputs", "inner", "plain"}
    assert records["with_inputs"] == {"name": "with_inputs", "start": 8, "line": 9, "end": 12, "top": True,
                                      "inputs": True, "scenario": True, "params": True,
                                      "globals": ["helper", "np"]}
    assert records["plain"]["inputs"] is False and records["plain"]["globals"] == ["attempt"]
    assert records["make"]["scenario"] is False and records["plain"]["scenario"] is True
    assert records["inner"]["top"] is False and records["inner"]["globals"] is None  # nested: not analysed
    assert (records["make"]["start"], records["make"]["line"], records["make"]["end"]) == (5, 5, 6)


def test_a_syntax_error_is_raised():
    with pytest.raises(SyntaxError):
        scenario_index.functions("def broken(:\n")
