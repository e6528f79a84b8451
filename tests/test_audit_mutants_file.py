"""The named-mutants file (grader.audit.mutants_file) and misconception keys. Pure: texts in, mutants out."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from grader.audit import misconceptions
from grader.audit.mutants_file import MutantsFile, check_exclusions, read_mutants
from grader.errors import SpecError

ROOT = Path(__file__).resolve().parent.parent

REFERENCE = '''def helper(x):
    return x + 1


class Box:
    def put(self, x):
        """Store x."""
        # --- Task 1 begin ---
        self.x = helper(x)
        return self
        # --- Task 1 end ---

    def get(self):
        return helper(self.x)
'''

SCENARIOS = '''
WRONG_BOX = "put() stored the wrong value"
NOT_A_SENTENCE_USED = "nobody names this"

def check(got):
    expect_close(got, 1, what="x", wrong={WRONG_BOX: 2, "put() returned nothing": None})
'''

KNOWN = misconceptions.collect({"scenarios.py": SCENARIOS})


def read(text: str) -> MutantsFile:
    return read_mutants(text, "mutants.yaml", REFERENCE, "box.py", "box", ["t1", "engine"], KNOWN)


def problems(text: str) -> str:
    with pytest.raises(SpecError) as caught:
        read(text)
    return str(caught.value)


def test_a_body_replaces_the_statements_after_the_docstring_and_keeps_the_markers():
    mutant, = read("assignment: box\nmutants:\n  - id: m\n    task: t1\n    misconception: WRONG_BOX\n"
                   "    function: Box.put\n    body: |\n      self.x = x\n      return self\n").named
    assert '        """Store x."""\n        # --- Task 1 begin ---\n        self.x = x\n        return self\n' \
           '        # --- Task 1 end ---\n' in mutant.source
    assert mutant.misconceptions == ("put() stored the wrong value",)
    assert mutant.function == "Box.put" and mutant.kind.value == "named"


def test_a_replacement_must_match_exactly_once_and_may_be_scoped_to_a_function():
    text = ("assignment: box\nmutants:\n  - id: m\n    task: engine\n    misconception: null\n"
            "    replace:\n      - {old: 'return helper(self.x)', new: 'return self.x'}\n")
    mutant, = read(text).named
    assert "    def get(self):\n        return self.x\n" in mutant.source and mutant.misconceptions == ()
    loose = text.replace("{old: 'return helper(self.x)', new: 'return self.x'}", "{old: 'helper(', new: 'int('}")
    assert "occurs 3 times in box.py, must occur exactly once; make it longer" in problems(loose)
    scoped, = read(loose.replace("misconception: null", "misconception: null\n    function: Box.get")).named
    assert "return int(self.x)" in scoped.source and "self.x = helper(x)" in scoped.source


def test_an_edit_that_no_longer_applies_is_an_error_with_where_and_a_hint():
    message = problems("assignment: box\nmutants:\n  - id: m\n    task: t1\n"
                       "    replace:\n      - {old: 'self.x = helpr(x)', new: 'self.x = x'}\n")
    assert message.startswith("mutants.yaml:6: mutants[0].replace[0].old: occurs 0 times in box.py")
    assert "the reference changed? update the mutant; the closest line is 'self.x = helper(x)'" in message


@pytest.mark.parametrize("body, expected", [
    ("    task: t2\n    function: Box.put\n    body: return 1\n", "mutants.yaml:4: mutants[0].task: unknown task 't2'"),
    ("    task: t1\n    function: Box.putt\n    body: return 1\n",
     "'Box.putt' is not a function of box.py (did you mean 'Box.put'?)"),
    ("    task: t1\n    body: return 1\n", "mutants[0].body: needs function"),
    ("    task: t1\n", "mutants[0]: needs exactly one edit: body (with function) or replace"),
    ("    task: t1\n    function: Box.put\n    body: 'return (1'\n", "the edited box.py does not parse"),
    ("    task: t1\n    function: Box.put\n    body: |\n      self.x = helper(x)  # same\n      return self\n",
     "the edit changes nothing the grader can see"),
    ("    task: t1\n    misconception: WRONG_BOXX\n    function: Box.put\n    body: return 1\n",
     "mutants[0].misconception: no scenario file defines WRONG_BOXX (did you mean 'WRONG_BOX'?)"),
    ("    task: t1\n    may_cost: [t1]\n    function: Box.put\n    body: return 1\n",
     "mutants[0].may_cost[0]: must be another task's id"),
    ("    task: t1\n    colour: red\n    function: Box.put\n    body: return 1\n", "mutants[0].colour: unknown field"),
])
def test_every_mistake_in_a_mutant_is_a_spec_error(body, expected):
    assert expected in problems("assignment: box\nmutants:\n  - id: m\n" + body)


def test_ids_are_unique_and_two_mutants_may_not_be_the_same_code():
    one = "  - id: {}\n    task: t1\n    function: Box.put\n    body: return {}\n"
    assert "'a' is used twice (first on line 3)" in problems("assignment: box\nmutants:\n" + one.format("a", 1)
                                                             + one.format("a", 2))
    assert "the same code as mutant 'a'" in problems("assignment: box\nmutants:\n" + one.format("a", 1)
                                                     + one.format("b", 1))


def test_the_file_belongs_to_its_assignment():
    assert "mutants.yaml:1: assignment: is 'boxes' but the assignment is 'box'" in problems("assignment: boxes\n")


def test_a_sentence_stays_a_sentence_and_a_list_names_several():
    mutant, = read("assignment: box\nmutants:\n  - id: m\n    task: t1\n    misconception: [WRONG_BOX, "
                   "'put() returned nothing', 'a sentence of its own']\n"
                   "    function: Box.put\n    body: return\n").named
    assert mutant.misconceptions == ("put() stored the wrong value", "put() returned nothing", "a sentence of its own")
    assert "put() returned nothing" in KNOWN.used and "a sentence of its own" not in KNOWN.used
    assert "nobody names this" not in KNOWN.used   # a constant that no check uses as a misconception


def test_an_exclusion_that_matches_no_automatic_mutant_is_stale():
    parsed = read("assignment: box\nequivalent:\n  - {id: 'Box.put/return_input/abc123', reason: same}\n")
    check_exclusions(parsed, ["Box.put/return_input/abc123"])
    with pytest.raises(SpecError) as caught:
        check_exclusions(parsed, ["Box.put/return_input/def456"])
    assert ("mutants.yaml:3: equivalent[0].id: no automatic mutant 'Box.put/return_input/abc123'; the function's "
            "code changed since it was excluded? its mutants of that kind now: Box.put/return_input/def456"
            in str(caught.value))


def test_the_autodiff_mutants_cover_every_buggy_fixture_with_the_same_code():
    """The 25 slips of tests/fixtures/make_buggy.py are named mutants of the shipped assignment."""
    import ast

    from grader.audit.functions import normal_module
    from grader.audit.run import scenario_texts
    from grader.loading import load_assignment

    spec = importlib.util.spec_from_file_location("make_buggy", ROOT / "tests" / "fixtures" / "make_buggy.py")
    make_buggy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_buggy)
    assignment = load_assignment(ROOT / "exercises" / "autodiff", ROOT / "solutions" / "autodiff")
    reference = (ROOT / "solutions" / "autodiff" / "autodiff.py").read_text()
    named = {m.id: m for m in read_mutants((ROOT / "solutions" / "autodiff" / "mutants.yaml").read_text(),
                                          "mutants.yaml", reference, "autodiff.py", "autodiff",
                                          [t.id for t in assignment.tasks],
                                          misconceptions.collect(scenario_texts(assignment))).named}
    assert len(named) >= 30
    for name in make_buggy.BUGS:
        fixture = make_buggy.buggy_source(name, reference).split("\n", 1)[1]   # without its BUGGY docstring
        for source in (fixture, named[name].source):
            compile(source, name, "exec")   # both are Python
        same_code = normal_module(ast.parse(fixture)) == normal_module(ast.parse(named[name].source))
        # Three mutants say the same slip in fewer lines (no dead code left behind): same behaviour.
        assert same_code or name in {"persistent_ignored_never_released", "released_before_first_call",
                                     "engine_no_unbroadcast"}, name


def test_a_lie_is_declared_as_one():
    lie, plain = read("assignment: box\nmutants:\n  - id: hard_coded\n    task: t1\n    lie: true\n"
                      "    function: Box.put\n    body: |\n      return 0\n"
                      "  - id: m\n    task: t1\n    function: Box.put\n    body: |\n      return None\n").named
    assert lie.lie is True and plain.lie is False
    assert "lie: must be" in problems("assignment: box\nmutants:\n  - id: m\n    task: t1\n    lie: 'yes'\n"
                                      "    function: Box.put\n    body: |\n      return 0\n")
