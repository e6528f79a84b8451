"""The provided-code comparison: what a submission changed of the handout's engine. Pure functions
over source text, so these run in-process; the CLI's tests see the same through real runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import provided

ROOT = Path(__file__).resolve().parent.parent
HANDOUT = (ROOT / "exercises" / "autodiff" / "autodiff.py").read_text()
SOLUTION = (ROOT / "solutions" / "autodiff" / "autodiff.py").read_text()

ENGINE = '''
class Tensor:
    """A value."""
    size = 1

    def scale(self, k):
        """Multiply."""
        return self.value * k  # by k

    @staticmethod
    def make(value):
        return Tensor(value)


def helper(x):
    return x + 1
'''


@pytest.fixture(autouse=True)
def fresh_memo():
    provided._FUNCTION_DIGESTS.clear()
    yield
    provided._FUNCTION_DIGESTS.clear()


def digests(source: str, student: tuple[str, ...] = ()) -> dict[str, str]:
    return {name: part.digest for name, part in provided.parts(source, student).items()}


def test_digests_are_the_same_whether_remembered_or_not():
    for source, student in ((HANDOUT, ()), (SOLUTION, ("Tensor.detach", "stop_gradient"))):
        first = digests(source, student)
        assert provided._FUNCTION_DIGESTS, "the functions' digests were remembered"
        again = digests(source, student)
        provided._FUNCTION_DIGESTS.clear()
        assert first == again == digests(source, student)


def test_a_remembered_function_moved_down_keeps_its_digest_and_gets_its_new_lines():
    before = provided.parts(ENGINE)
    moved = provided.parts("import math\n\n\n" + ENGINE)
    assert moved["helper"].digest == before["helper"].digest
    assert moved["helper"].first_line == before["helper"].first_line + 3


def test_the_same_body_under_another_decorator_is_another_function():
    digests(ENGINE)  # remembered with @staticmethod
    undecorated = ENGINE.replace("    @staticmethod\n", "")
    plain = ENGINE.replace("    @staticmethod\n", "    @classmethod\n")
    assert len({digests(source)["Tensor.make"] for source in (ENGINE, undecorated, plain)}) == 3


def test_comments_docstrings_and_layout_are_not_changes_but_code_is():
    digests(ENGINE)
    reworded = ENGINE.replace('"""Multiply."""', '"""Scale it."""').replace("# by k", "# times k")
    relaid = ENGINE.replace("return self.value * k", "return (self.value\n                * k)")
    changed = ENGINE.replace("self.value * k", "self.value * k * 2")
    assert digests(reworded) == digests(relaid) == digests(ENGINE)
    assert digests(changed)["Tensor.scale"] != digests(ENGINE)["Tensor.scale"]
    assert {n: d for n, d in digests(changed).items() if n != "Tensor.scale"} == \
           {n: d for n, d in digests(ENGINE).items() if n != "Tensor.scale"}


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_other_line_endings_count_lines_as_the_parser_does(newline):
    expected = digests(ENGINE)
    other = ENGINE.replace("\n", newline)
    assert digests(other) == expected
    parts = provided.parts(other)
    assert (parts["helper"].first_line, parts["helper"].last_line) == (15, 16)


def test_a_form_feed_is_no_line_break_so_no_function_takes_its_neighbours_digest():
    # str.splitlines() breaks at a form feed, the parser does not: cut that way, g2's lines would be
    # g1's text, and g2 would get the digest remembered for g1.
    remembered = digests("def g1(): return 1\n")["g1"]
    source = "x = '\x0c'\ndef g1(): return 1\ndef g2(): return 2\n"
    found = digests(source)
    assert found["g1"] == remembered
    assert found["g2"] == digests("def g2(): return 2\n")["g2"] != remembered


def test_changes_name_what_was_changed_or_removed():
    handout = [(name, part.digest, part.text) for name, part in provided.parts(HANDOUT).items()]
    assert provided.changes(HANDOUT, (), handout) == ()
    edited = HANDOUT.replace("def _as_tensor(", "def _as_tensor_renamed(", 1).replace(
        "def _make(data, inputs, vjp):", "def _make(data, inputs, vjp):\n    data = data * 1", 1)
    found = provided.changes(edited, (), handout)
    assert [(c.name, c.kind) for c in found] == [("_as_tensor", "removed"), ("_make", "changed")]
    assert found[1].first_line == edited.splitlines().index("def _make(data, inputs, vjp):") + 1


def test_the_handouts_functions_are_known_by_their_text_and_no_tree_is_dumped(monkeypatch):
    # The fingerprint keeps each provided function's lines' SHA-256: a submission that leaves them as
    # they are needs no dump of their syntax trees, and gets the very digests a dump gives.
    fingerprint = provided.fingerprint(HANDOUT, ())
    student, handout = provided.read_fingerprint(fingerprint)
    assert all(text for name, _, text in handout if name not in ("Tensor", "GradientTape", provided.MODULE_LEVEL))
    dumped = []
    monkeypatch.setattr(provided, "_without_docstring", lambda node: dumped.append(node) or node)
    assert provided.changes(HANDOUT, student, handout) == ()
    assert dumped == [], "a function with the handout's lines was dumped anyway"
    edited = HANDOUT.replace("def _make(data, inputs, vjp):", "def _make(data, inputs, vjp):\n    data = data * 1", 1)
    assert [change.name for change in provided.changes(edited, student, handout)] == ["_make"]
    assert len(dumped) == 1, "only the edited function is dumped"


def test_a_fingerprint_with_a_malformed_text_is_refused():
    document = provided.fingerprint(ENGINE, ()).replace('"text": "', '"text": "not hex ', 1)
    with pytest.raises(ValueError):
        provided.read_fingerprint(document)
