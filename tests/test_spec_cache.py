"""The cache of parsed specs: read back exactly, never for another text, and never a reason to fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader import spec_cache
from grader.errors import SpecError
from grader.spec_yaml import MarkedDict, MarkedList, _parse_yaml, parse

ROOT = Path(__file__).parent.parent
SPECS = [ROOT / "exercises" / "autodiff" / "assignment.yaml", ROOT / "solutions" / "autodiff" / "hidden.yaml"]


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GRADER_CACHE_DIR", str(folder))
    return folder


def same(one, other) -> bool:
    """Equal values of the same types, with the same lines everywhere."""
    if type(one) is not type(other):
        return False
    if isinstance(one, (MarkedDict, MarkedList)):
        if (one.line, one.lines) != (other.line, other.lines) or len(one) != len(other):
            return False
        pairs = zip(one.values(), other.values()) if isinstance(one, dict) else zip(one, other)
        return (not isinstance(one, dict) or list(one) == list(other)) and all(same(a, b) for a, b in pairs)
    return one == other


@pytest.mark.parametrize("spec", SPECS, ids=lambda path: path.name)
def test_a_spec_parsed_once_comes_back_the_same_without_pyyaml(cache, spec):
    program = textwrap.dedent(f"""
        import json, sys
        from grader.spec_yaml import parse
        document = parse(open({str(spec)!r}).read(), "spec.yaml")
        print(json.dumps("yaml" in sys.modules))
        """)
    first, second = (subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                                    env={**os.environ, "GRADER_CACHE_DIR": str(cache)}) for _ in range(2))
    assert json.loads(first.stdout) is True and json.loads(second.stdout) is False
    text = spec.read_text()
    assert same(parse(text, "spec.yaml"), _parse_yaml(text, "spec.yaml"))


def test_the_cache_never_answers_for_another_text(cache):
    parse("id: one\n", "a.yaml")
    assert parse("id: two\n", "a.yaml") == {"id": "two"}
    # Even when another text's entry sits where this text's would (a clash of the file name's hash):
    other = spec_cache._entry("id: one\n", "spec").read_text()
    cache.joinpath(spec_cache._entry("id: three\n", "spec").name).write_text(other)
    assert parse("id: three\n", "a.yaml") == {"id": "three"}


@pytest.mark.parametrize("damage", ["", "{", '{"format": 1}', "[]", "null"])
def test_a_damaged_entry_only_costs_a_parse(cache, damage):
    parse("id: one\nlist: [1, 2]\n", "a.yaml")
    spec_cache._entry("id: one\nlist: [1, 2]\n", "spec").write_text(damage)
    document = parse("id: one\nlist: [1, 2]\n", "a.yaml")
    assert document == {"id": "one", "list": [1, 2]} and document.lines == {"id": 1, "list": 2}


def test_an_unwritable_cache_folder_only_costs_a_parse(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("GRADER_CACHE_DIR", str(blocker))
    assert parse("id: one\n", "a.yaml") == {"id": "one"}
    assert parse("id: one\n", "a.yaml") == {"id": "one"}


def test_a_spec_error_is_never_cached(cache):
    for _ in range(2):
        with pytest.raises(SpecError, match="appears twice"):
            parse("id: one\nid: two\n", "a.yaml")
    assert not cache.exists() or not list(cache.iterdir())


@pytest.mark.parametrize("text, shown", [("due: 2026-12-01\n", "2026-12-01"), ("weight: .nan\n", "nan")])
def test_values_json_cannot_hold_are_parsed_every_time(cache, text, shown):
    assert str(parse(text, "a.yaml").popitem()[1]) == shown
    assert not cache.exists() or not list(cache.iterdir())
