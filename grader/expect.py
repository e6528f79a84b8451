"""Expectations for scenario checks: compare an observation, explain a mismatch.

A check calls these on the decoded observations; the first one that does not hold raises
:class:`Mismatch`, which the grader turns into the scenario's feedback: what was checked,
what was expected, what came back, and, when the value is a known wrong answer, the
misconception it signals. ``wrong`` maps a misconception (a sentence for the student) to the
wrong answer it produces: a value, or a predicate over the observed value.

Observed values are plain data and the records of :mod:`grader.values`: never trust their type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from grader.values import Opaque, Raised

WrongAnswers = Mapping[str, Any]
NONE_KNOWN: WrongAnswers = MappingProxyType({})  # no known wrong answers


class Mismatch(Exception):
    """An expectation that did not hold, with everything the student needs to see."""

    def __init__(self, what: str, expected: str, got: str, misconception: str | None = None, control: bool = False):
        self.what, self.expected, self.got, self.misconception = what, expected, got, misconception
        self.control = control   # a control failed: the provided code, not the task's, got it wrong
        super().__init__(f"{what}: expected {expected}, got {got}")


def expect_close(got, expected, *, what: str, wrong: WrongAnswers = NONE_KNOWN, rtol: float = 1e-6,
                 atol: float = 1e-9) -> None:
    """``got`` is an array (or number) of ``expected``'s shape, equal up to rounding."""
    expected = np.asarray(expected, dtype=float)
    if not _is_numeric(got) or np.shape(got) != expected.shape or not _close(got, expected, rtol, atol):
        _fail(what, describe(expected), got, wrong)


def expect_equal(got, expected, *, what: str, wrong: WrongAnswers = NONE_KNOWN) -> None:
    """``got == expected`` exactly and with the same type (``True`` is not ``1``)."""
    if type(got) is not type(expected) or got != expected:
        _fail(what, describe(expected), got, wrong)


def expect_none(got, *, what: str, wrong: WrongAnswers = NONE_KNOWN) -> None:
    """``got`` is ``None``."""
    if got is not None:
        _fail(what, "None", got, wrong)


def expect_no_error(got, *, what: str, wrong: WrongAnswers = NONE_KNOWN) -> None:
    """``got`` (an ``attempt(...)`` of a call that returns nothing) records no exception: the call
    returned normally. A mismatch reads "expected no error, got raised RuntimeError: ..."."""
    if isinstance(got, Raised) or got is not None:
        _fail(what, "no error", got, wrong)


def expect_raised(got, error_type: str, *, containing: str = "", what: str, wrong: WrongAnswers = NONE_KNOWN) -> None:
    """``got`` records an exception of ``error_type`` (or a subclass) whose message contains ``containing``."""
    if not (isinstance(got, Raised) and got.is_a(error_type) and containing in got.message):
        needle = f" with a message containing {containing!r}" if containing else ""
        _fail(what, f"{error_type} raised{needle}", got, wrong)


def expect(condition: bool, *, what: str, expected: str, got: Any, misconception: str | None = None,
           control: bool = False) -> None:
    """A free-form expectation, for what the helpers above do not cover. ``control``: this is a
    scenario's *control*, the same program run with the provided code alone (the task's code
    replaced by a stand-in); when it fails, the provided code, not the task's, is the cause, and
    the result says so (``Feedback.control_failed``)."""
    if not condition:
        raise Mismatch(what, expected, describe(got), misconception, control)


def expect_control(control, expected, *, what: str, misconception: str | None = None,
                   wrong: WrongAnswers = NONE_KNOWN) -> None:
    """A scenario's *control*: its program run again with the task's code replaced by a stand-in made
    of the provided code alone (a constant made by hand, the provided reader of a record), which
    must observe ``expected``: an array or a number (compared with :func:`same`), None, an error (of
    that class, its message containing the expected one's), or plain data such as a list of flags
    (equal, and of the same type). When it does
    not, the provided code was changed: the task's code cannot be judged here, and the failure says
    so (``Feedback.control_failed``), naming the misconception of ``wrong`` that the control's answer
    matches, else ``misconception``."""
    if _plain_data(expected):
        agrees = type(control) is type(expected) and control == expected
    elif isinstance(expected, Raised) and expected.message:
        agrees = isinstance(control, Raised) and control.is_a(expected.type) and expected.message in control.message
    else:
        expected = expected if expected is None or isinstance(expected, Raised) else np.asarray(expected, dtype=float)
        agrees = same(control, expected)
    if not agrees:
        named = next((hint for hint, answer in wrong.items() if matches(control, answer)), misconception)
        raise Mismatch(f"{what}, with the provided code alone (your code replaced by a stand-in)",
                       describe(expected), describe(control), named, control=True)


def _plain_data(value) -> bool:
    """Flags, text, a dict, or a list of them: compared as data, not as numbers."""
    if isinstance(value, (bool, str, dict)):
        return True
    return isinstance(value, (list, tuple)) and any(isinstance(v, (bool, str, dict, list, tuple)) or v is None
                                                    for v in value)


def expect_ran(control, *, what: str, misconception: str | None = None) -> None:
    """A control run (see :func:`expect_control`) came to its end: it is no record of an exception.
    A program runs its control under ``attempt`` first, and stops there when it raised."""
    if isinstance(control, Raised):
        raise Mismatch(f"{what}, with the provided code alone (your code replaced by a stand-in)",
                       "it to run to its end", describe(control), misconception, control=True)


def describe(value: Any) -> str:
    """How a value is shown to a student: numpy-style arrays, exceptions as 'raised T: msg'."""
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=6, threshold=24, separator=", ")
        return f"{text} (0-d array)" if value.ndim == 0 else f"{text} (shape {value.shape})"
    if isinstance(value, np.generic):
        return f"{value.item()!r} (a numpy {value.dtype.name} scalar, not an ndarray)"
    if isinstance(value, Raised):
        return f"raised {value}"
    if isinstance(value, Opaque):
        return f"an object of type {value.type}" + (f" ({value.repr})" if value.repr else "")
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "..."


def matches(got, wrong_answer) -> bool:
    """Whether ``got`` is this known wrong answer (a value, or a predicate over ``got``)."""
    if callable(wrong_answer):
        try:
            return bool(wrong_answer(got))
        except Exception:  # a predicate that does not apply to this value does not match
            return False
    if isinstance(wrong_answer, Raised):
        return isinstance(got, Raised) and got.is_a(wrong_answer.type)
    if _is_numeric(wrong_answer) and not isinstance(wrong_answer, bool):
        wrong_answer = np.asarray(wrong_answer, dtype=float)
        return _is_numeric(got) and np.shape(got) == wrong_answer.shape and _close(got, wrong_answer, 1e-6, 1e-9)
    return type(got) is type(wrong_answer) and got == wrong_answer


def _fail(what: str, expected: str, got, wrong: WrongAnswers) -> None:
    misconception = next((hint for hint, answer in wrong.items() if matches(got, answer)), None)
    raise Mismatch(what, expected, describe(got), misconception)


def _is_numeric(value) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fiub"
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def _close(got, expected: np.ndarray, rtol: float, atol: float) -> bool:
    """Every value of ``got`` finite and within ``atol + rtol * |expected|`` of ``expected``.

    numpy.allclose's test, written out: it costs a quarter of allclose's time on the small arrays a
    check compares, and a batch compares thousands. As in allclose, a non-finite expected value is
    close only to itself, which a finite ``got`` never is; a difference that overflows (1e308 against
    -1e308) is simply not close, without allclose's RuntimeWarning."""
    got = np.asarray(got, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        within = np.abs(got - expected) <= atol + rtol * np.abs(expected)
    return bool((within & np.isfinite(got) & np.isfinite(expected)).all())


def is_zeros(value) -> bool:
    """Predicate for ``wrong``: an array of zeros (of any shape)."""
    return isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size > 0 and not value.any()


def raised_with(text: str) -> Callable[[Any], bool]:
    """Predicate for ``wrong``: the observation records an exception whose message contains ``text``."""
    return lambda got: isinstance(got, Raised) and text in got.message


def raised_a(type_name: str) -> Callable[[Any], bool]:
    """Predicate for ``wrong``: the observation records an exception of this class (or a subclass)."""
    return lambda got: isinstance(got, Raised) and got.is_a(type_name)


def grew(expected) -> Callable[[Any], bool]:
    """Predicate for ``wrong``: the observation is larger than ``expected`` wherever that is nonzero
    (a gradient that added up across calls)."""
    expected = np.asarray(expected, dtype=float)
    return lambda got: bool(np.all(np.asarray(got, dtype=float)[expected != 0] > expected[expected != 0] + 1e-9))


def same(got, other) -> bool:
    """Whether two observations agree: the same error class, both None, or close values."""
    if isinstance(other, Raised) or isinstance(got, Raised):
        return isinstance(got, Raised) and isinstance(other, Raised) and got.type == other.type
    if other is None or got is None:
        return got is None and other is None
    return isinstance(other, np.ndarray) and matches(got, other)
