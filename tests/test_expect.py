"""The expectations checks use: what counts as close, and what a mismatch tells the student."""

import itertools
import warnings

import numpy as np
import pytest

from grader.expect import Mismatch, expect_close, grew, matches, raised_a, raised_with, same
from grader.values import Raised

SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-10, 1e-9, 2e-9, 1 + 1e-6, 1 + 3e-6, 3.0, 1e308, -1e308, 5e-324,
           np.inf, -np.inf, np.nan]


def _numpy_says_close(got: np.ndarray, expected: np.ndarray) -> bool:
    """The definition: every observed value finite, and numpy.allclose at the checks' tolerances."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # allclose warns when a difference overflows
        return bool(np.isfinite(got).all() and np.allclose(got, expected, rtol=1e-6, atol=1e-9))


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_close_means_what_numpy_allclose_means_for_every_pair_of_special_values(shape):
    for got, expected in itertools.product(SPECIAL, repeat=2):
        observed, wanted = np.full(shape, got), np.full(shape, expected)
        agreed = _numpy_says_close(observed, wanted)
        try:
            expect_close(observed, wanted, what="x")
            passed = True
        except Mismatch:
            passed = False
        assert passed == agreed, (got, expected, shape)


def test_close_agrees_with_numpy_on_random_values_near_the_tolerance():
    rng = np.random.default_rng(4)
    for _ in range(3000):
        wanted = rng.normal(size=4) * 10.0 ** rng.integers(-12, 12)
        observed = wanted * (1 + rng.normal(size=4) * 10.0 ** rng.integers(-9, -3))
        assert matches(observed, wanted) == _numpy_says_close(observed, wanted)


def test_a_difference_that_overflows_is_not_close_and_prints_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(Mismatch):
            expect_close(np.array([1e308]), np.array([-1e308]), what="x")


def test_a_mismatch_names_the_misconception_of_a_known_wrong_answer():
    with pytest.raises(Mismatch) as raised:
        expect_close(np.array([12.0]), [4.0], what="x.grad", wrong={"y was not detached": np.array([12.0])})
    assert raised.value.misconception == "y was not detached"
    assert "12." in raised.value.got and "4." in raised.value.expected
    expect_close(np.array([4.0 + 1e-9]), [4.0], what="x.grad", wrong={"y was not detached": np.array([12.0])})


ERROR = Raised("KeyError", "no record of y", mro=("KeyError", "LookupError", "Exception"))


def test_the_wrong_answer_predicates_match_only_what_they_describe():
    assert raised_with("record")(ERROR) and not raised_with("tape")(ERROR)
    assert raised_a("LookupError")(ERROR) and not raised_a("RuntimeError")(ERROR)
    assert not raised_with("record")("no record of y") and not raised_a("KeyError")(None)
    assert grew([0.0, 2.0])(np.array([0.0, 4.0])) and not grew([0.0, 2.0])(np.array([9.0, 2.0]))
    assert matches(np.array([0.0, 4.0]), grew([0.0, 2.0]))
    assert not matches(ERROR, grew([0.0, 2.0]))  # a predicate that does not apply does not match


@pytest.mark.parametrize("got, other, agree", [
    (np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]), True), (np.array([1.0]), np.array([1.5]), False),
    (None, None, True), (None, np.array([0.0]), False), (np.array([0.0]), None, False),
    (ERROR, Raised("KeyError", "another message"), True), (ERROR, Raised("RuntimeError", "x"), False),
    (ERROR, np.array([1.0]), False), ([1.0], [1.0], False),
])
def test_two_observations_agree_when_same_says_so(got, other, agree):
    assert same(got, other) is agree


def test_a_control_that_fails_says_so_and_names_what_its_answer_matches():
    from grader.expect import expect_control, expect_ran
    expect_control(np.array([1.0, 2.0]), [1.0, 2.0], what="x", misconception="engine")
    expect_control([False, True], [False, True], what="flags")
    expect_control(Raised("RuntimeError", "does not require grad here"), Raised("RuntimeError", "does not require"),
                   what="backward()")
    with pytest.raises(Mismatch) as caught:
        expect_control(np.array([2.0, 4.0]), [1.0, 2.0], what="x.grad", misconception="engine",
                       wrong={"twice": lambda g: matches(g, np.array([2.0, 4.0]))})
    assert caught.value.control and caught.value.misconception == "twice"
    assert caught.value.what == "x.grad, with the provided code alone (your code replaced by a stand-in)"
    for control, expected in (([True, True], [False, True]), (Raised("RuntimeError", "other"),
                                                               Raised("RuntimeError", "does not require"))):
        with pytest.raises(Mismatch) as caught:
            expect_control(control, expected, what="it", misconception="engine")
        assert caught.value.control and caught.value.misconception == "engine"
    with pytest.raises(Mismatch) as caught:
        expect_ran(Raised("ValueError", "boom"), what="the program", misconception="engine")
    assert caught.value.control and "raised ValueError: boom" in caught.value.got
    expect_ran({"fine": 1}, what="the program")
