"""Public scenarios of the autodiff assignment: what `grader check` runs on your autodiff.py.

Each scenario is a small program run against your module (`ad`) in a sandbox, and a check that compares
what it returned with values worked out by hand (closed forms). Programs use x = [0, 1, 2, 3] unless they
say otherwise. Values next to the D2L programs were verified in PyTorch 2.13 and TensorFlow 2.21.
"""
import numpy as np

from grader.expect import expect, expect_close, expect_equal, expect_none, expect_raised, is_zeros
from grader.scenario import attempt, scenario
from grader.values import Raised

# ----- misconceptions a wrong answer reveals (shown to the student next to the failure) -----
FLOWED_THROUGH_DETACH = ("gradient flowed through the detached value: detach()/stop_gradient returned y itself, "
                         "or a copy that still remembers how y was made, so dz/dx came out as 3x² instead of u")
Y_GRAPH_FREED = ("y's graph was gone after the first backward(): detach() returned y or a copy sharing y's "
                 "history (so that backward went through y and freed it), or backward() freed records it "
                 "never went through")
Y_MUTATED = "detach() changed y itself (its requires_grad or its history); it must leave y untouched"
SECOND_CALL_ZEROS = ("a used-up non-persistent tape returned zeros; it must raise RuntimeError "
                     "(\"A non-persistent GradientTape can only be used to compute one set of gradients\")")
SECOND_CALL_NONE = ("a used-up non-persistent tape returned None; it must raise RuntimeError "
                    "(\"A non-persistent GradientTape can only be used to compute one set of gradients\")")
KEPT_RECORDS = ("the non-persistent tape answered a second time: persistent=False was ignored or inverted, "
                "or the tape only refuses a target it has already seen (one call in all is allowed)")
PERSISTENT_RELEASED = ("the persistent tape refused a second call: persistent=True was ignored or inverted "
                       "(a persistent tape answers any number of calls)")
ACCUMULATED = ("the persistent tape's answers grow from call to call: each gradient() call must start "
               "afresh (no accumulation across calls)")
LIST_IS_MANY_CALLS = ("one gradient() call with a list of sources was counted as several calls; a list of "
                      "sources is one call")
CLEARED_ON_EXIT = ("the tape forgot what it recorded when its with-block ended; leaving the block only "
                   "stops recording, gradient() must still work afterwards")
RELEASED_TOO_EARLY = ("the tape had nothing left at its first gradient() call: it released or cleared its "
                      "records too early (before serving its one call, or when its with-block ended)")
STOP_GRADIENT_LEAKS = "stop_gradient let the gradient through (it returned its input, or something still linked to it)"
STOP_GRADIENT_ZEROS = ("stop_gradient multiplied the gradient by zero instead of cutting the graph: the tape "
                       "must see no path at all (None), as in TensorFlow")
NOT_LEAF = "the detached tensor still has a history (it is not a leaf)"
REQUIRES_GRAD = "the detached tensor has requires_grad=True; detach() gives requires_grad=False"
SAME_OBJECT = "detach() returned y itself; it must return a new tensor"


def _raised_with(text):
    """A `wrong` predicate: the observation records an exception whose message contains `text`."""
    return lambda got: isinstance(got, Raised) and text in got.message


def _grew(expected):
    """A `wrong` predicate: the observation is larger than `expected` wherever that is nonzero (it added up)."""
    expected = np.asarray(expected, dtype=float)
    return lambda got: bool(np.all(np.asarray(got, dtype=float)[expected != 0] > expected[expected != 0] + 1e-9))


# =============================================================== Task 1: detach and stop_gradient

@scenario
def d2l_detach_dz_dx(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    y = x * x
    u = y.detach()        # a constant with y's values: no gradient flows through it
    z = u * x
    z.sum().backward()
    return {"x_grad": x.grad}


@d2l_detach_dz_dx.check
def _(got):
    # D2L §2.5.3 (PyTorch): x.grad == u == [0, 1, 4, 9]; verified in torch 2.13.0 (solutions/autodiff/VERIFIED.md)
    x = np.arange(4.0)
    expect_close(got["x_grad"], x * x, what="x.grad after z.sum().backward()",
                 wrong={FLOWED_THROUGH_DETACH: 3 * x * x})


@scenario
def d2l_detach_keeps_y_graph(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    x.grad = None
    second = attempt(lambda: y.sum().backward())   # y's own graph must still be there
    return {"second_backward": second, "x_grad": x.grad}


@d2l_detach_keeps_y_graph.check
def _(got):
    # D2L §2.5.3: then x.grad == 2x == [0, 2, 4, 6], no error; verified in torch 2.13.0 (VERIFIED.md)
    x = np.arange(4.0)
    expect_none(got["second_backward"], what="y.sum().backward() after detaching y (the error it raised)",
                wrong={Y_GRAPH_FREED: _raised_with("second time"), Y_MUTATED: _raised_with("does not require grad")})
    expect_close(got["x_grad"], 2 * x, what="x.grad after y.sum().backward()",
                 wrong={Y_MUTATED: lambda g: g is None or is_zeros(g)})


@scenario
def detach_properties(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    y = x * x
    u = y.detach()
    return {"u_is_y": u is y, "u_type": type(u).__name__, "u_data": u.data,
            "u_requires_grad": u.requires_grad, "u_is_leaf": u.is_leaf,
            "y_requires_grad": y.requires_grad, "y_is_leaf": y.is_leaf}


@detach_properties.check
def _(got):
    x = np.arange(4.0)
    expect_equal(got["u_is_y"], False, what="u is y", wrong={SAME_OBJECT: True})
    expect_equal(got["u_type"], "Tensor", what="type(u).__name__")
    expect_close(got["u_data"], x * x, what="u.data")
    expect_equal(got["u_requires_grad"], False, what="u.requires_grad", wrong={REQUIRES_GRAD: True})
    expect_equal(got["u_is_leaf"], True, what="u.is_leaf", wrong={NOT_LEAF: False})
    expect_equal(got["y_requires_grad"], True, what="y.requires_grad after y.detach()", wrong={Y_MUTATED: False})
    expect_equal(got["y_is_leaf"], False, what="y.is_leaf after y.detach()", wrong={Y_MUTATED: True})


@scenario
def stop_gradient_on_tape(ad):
    x = ad.Tensor(np.arange(4.0))

    def grad(make_y, unconnected="none"):   # d(make_y(x))/dx from a fresh tape
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = make_y(x)
        g = tape.gradient(y, x, unconnected_gradients=unconnected)
        return None if g is None else g.data

    return {"blocked": grad(lambda x: ad.stop_gradient(x * x)),                  # no path: None
            "plus_x": grad(lambda x: ad.stop_gradient(x * x) + x),               # only through "+ x": ones
            "zero": grad(lambda x: ad.stop_gradient(x * x), unconnected="zero")}  # "zero": zeros


@stop_gradient_on_tape.check
def _(got):
    # TensorFlow 2.21.0 (VERIFIED.md): None, [1, 1, 1, 1], [0, 0, 0, 0]
    x = np.arange(4.0)
    expect_none(got["blocked"], what="tape.gradient(stop_gradient(x*x), x)",
                wrong={STOP_GRADIENT_LEAKS: 2 * x, STOP_GRADIENT_ZEROS: is_zeros})
    expect_close(got["plus_x"], np.ones(4), what="tape.gradient(stop_gradient(x*x) + x, x)",
                 wrong={STOP_GRADIENT_LEAKS: 2 * x + 1})
    expect_close(got["zero"], np.zeros(4), what="tape.gradient(stop_gradient(x*x), x, unconnected_gradients='zero')",
                 wrong={STOP_GRADIENT_LEAKS: 2 * x})


# =============================================================== Task 2: persistent GradientTape

@scenario
def d2l_persistent_tape(ad):
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        u = ad.stop_gradient(y)
        z = u * x

    def value(g):   # a gradient's values, or the error the call raised
        return g.data if isinstance(g, ad.Tensor) else g

    first = tape.gradient(z, x)
    second = attempt(lambda: tape.gradient(y, x))   # a persistent tape answers again...
    third = attempt(lambda: tape.gradient(z, x))    # ...and again, with the same answer
    return {"dz_dx": value(first), "dy_dx": value(second), "dz_dx_again": value(third)}


@d2l_persistent_tape.check
def _(got):
    # D2L §2.5.3 (TensorFlow, persistent tape): u, 2x, u = [0,1,4,9], [0,2,4,6], [0,1,4,9];
    # verified in tensorflow 2.21.0 (VERIFIED.md)
    x = np.arange(4.0)
    u = x * x
    expect_close(got["dz_dx"], u, what="first tape.gradient(z, x)", wrong={STOP_GRADIENT_LEAKS: 3 * x * x})
    expect_close(got["dy_dx"], 2 * x, what="then tape.gradient(y, x)",
                 wrong={PERSISTENT_RELEASED: _raised_with("non-persistent"), ACCUMULATED: _grew(2 * x)})
    expect_close(got["dz_dx_again"], u, what="then tape.gradient(z, x) again",
                 wrong={PERSISTENT_RELEASED: _raised_with("non-persistent"), ACCUMULATED: _grew(u)})


@scenario
def non_persistent_second_call_raises(ad):
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape() as tape:                  # persistent=False: one gradient() call
        tape.watch(x)
        y = x * x
        z = y * x
    dz_dx = tape.gradient(z, x)
    second = attempt(lambda: tape.gradient(y, x))    # another target, same tape: must raise
    if isinstance(second, ad.Tensor):
        second = second.data
    return {"dz_dx": None if dz_dx is None else dz_dx.data, "second": second}


@non_persistent_second_call_raises.check
def _(got):
    # TensorFlow 2.21.0 (VERIFIED.md): RuntimeError "A non-persistent GradientTape can only be used to
    # compute one set of gradients (or jacobians)"
    x = np.arange(4.0)
    expect_close(got["dz_dx"], 3 * x * x, what="first tape.gradient(z, x)", wrong={RELEASED_TOO_EARLY: None})
    expect_raised(got["second"], "RuntimeError", containing="non-persistent GradientTape",
                  what="second call tape.gradient(y, x)",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None, KEPT_RECORDS: 2 * x})


@scenario
def one_call_with_list_of_sources(ad):
    x = ad.Tensor(np.arange(4.0))
    w = ad.Tensor([1.0, -2.0, 0.5, 3.0])
    with ad.GradientTape() as tape:                  # non-persistent
        tape.watch([x, w])
        z = x * w + x
    grads = attempt(lambda: tape.gradient(z, [x, w]))   # one call, two sources: allowed
    if isinstance(grads, NotImplementedError):
        raise grads                                      # the task is not done yet
    if isinstance(grads, Exception):
        return {"raised": grads}
    return {"type": type(grads).__name__, "values": [g.data for g in grads]}


@one_call_with_list_of_sources.check
def _(got):
    x, w = np.arange(4.0), np.array([1.0, -2.0, 0.5, 3.0])
    expect_none(got.get("raised"), what="tape.gradient(z, [x, w]) (the error it raised)",
                wrong={LIST_IS_MANY_CALLS: _raised_with("non-persistent")})
    expect_equal(got["type"], "list", what="type of tape.gradient(z, [x, w])")
    values = got["values"]
    expect(isinstance(values, list) and len(values) == 2, what="number of gradients", expected="2",
           got=values)
    expect_close(values[0], w + 1, what="dz/dx")
    expect_close(values[1], x, what="dz/dw")


@scenario
def gradient_after_with_block(ad):
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x)      # after the block: recording stopped, nothing released
    return {"dy_dx": None if g is None else g.data}


@gradient_after_with_block.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["dy_dx"], 2 * x, what="tape.gradient(y, x) after the with-block",
                 wrong={CLEARED_ON_EXIT: lambda g: g is None or is_zeros(g)})


# =============================================================== provided engine (0 points)

@scenario
def engine_backward_twice_raises(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    s = (x * x).sum()
    s.backward()
    return {"second": attempt(lambda: s.backward())}   # the graph was freed by the first call


@engine_backward_twice_raises.check
def _(got):
    # PyTorch 2.13.0 (VERIFIED.md): "Trying to backward through the graph a second time ..."
    expect_raised(got["second"], "RuntimeError", containing="backward through the graph a second time",
                  what="second s.backward() without retain_graph")


@scenario
def engine_retain_graph_accumulates(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    s = (3 * x * x).sum()
    s.backward(retain_graph=True)
    second = attempt(lambda: s.backward())     # allowed: the first call kept the graph
    return {"second": second, "x_grad": x.grad}


@engine_retain_graph_accumulates.check
def _(got):
    # PyTorch 2.13.0 (VERIFIED.md): 12x = [0, 12, 24, 36]
    expect_none(got["second"], what="second s.backward() after retain_graph=True (the error it raised)")
    expect_close(got["x_grad"], 12 * np.arange(4.0), what="x.grad after two backward() of 3x²")


@scenario
def engine_two_graphs_accumulate(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    a = (x * x).sum()
    b = (2 * x).sum()
    a.backward()
    b.backward()                 # a separate graph: .grad adds up
    return {"x_grad": x.grad}


@engine_two_graphs_accumulate.check
def _(got):
    expect_close(got["x_grad"], 2 * np.arange(4.0) + 2, what="x.grad after backward() of sum(x²), then of sum(2x)")


@scenario
def engine_basic_rules(ad):
    grads = {}
    for name, f in [("x*x*x", lambda x: x * x * x), ("x+x", lambda x: x + x), ("x-x", lambda x: x - x),
                    ("x/(x+1)", lambda x: x / (x + 1)), ("-x**2", lambda x: -x ** 2)]:
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        f(x).sum().backward()
        grads[name] = x.grad
    return grads


@engine_basic_rules.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["x*x*x"], 3 * x * x, what="gradient of x*x*x")
    expect_close(got["x+x"], 2 * np.ones(4), what="gradient of x+x")
    expect_close(got["x-x"], np.zeros(4), what="gradient of x-x")
    expect_close(got["x/(x+1)"], 1 / (x + 1) ** 2, what="gradient of x/(x+1)")
    expect_close(got["-x**2"], -2 * x, what="gradient of -x**2")


@scenario
def engine_numbers_on_either_side(ad):
    grads = {}
    for name, f in [("2+x", lambda x: 2 + x), ("1-x", lambda x: 1 - x), ("3*x", lambda x: 3 * x),
                    ("1/x", lambda x: 1 / x), ("x-1", lambda x: x - 1)]:
        x = ad.Tensor([1.0, 2.0, 4.0], requires_grad=True)
        f(x).sum().backward()
        grads[name] = x.grad
    return grads


@engine_numbers_on_either_side.check
def _(got):
    x = np.array([1.0, 2.0, 4.0])
    expect_close(got["2+x"], np.ones(3), what="gradient of 2+x")
    expect_close(got["1-x"], -np.ones(3), what="gradient of 1-x")
    expect_close(got["3*x"], 3 * np.ones(3), what="gradient of 3*x")
    expect_close(got["1/x"], -1 / x ** 2, what="gradient of 1/x")
    expect_close(got["x-1"], np.ones(3), what="gradient of x-1")


@scenario
def engine_diamond_and_double_add(ad):
    x = ad.Tensor(2.0, requires_grad=True)
    y = 3 * x
    c = 2 * y + 5 * y          # two paths from c to y
    c.backward()
    a = ad.Tensor(1.0, requires_grad=True)
    b = a + a
    (b + b).backward()         # b reached twice
    return {"x_grad": x.grad, "a_grad": a.grad}


@engine_diamond_and_double_add.check
def _(got):
    # PyTorch 2.13.0 (VERIFIED.md): 21 and 4
    expect_close(got["x_grad"], 21.0, what="dc/dx for y = 3x, c = 2y + 5y")
    expect_close(got["a_grad"], 4.0, what="d/da of (a + a) + (a + a)")


@scenario
def engine_long_chain_linear_time(ad):
    x = ad.Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(24):
        y = y + y              # 2^24 paths from y to x: backward must visit each tensor once
    y.backward()
    return {"x_grad": x.grad}


@engine_long_chain_linear_time.check
def _(got):
    expect_close(got["x_grad"], 2.0 ** 24, what="x.grad after 24 doublings y = y + y")


@scenario
def engine_broadcasting(ad):
    x = ad.Tensor([[1.0], [2.0], [3.0]], requires_grad=True)   # shape (3, 1)
    w = ad.Tensor([1.0, -1.0, 2.0, 0.5], requires_grad=True)   # shape (4,)
    (x * w + x).sum().backward()                               # x * w has shape (3, 4)
    return {"x_grad": x.grad, "w_grad": w.grad}


@engine_broadcasting.check
def _(got):
    x, w = np.array([[1.0], [2.0], [3.0]]), np.array([1.0, -1.0, 2.0, 0.5])
    expect_close(got["x_grad"], np.full((3, 1), w.sum() + 4), what="x.grad (summed back to shape (3, 1))")
    expect_close(got["w_grad"], np.full(4, x.sum()), what="w.grad (summed back to shape (4,))")


@scenario
def engine_d2l_control_flow(ad):
    def f(a):                  # D2L §2.5.4
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        if b.sum() > 0:
            c = b
        else:
            c = 100 * b
        return c

    a = ad.Tensor(1.764052, requires_grad=True)
    d = f(a)
    d.backward()
    return {"a_grad": a.grad, "d": d.data}


@engine_d2l_control_flow.check
def _(got):
    # f is linear in a, so a.grad == d / a; PyTorch 2.13.0 (VERIFIED.md): 1024
    a = 1.764052
    expect_close(got["a_grad"], 1024.0, what="a.grad")
    expect_close(got["d"], 1024.0 * a, what="f(a)")
