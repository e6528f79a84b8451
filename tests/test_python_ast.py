"""grader.python_ast.parse: a parse that another parse interrupts is done again, not lost.

The interruption is made deterministic with a finaliser: a reference cycle whose ``__del__`` parses
(from deeper Python frames than ours) is left for the garbage collector, which CPython 3.11 runs in
the middle of building our tree, as soon as that has allocated enough objects. That is the same
interleaving a second thread's parse produces (Dask's traceback formatting in a grading worker did).
"""

from __future__ import annotations

import ast
import gc
import sys

import pytest

from grader import python_ast

SOURCE = "\n".join(f"def f{i}(a):\n    return [a + {i} for a in range(a) if a]" for i in range(200))


def _parse_deeper(frames: int) -> None:
    if frames:
        _parse_deeper(frames - 1)
    else:
        ast.parse("x = 1")


class _Interruption:
    """A cycle that parses when collected, and leaves another one behind while ``again`` holds."""

    again = False

    def __init__(self):
        self.me = self

    def __del__(self):
        _parse_deeper(20)
        if _Interruption.again:
            _Interruption()


def _armed() -> None:
    """Leave an interruption for the next collection: the one in the middle of the next parse."""
    gc.collect()
    gc.disable()
    try:
        _Interruption()
    finally:
        gc.enable()


def test_ast_parse_itself_fails_when_interrupted_on_this_python():
    """The harness reproduces the CPython bug (3.11); 3.12 keeps the counter per call."""
    if sys.version_info >= (3, 12):
        pytest.skip("CPython 3.12 and later keep the AST depth counter per call")
    _armed()
    with pytest.raises(SystemError, match="AST constructor recursion depth mismatch"):
        ast.parse(SOURCE)


def test_an_interrupted_parse_is_done_again_and_gives_the_same_tree():
    expected = ast.dump(ast.parse(SOURCE))
    for _ in range(3):
        _armed()
        assert ast.dump(python_ast.parse(SOURCE)) == expected


def test_interruptions_of_every_attempt_end_in_the_error_not_a_loop():
    if sys.version_info >= (3, 12):
        pytest.skip("CPython 3.12 and later keep the AST depth counter per call")
    _Interruption.again = True
    try:
        _armed()
        with pytest.raises(SystemError, match="recursion depth mismatch"):
            python_ast.parse(SOURCE)
    finally:
        _Interruption.again = False
        gc.collect()
    assert ast.dump(python_ast.parse(SOURCE)) == ast.dump(ast.parse(SOURCE))


def test_syntax_errors_are_raised_as_ast_parse_raises_them():
    with pytest.raises(SyntaxError) as raised:
        python_ast.parse("def f(:\n", filename="student.py")
    assert raised.value.filename == "student.py" and raised.value.lineno == 1
