"""Unit tests of the reference solution, statement by statement of the student API contract (issue 2).

Expected values come from closed forms or from central differences of plain numpy functions, never from the
engine under test.
"""
import importlib.util
import time
from pathlib import Path

import numpy as np
import pytest

SOLUTION = Path(__file__).resolve().parent.parent / "solutions" / "autodiff" / "autodiff.py"
_spec = importlib.util.spec_from_file_location("reference_autodiff", SOLUTION)
ad = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ad)
Tensor, GradientTape, stop_gradient = ad.Tensor, ad.GradientTape, ad.stop_gradient


def central_difference(f, *arrays, eps=1e-6):
    """d f / d arrays[k] for each k, f mapping numpy arrays to a number."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    grads = []
    for k, a in enumerate(arrays):
        grad = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            step = np.zeros_like(a)
            step[index] = eps
            plus = [b + step if j == k else b for j, b in enumerate(arrays)]
            minus = [b - step if j == k else b for j, b in enumerate(arrays)]
            grad[index] = (f(*plus) - f(*minus)) / (2 * eps)
        grads.append(grad)
    return grads


def arange4(requires_grad=False):
    return Tensor(np.arange(4.0), requires_grad=requires_grad)


# ----- Tensor -----

@pytest.mark.parametrize("data, shape", [(3, ()), (2.5, ()), ([1, 2], (2,)), ([[1.0], [2.0]], (2, 1)),
                                         (np.arange(6).reshape(2, 3), (2, 3))])
def test_data_is_a_float64_ndarray(data, shape):
    t = Tensor(data)
    assert type(t.data) is np.ndarray and t.data.dtype == np.float64 and t.shape == shape
    assert t.requires_grad is False and t.is_leaf is True and t.grad is None


def test_results_and_grads_are_ndarrays_never_numpy_scalars():
    x = Tensor(2.0, requires_grad=True)
    y = (x * x).sum() + x.mean() + x.norm()
    assert type(y.data) is np.ndarray and y.shape == ()
    y.backward()
    y2 = x * 3
    y2.backward()
    assert type(x.grad) is np.ndarray and x.grad.shape == ()


OPERATIONS = {   # name: (engine function, numpy function) of two operands
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / b, lambda a, b: a / b),
    "neg": (lambda a, b: -a * b, lambda a, b: -a * b),
    "pow": (lambda a, b: a ** 3 + b ** 0.5, lambda a, b: a ** 3 + b ** 0.5),
    "reflected": (lambda a, b: 2 * a - 1 + 1 / b + (3 - b) / 4,
                  lambda a, b: 2 * a - 1 + 1 / b + (3 - b) / 4),
    "ndarray operand": (lambda a, b: np.array([1.0, 2.0, 3.0]) * a + b * np.array([2.0, 1.0, 0.5]),
                        lambda a, b: np.array([1.0, 2.0, 3.0]) * a + b * np.array([2.0, 1.0, 0.5])),
    "sum": (lambda a, b: a.sum() * b, lambda a, b: a.sum() * b),
    "mean": (lambda a, b: a.mean() * b, lambda a, b: a.mean() * b),
    "exp": (lambda a, b: a.exp() * b, lambda a, b: np.exp(a) * b),
    "log": (lambda a, b: b.log() * a, lambda a, b: np.log(b) * a),
    "norm": (lambda a, b: a.norm() * b, lambda a, b: np.sqrt(np.sum(a ** 2)) * b),
}


@pytest.mark.parametrize("name", OPERATIONS)
@pytest.mark.parametrize("shape_a, shape_b", [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (3,))])
def test_operation_values_and_gradients_with_broadcasting(name, shape_a, shape_b):
    engine_f, numpy_f = OPERATIONS[name]
    if name == "ndarray operand" and (shape_a, shape_b) == ((2, 1), (1, 3)):
        shape_a = (1, 3)
    rng = np.random.default_rng(0)
    a_np, b_np = rng.uniform(0.5, 2.0, shape_a), rng.uniform(0.5, 2.0, shape_b)
    a, b = Tensor(a_np, requires_grad=True), Tensor(b_np, requires_grad=True)
    out = engine_f(a, b)
    np.testing.assert_allclose(out.data, numpy_f(a_np, b_np))
    out.sum().backward()
    expected_a, expected_b = central_difference(lambda p, q: np.sum(numpy_f(p, q)), a_np, b_np)
    assert a.grad.shape == shape_a and b.grad.shape == shape_b
    np.testing.assert_allclose(a.grad, expected_a, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b.grad, expected_b, rtol=1e-5, atol=1e-7)


def test_comparisons_of_0d_tensors_are_plain_bools_and_float_item_give_floats():
    t = Tensor(2.0)
    assert (t < 3) is True and (t <= 2) is True and (t > 3) is False and (t >= 2.5) is False
    assert type(float(t)) is float and float(t) == 2.0
    assert type(Tensor([4.0]).item()) is float and Tensor([4.0]).item() == 4.0


def test_result_requires_grad_exactly_when_an_operand_does():
    x, c = arange4(requires_grad=True), arange4()
    y, k = x * c, c * c
    assert y.requires_grad and not y.is_leaf
    assert not k.requires_grad and k.is_leaf


def test_requires_grad_():
    x = arange4()
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2
    with pytest.raises(RuntimeError):
        y.requires_grad_(False)
    assert x.requires_grad_(False) is x and not x.requires_grad


# ----- backward -----

def test_backward_errors():
    with pytest.raises(RuntimeError, match="does not require grad"):
        arange4().sum().backward()
    x = arange4(requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (x * x).backward()


def test_backward_with_gradient_is_a_vector_jacobian_product():
    x = arange4(requires_grad=True)
    v = np.array([1.0, -1.0, 2.0, 0.5])
    (x * x).backward(gradient=v)
    np.testing.assert_allclose(x.grad, v * 2 * np.arange(4.0))


def test_grad_accumulates_and_non_leaves_get_none():
    x = arange4(requires_grad=True)
    y = x * x
    y.sum().backward()
    (x * 3).sum().backward()                     # a second, separate graph
    np.testing.assert_allclose(x.grad, 2 * np.arange(4.0) + 3)
    assert y.grad is None


def test_backward_twice_raises_unless_retain_graph():
    x = arange4(requires_grad=True)
    y = (3 * x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad, 12 * np.arange(4.0))   # d(3x²)/dx = 6x, twice
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_records_a_pass_did_not_reach_stay_usable():
    x = arange4(requires_grad=True)
    a, b = x * 2, x * 3
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(x.grad, [5.0] * 4)


# ----- detach and stop_gradient -----

def test_d2l_detach_program_pytorch_style():
    x = arange4(requires_grad=True)
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    np.testing.assert_allclose(x.grad, np.arange(4.0) ** 2)    # dz/dx = u = x², not 3x²
    x.grad = None
    y.sum().backward()                                          # y's graph survives the detach
    np.testing.assert_allclose(x.grad, 2 * np.arange(4.0))


def test_detach_result_is_a_new_constant_leaf_and_y_is_untouched():
    x = arange4(requires_grad=True)
    y = x * x
    u = y.detach()
    assert u is not y and not u.requires_grad and u.is_leaf
    np.testing.assert_array_equal(u.data, y.data)
    assert y.requires_grad and not y.is_leaf
    (u * x).sum().backward()
    assert u.grad is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        u.sum().backward()


def test_x_times_detached_x_and_detached_leaf():
    x = arange4(requires_grad=True)
    (x * x.detach()).sum().backward()
    np.testing.assert_allclose(x.grad, np.arange(4.0))
    x.grad = None
    (x * 2).sum().backward()                                     # x itself still works
    np.testing.assert_allclose(x.grad, [2.0] * 4)


def test_detach_then_requires_grad_is_a_new_leaf_with_its_own_grad():
    x = arange4(requires_grad=True)
    y = x * x
    w = y.detach().requires_grad_()
    assert w.is_leaf and w.requires_grad
    (w * 3).sum().backward()
    np.testing.assert_allclose(w.grad, [3.0] * 4)
    assert x.grad is None


def test_stop_gradient_blocks_backward():
    x = arange4(requires_grad=True)
    s = stop_gradient(x * x)
    assert s.is_leaf and not s.requires_grad
    (s * x).sum().backward()
    np.testing.assert_allclose(x.grad, np.arange(4.0) ** 2)


# ----- GradientTape -----

def test_d2l_persistent_tape_program():
    x = arange4()
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        u = stop_gradient(y)
        z = u * x
    for target, expected in [(z, np.arange(4.0) ** 2), (y, 2 * np.arange(4.0)), (z, np.arange(4.0) ** 2)]:
        np.testing.assert_allclose(tape.gradient(target, x).data, expected)


def test_non_persistent_tape_serves_one_call():
    x = arange4()
    with GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = stop_gradient(y) * x
    np.testing.assert_allclose(tape.gradient(z, x).data, np.arange(4.0) ** 2)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        tape.gradient(y, x)


def test_one_call_with_sources_in_a_list_or_tuple():
    x, w = arange4(), Tensor([1.0, 2.0, 3.0, 4.0])
    with GradientTape() as tape:
        tape.watch([x, w])
        y = (x * w).sum()
    gx, gw = grads = tape.gradient(y, (x, w))
    assert type(grads) is tuple
    np.testing.assert_allclose(gx.data, w.data)
    np.testing.assert_allclose(gw.data, x.data)
    with GradientTape() as tape:
        tape.watch(x)
        y = x * 2
    grads = tape.gradient(y, [x])
    assert type(grads) is list and len(grads) == 1


def test_unconnected_sources_give_none_or_zeros():
    x = arange4()
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        s = stop_gradient(x * x)
        t = s + x
    assert tape.gradient(s, x) is None
    np.testing.assert_allclose(tape.gradient(t, x).data, np.ones(4))
    zeros = tape.gradient(s, x, unconnected_gradients="zero")
    assert zeros.shape == (4,) and not zeros.data.any()


def test_watching():
    x, w = arange4(), arange4()
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * w
    assert tape.gradient(y, w) is None
    np.testing.assert_allclose(tape.gradient(y, x).data, w.data)
    np.testing.assert_allclose(tape.gradient(x, x).data, np.ones(4))


def test_auto_watch_of_requires_grad_leaves():
    v = Tensor(3.0, requires_grad=True)
    with GradientTape() as tape:
        y = v * v
    assert float(tape.gradient(y, v)) == 6.0
    with GradientTape(watch_accessed_variables=False) as tape:
        y = v * v
    assert tape.gradient(y, v) is None


def test_operations_after_the_block_are_not_recorded_but_gradient_works_after_it():
    x = Tensor(3.0)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    z = y * y
    assert tape.gradient(z, x) is None
    assert float(tape.gradient(y, x)) == 6.0


def test_tf_docs_example():
    x = Tensor(3.0)
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert [float(tape.gradient(z, x)), float(tape.gradient(y, x)), float(tape.gradient(z, x))] == [108, 6, 108]


def test_non_scalar_target_is_its_sum():
    x = Tensor([[1.0, 2.0], [3.0, 4.0]])
    b = Tensor([10.0, 20.0])
    with GradientTape() as tape:
        tape.watch([x, b])
        y = x * b
    gx, gb = tape.gradient(y, [x, b])
    np.testing.assert_allclose(gx.data, [[10.0, 20.0], [10.0, 20.0]])
    np.testing.assert_allclose(gb.data, [4.0, 6.0])


def test_entering_a_recording_tape_raises():
    tape = GradientTape()
    with tape:
        with pytest.raises(ValueError):
            tape.__enter__()


def test_tape_neither_reads_nor_changes_grad_and_frees_nothing_backward_needs():
    x = arange4(requires_grad=True)
    x.grad = np.full(4, 7.0)
    with GradientTape() as tape:
        y = (x * x).sum()
    np.testing.assert_allclose(tape.gradient(y, x).data, 2 * np.arange(4.0))
    np.testing.assert_allclose(x.grad, np.full(4, 7.0))
    y.backward()
    np.testing.assert_allclose(x.grad, 7.0 + 2 * np.arange(4.0))


def test_tape_works_after_backward_freed_its_records():
    x = arange4(requires_grad=True)
    with GradientTape() as tape:
        y = (x * x).sum()
    y.backward()
    np.testing.assert_allclose(tape.gradient(y, x).data, 2 * np.arange(4.0))


def test_nested_tapes_give_second_derivatives():
    x = Tensor(3.0)
    with GradientTape() as outer:
        outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    d2y_dx2 = outer.gradient(dy_dx, x)
    assert float(dy_dx) == 27.0 and float(d2y_dx2) == 18.0    # 3x², 6x at 3


def test_stop_gradient_stops_both_levels_of_nested_tapes():
    x = Tensor(3.0)
    with GradientTape(persistent=True) as outer:
        outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            y = stop_gradient(x * x) * x                        # d/dx = x² = 9 with x² held constant
        dy_dx = inner.gradient(y, x)
    assert float(dy_dx) == 9.0
    assert outer.gradient(dy_dx, x) is None
    assert float(outer.gradient(y, x)) == 9.0


def test_second_derivative_through_exp_and_division():
    x = Tensor(0.5)
    with GradientTape() as outer:
        outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            y = x.exp() / x
        dy_dx = inner.gradient(y, x)
    second = float(outer.gradient(dy_dx, x))
    # y = e^x/x: y' = e^x (x-1)/x², y'' = e^x (x² - 2x + 2)/x³
    assert np.isclose(float(dy_dx), np.exp(0.5) * (0.5 - 1) / 0.25)
    assert np.isclose(second, np.exp(0.5) * (0.25 - 1 + 2) / 0.125)


# ----- provided-engine sanity -----

@pytest.mark.parametrize("program, expected", [
    (lambda x: x * x * x, lambda x: 3 * x ** 2),
    (lambda x: x + x, lambda x: 2 + 0 * x),
    (lambda x: x - x, lambda x: 0 * x),
])
def test_repeated_operands(program, expected):
    x = arange4(requires_grad=True)
    program(x).sum().backward()
    np.testing.assert_allclose(x.grad, expected(np.arange(4.0)))


def test_diamond_and_double_doubling():
    x = Tensor(2.0, requires_grad=True)
    y = 3 * x
    c = 2 * y + 5 * y
    c.backward()
    assert float(x.grad) == 21.0
    a = Tensor(1.0, requires_grad=True)
    b = a + a
    (b + b).backward()
    assert float(a.grad) == 4.0


def test_24_level_doubling_chain_runs_in_linear_time():
    x = Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(24):
        y = y + y
    start = time.perf_counter()
    y.backward()
    assert time.perf_counter() - start < 1.0        # 2^24 paths: path enumeration would take minutes
    assert float(x.grad) == 2.0 ** 24


def test_long_chain_needs_no_recursion():
    x = Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.backward()
    assert float(x.grad) == 1.0


def d2l_f(a):
    """D2L §2.5.4: works on Tensors and on numpy numbers alike."""
    b = a * 2
    while b.norm() < 1000 if isinstance(b, Tensor) else np.linalg.norm(b) < 1000:
        b = b * 2
    if (b.sum() > 0) if isinstance(b, Tensor) else np.sum(b) > 0:
        c = b
    else:
        c = 100 * b
    return c


@pytest.mark.parametrize("value", [0.37, -1.3, 5.0, -0.002])
def test_d2l_control_flow(value):
    a = Tensor(value, requires_grad=True)
    d = d2l_f(a)
    d.backward()
    expected_d = d2l_f(np.float64(value))
    (expected_grad,) = central_difference(lambda p: d2l_f(p), value, eps=1e-9 * abs(value))
    np.testing.assert_allclose(d.data, expected_d)
    np.testing.assert_allclose(a.grad, expected_d / value)       # f is linear in a on this branch
    np.testing.assert_allclose(a.grad, expected_grad, rtol=1e-5)
