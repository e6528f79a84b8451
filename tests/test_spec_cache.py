"""The cache of parsed specs and scenario indexes: read back exactly, never for another text, and never
a reason to fail (a damaged, foreign or hostile entry is a miss)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader import scenario_index
from grader.errors import SpecError
from grader.spec_cache import SpecCache
from grader.spec_yaml import MarkedDict, MarkedList, parse

ROOT = Path(__file__).parent.parent
SPECS = [ROOT / "exercises" / "autodiff" / "assignment.yaml", ROOT / "solutions" / "autodiff" / "hidden.yaml"]
TEXT = textwrap.dedent('''\
    from grader.scenario import scenario

    @scenario
    def plain(ad):
        return {"z": attempt(lambda: ad.f())}
    ''')


@pytest.fixture
def cache(tmp_path) -> SpecCache:
    return SpecCache(tmp_path / "cache")


def parsed(cache: SpecCache, text: str):
    return cache.parsed(text, lambda t: parse(t, "a.yaml"))


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
        from pathlib import Path
        from grader.spec_cache import SpecCache
        from grader.spec_yaml import parse
        document = SpecCache(Path({str(cache.folder)!r})).parsed(open({str(spec)!r}).read(),
                                                                lambda text: parse(text, "spec.yaml"))
        print(json.dumps("yaml" in sys.modules))
        """)
    first, second = (subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
                     for _ in range(2))
    assert json.loads(first.stdout) is True and json.loads(second.stdout) is False
    text = spec.read_text()
    assert same(parsed(cache, text), parse(text, "spec.yaml"))


def test_the_cache_never_answers_for_another_text(cache):
    parsed(cache, "id: one\n")
    assert parsed(cache, "id: two\n") == {"id": "two"}
    # Even when another text's entry sits where this text's would (a clash of the file name's hash):
    cache.entry("spec", "id: three\n").write_text(cache.entry("spec", "id: one\n").read_text())
    assert parsed(cache, "id: three\n") == {"id": "three"}


@pytest.mark.parametrize("damage", ["", "{", '{"format": 1}', "[]", "null", "[" * 100_000 + "]" * 100_000])
def test_a_damaged_entry_only_costs_a_parse(cache, damage):
    parsed(cache, "id: one\nlist: [1, 2]\n")
    cache.entry("spec", "id: one\nlist: [1, 2]\n").write_text(damage)
    document = parsed(cache, "id: one\nlist: [1, 2]\n")
    assert document == {"id": "one", "list": [1, 2]} and document.lines == {"id": 1, "list": 2}


def test_a_hostile_entry_for_the_very_text_is_a_miss_not_an_error(cache):
    # Deeply nested, or claiming the right text with values of the wrong shape: never a crash.
    text = "id: one\n"
    parsed(cache, text)
    stored = json.loads(cache.entry("spec", text).read_text())
    deep = '{"mapping": {"id": ' * 5000 + "1" + '}, "line": 1, "lines": {"id": 1}}' * 5000
    for value in (deep, *map(json.dumps, ({"mapping": {"id": 3}, "line": "x", "lines": {}}, {"list": "no"}, [1, 2]))):
        cache.entry("spec", text).write_text(json.dumps({**stored, "value": None})[:-len("null}")] + value + "}")
        assert parsed(cache, text) == {"id": "one"}


def test_an_unwritable_cache_folder_only_costs_a_parse(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    cache = SpecCache(blocker)
    assert parsed(cache, "id: one\n") == {"id": "one"}
    assert parsed(cache, "id: one\n") == {"id": "one"}


def test_a_spec_error_is_never_cached(cache):
    for _ in range(2):
        with pytest.raises(SpecError, match="appears twice"):
            parsed(cache, "id: one\nid: two\n")
    assert not cache.folder.exists() or not list(cache.folder.iterdir())


@pytest.mark.parametrize("text, shown", [("due: 2026-12-01\n", "2026-12-01"), ("weight: .nan\n", "nan")])
def test_values_json_cannot_hold_are_parsed_every_time(cache, text, shown):
    assert str(parsed(cache, text).popitem()[1]) == shown
    assert not cache.folder.exists() or not list(cache.folder.iterdir())


def test_an_index_comes_back_from_the_cache_in_another_process(cache):
    program = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        from grader.spec_cache import SpecCache
        records = SpecCache(Path({str(cache.folder)!r})).indexed({TEXT!r})
        print(json.dumps({{"symtable": "symtable" in sys.modules, "records": list(records)}}))
        """)
    first, second = (json.loads(subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                                               check=True, env=os.environ).stdout) for _ in range(2))
    assert first["symtable"] is True and second["symtable"] is False, "the second process analysed the file again"
    assert second["records"] == first["records"] == list(scenario_index.functions(TEXT))


def test_a_damaged_or_foreign_index_only_costs_an_analysis(cache):
    expected = list(scenario_index.functions(TEXT))
    cache.indexed(TEXT)
    entry = next(cache.folder.iterdir())
    stored = json.loads(entry.read_text())
    for damage in ("", "{", json.dumps({**stored, "stamp": "1:another python", "value": []}),
                   json.dumps({**stored, "value": [{"name": "plain"}]}),
                   json.dumps({**stored, "value": [{**expected[0], "line": "9"}]})):
        entry.write_text(damage)
        assert list(cache.indexed(TEXT)) == expected


def test_a_syntax_error_is_raised_and_not_cached(cache):
    with pytest.raises(SyntaxError):
        cache.indexed("def broken(:\n")
    assert not cache.folder.exists() or not list(cache.folder.iterdir())


def test_a_scenario_files_bytecode_comes_back_from_the_cache_in_another_process(cache):
    # The second process finds the code in the cache: it never calls compile() for that text.
    program = textwrap.dedent(f"""
        import builtins, json
        from pathlib import Path
        from grader.spec_cache import SpecCache
        compiled = []
        real = builtins.compile
        builtins.compile = lambda *args, **kwargs: compiled.append(args[1]) or real(*args, **kwargs)
        code = SpecCache(Path({str(cache.folder)!r})).compiled({TEXT!r}, "/course/scenarios.py")
        namespace = {{}}
        exec(code, namespace)
        print(json.dumps({{"compiled": compiled, "filename": code.co_filename,
                           "scenario": namespace["plain"].id}}))
        """)
    first, second = (json.loads(subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                                               check=True, env=os.environ).stdout) for _ in range(2))
    assert first["compiled"] == ["/course/scenarios.py"] and second["compiled"] == []
    assert first["filename"] == second["filename"] == "/course/scenarios.py"
    assert first["scenario"] == second["scenario"] == "plain"


def test_bytecode_is_kept_per_file_name_and_a_damaged_entry_only_costs_a_compile(cache):
    cache.compiled(TEXT, "/course/scenarios.py")
    assert cache.compiled(TEXT, "/elsewhere/scenarios.py").co_filename == "/elsewhere/scenarios.py"
    entry = next(cache.folder.iterdir())
    stored = json.loads(entry.read_text())
    for damage in ("", json.dumps({**stored, "value": "bm90IGNvZGU="}), json.dumps({**stored, "value": 7}),
                   json.dumps({**stored, "value": "6QAAAAA="})):   # "not code"; 7; marshal's int 0
        entry.write_text(damage)
        code = cache.compiled(TEXT, "/elsewhere/scenarios.py")
        assert code.co_filename == "/elsewhere/scenarios.py" and "plain" in code.co_names


def test_a_scenario_file_with_a_syntax_error_is_raised_and_not_cached(cache):
    with pytest.raises(SyntaxError):
        cache.compiled("def broken(:\n", "/course/scenarios.py")
    assert not cache.folder.exists() or not list(cache.folder.iterdir())
