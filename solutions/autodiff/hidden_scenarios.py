"""Hidden scenarios of the autodiff assignment (instructor grading only; never copied to exercises/).

The rest of the contract, beyond the public scenarios, and randomized variants of the D2L programs whose
inputs the grader draws from the run's seed (`inputs=`), so a submission that hard-codes [0, 1, 4, 9] fails.
Expected values are closed forms computed here from the inputs, never from the submission.
"""
import numpy as np

from grader.expect import expect, expect_close, expect_equal, expect_none, expect_raised, is_zeros
from grader.scenario import attempt, scenario
from grader.values import Raised

# The sentences match the public scenarios' (exercises/autodiff/scenarios.py) where the misconception is the same
# (tests/test_assignment_content.py holds them to it).
FLOWED_THROUGH_DETACH = ("gradient flowed through the detached value: detach()/stop_gradient returned y itself, "
                         "or a copy that still remembers how y was made, so dz/dx came out as 3x² instead of u")
Y_GRAPH_FREED = ("y's graph was gone after the first backward(): detach() returned y or a copy sharing y's "
                 "history (so that backward went through y and freed it), or backward() freed records it "
                 "never went through")
Y_MUTATED = "detach() changed y itself (its requires_grad or its history); it must leave y untouched"
REQUIRES_GRAD = "the detached tensor has requires_grad=True; detach() gives requires_grad=False"
NOT_LEAF_SG = "stop_gradient returned a tensor with a history (not a leaf, or with requires_grad=True)"
STOP_GRADIENT_LEAKS = "stop_gradient let the gradient through (it returned its input, or something still linked to it)"
STOP_GRADIENT_ZEROS = ("stop_gradient multiplied the gradient by zero instead of cutting the graph: the tape "
                       "must see no path at all (None), as in TensorFlow")
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
RELEASED_TOO_EARLY = ("the tape had nothing left at its first gradient() call: it released or cleared its "
                      "records too early (before serving its one call, or when its with-block ended)")
TAPE_FREED_BACKWARD = ("releasing the tape freed the records backward() needs; a tape releases only its own "
                       "list of records")
TAPE_TOUCHED_GRAD = "tape.gradient() wrote into .grad; it must neither read nor change .grad"


def _raised_with(text):
    """A `wrong` predicate: the observation records an exception whose message contains `text`."""
    return lambda got: isinstance(got, Raised) and text in got.message


def _grew(expected):
    """A `wrong` predicate: the observation is larger than `expected` wherever that is nonzero (it added up)."""
    expected = np.asarray(expected, dtype=float)
    return lambda got: bool(np.all(np.asarray(got, dtype=float)[expected != 0] > expected[expected != 0] + 1e-9))


def _random_x(rng):
    """A random shape of 1 or 2 axes (1 to 4 long) and values in [-2, 2]."""
    shape = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(1, 3))))
    return {"x": rng.uniform(-2.0, 2.0, size=shape)}


# =============================================================== Task 1: detach and stop_gradient

@scenario
def detached_gets_no_grad(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    u = (x * x).detach()
    (u * x).sum().backward()
    return {"x_grad": x.grad, "u_grad": u.grad}


@detached_gets_no_grad.check
def _(got):
    x = np.arange(4.0)
    # x.grad first: a detach() that returns y leaves u.grad None too (y is not a leaf), but not x.grad.
    expect_close(got["x_grad"], x * x, what="x.grad after (u * x).sum().backward() (= u)",
                 wrong={FLOWED_THROUGH_DETACH: 3 * x * x})
    expect_none(got["u_grad"], what="u.grad after (u * x).sum().backward()", wrong={REQUIRES_GRAD: x})


@scenario
def backward_of_detached_raises(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    u = (x * x).detach()
    return {"error": attempt(lambda: u.sum().backward())}


@backward_of_detached_raises.check
def _(got):
    expect_raised(got["error"], "RuntimeError", containing="does not require grad",
                  what="u.sum().backward() for u = (x*x).detach()",
                  wrong={REQUIRES_GRAD: None, Y_GRAPH_FREED: _raised_with("second time")})


@scenario
def x_times_detached_x(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    (x * x.detach()).sum().backward()
    return {"x_grad": x.grad}


@x_times_detached_x.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["x_grad"], x, what="x.grad of sum(x * x.detach())", wrong={FLOWED_THROUGH_DETACH: 2 * x})


@scenario
def detach_of_leaf_keeps_leaf(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    c = x.detach()
    error = attempt(lambda: (x * x).sum().backward())
    return {"error": error, "x_grad": x.grad, "x_requires_grad": x.requires_grad, "x_is_leaf": x.is_leaf,
            "c_requires_grad": c.requires_grad}


@detach_of_leaf_keeps_leaf.check
def _(got):
    x = np.arange(4.0)
    expect_equal(got["x_requires_grad"], True, what="x.requires_grad after x.detach()", wrong={Y_MUTATED: False})
    expect_none(got["error"], what="(x*x).sum().backward() after x.detach() (the error it raised)",
                wrong={Y_MUTATED: _raised_with("does not require grad")})
    expect_close(got["x_grad"], 2 * x, what="x.grad")
    expect_equal(got["x_is_leaf"], True, what="x.is_leaf")
    expect_equal(got["c_requires_grad"], False, what="x.detach().requires_grad", wrong={REQUIRES_GRAD: True})


@scenario
def detached_requires_grad_is_new_leaf(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    u = (x * x).detach().requires_grad_()    # a new leaf of its own
    (u * u).sum().backward()
    return {"u_is_leaf": u.is_leaf, "u_grad": u.grad, "x_grad": x.grad}


@detached_requires_grad_is_new_leaf.check
def _(got):
    x = np.arange(4.0)
    expect_equal(got["u_is_leaf"], True, what="u.is_leaf")
    expect_close(got["u_grad"], 2 * x * x, what="u.grad (d/du of sum(u*u) = 2u)")
    expect_none(got["x_grad"], what="x.grad (nothing flows through u to x)",
                wrong={FLOWED_THROUGH_DETACH: lambda g: g is not None})


@scenario
def stop_gradient_in_backward(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    s = ad.stop_gradient(x * x)
    (s * x).sum().backward()
    return {"x_grad": x.grad, "s_data": s.data, "s_requires_grad": s.requires_grad, "s_is_leaf": s.is_leaf}


@stop_gradient_in_backward.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["s_data"], x * x, what="stop_gradient(x*x).data")
    expect_close(got["x_grad"], x * x, what="x.grad of sum(stop_gradient(x*x) * x)",
                 wrong={STOP_GRADIENT_LEAKS: 3 * x * x})
    expect_equal(got["s_requires_grad"], False, what="stop_gradient(x*x).requires_grad", wrong={NOT_LEAF_SG: True})
    expect_equal(got["s_is_leaf"], True, what="stop_gradient(x*x).is_leaf", wrong={NOT_LEAF_SG: False})


@scenario
def stop_gradient_nested_tapes(ad):
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = ad.stop_gradient(x * x) * x
        dy_dx = inner.gradient(y, x)          # = x², a constant for the outer tape too
    d2y = outer.gradient(dy_dx, x)
    return {"dy_dx": dy_dx.data, "d2y": None if d2y is None else d2y.data}


@stop_gradient_nested_tapes.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["dy_dx"], x * x, what="inner.gradient(stop_gradient(x*x) * x, x)",
                 wrong={STOP_GRADIENT_LEAKS: 3 * x * x})
    expect_none(got["d2y"], what="outer.gradient of that", wrong={STOP_GRADIENT_LEAKS: 6 * x,
                                                              STOP_GRADIENT_ZEROS: is_zeros})


@scenario(inputs=_random_x)
def random_d2l_detach(ad, x):
    x = ad.Tensor(x, requires_grad=True)
    y = x * x
    u = y.detach()
    (u * x).sum().backward()
    dz_dx = x.grad
    x.grad = None
    error = attempt(lambda: y.sum().backward())
    return {"dz_dx": dz_dx, "error": error, "dy_dx": x.grad}


@random_d2l_detach.check
def _(got, x):
    expect_close(got["dz_dx"], x * x, what="x.grad after sum(detach(x*x) * x).backward()",
                 wrong={FLOWED_THROUGH_DETACH: 3 * x * x})
    expect_none(got["error"], what="y.sum().backward() after detaching y (the error it raised)",
                wrong={Y_GRAPH_FREED: _raised_with("second time"), Y_MUTATED: _raised_with("does not require grad")})
    expect_close(got["dy_dx"], 2 * x, what="x.grad after y.sum().backward()")


@scenario(inputs=lambda rng: {**_random_x(rng), "c": float(rng.uniform(0.5, 3.0))})
def random_stop_gradient_mix(ad, x, c):
    x = ad.Tensor(x)
    with ad.GradientTape() as tape:
        tape.watch(x)
        z = ad.stop_gradient(x * x) * x + c * x * x    # only the second term carries a gradient via x*x
    return {"dz_dx": tape.gradient(z, x).data}


@random_stop_gradient_mix.check
def _(got, x, c):
    expect_close(got["dz_dx"], x * x + 2 * c * x, what="tape.gradient(stop_gradient(x*x)*x + c*x*x, x)",
                 wrong={STOP_GRADIENT_LEAKS: 3 * x * x + 2 * c * x})


# =============================================================== Task 2: persistent GradientTape

@scenario
def tf_docs_persistent(ad):
    x = ad.Tensor(3.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    dz_dx = tape.gradient(z, x)
    dy_dx = attempt(lambda: tape.gradient(y, x))
    dz_dx_again = attempt(lambda: tape.gradient(z, x))
    return {"calls": [g.data if isinstance(g, ad.Tensor) else g for g in (dz_dx, dy_dx, dz_dx_again)]}


@tf_docs_persistent.check
def _(got):
    # TensorFlow GradientTape guide (persistent example) and tensorflow 2.21.0 (VERIFIED.md): 108, 6, 108
    calls = got["calls"]
    expect(isinstance(calls, list) and len(calls) == 3, what="three gradient() results", expected="3", got=calls)
    expect_close(calls[0], 108.0, what="dz/dx at 3")
    expect_close(calls[1], 6.0, what="then dy/dx", wrong={PERSISTENT_RELEASED: _raised_with("non-persistent"),
                                                          ACCUMULATED: _grew(6.0)})
    expect_close(calls[2], 108.0, what="then dz/dx again", wrong={PERSISTENT_RELEASED: _raised_with("non-persistent"),
                                                                  ACCUMULATED: _grew(108.0)})


@scenario
def nested_tapes_x_cubed(ad):
    x = ad.Tensor(3.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy_dx = inner.gradient(y, x)      # made while outer records: outer sees it
    d2y_dx2 = outer.gradient(dy_dx, x)
    return {"dy_dx": dy_dx.data, "d2y_dx2": None if d2y_dx2 is None else d2y_dx2.data}


@nested_tapes_x_cubed.check
def _(got):
    # tensorflow 2.21.0 (VERIFIED.md): 27 and 18
    expect_close(got["dy_dx"], 27.0, what="inner dy/dx of x³ at 3")
    expect_close(got["d2y_dx2"], 18.0, what="outer d²y/dx² at 3")


@scenario
def watched_and_unwatched(ad):
    x = ad.Tensor(np.arange(4.0))
    w = ad.Tensor([1.0, -2.0, 0.5, 3.0])      # not watched, requires_grad=False
    with ad.GradientTape() as tape:
        tape.watch(x)
        z = x * w
    gx, gw = tape.gradient(z, [x, w])
    return {"dz_dx": None if gx is None else gx.data, "dz_dw": None if gw is None else gw.data}


@watched_and_unwatched.check
def _(got):
    expect_close(got["dz_dx"], [1.0, -2.0, 0.5, 3.0], what="gradient for the watched x")
    expect_none(got["dz_dw"], what="gradient for the unwatched w")


@scenario
def auto_watch_requires_grad(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    with ad.GradientTape() as tape:                                  # watches x on first use
        y = x * x
    with ad.GradientTape(watch_accessed_variables=False) as manual:  # watches only what tape.watch() names
        y2 = x * x
    g, g2 = tape.gradient(y, x), manual.gradient(y2, x)
    return {"auto": None if g is None else g.data, "manual": None if g2 is None else g2.data}


@auto_watch_requires_grad.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["auto"], 2 * x, what="gradient, x auto-watched")
    expect_none(got["manual"], what="gradient with watch_accessed_variables=False and no watch()")


@scenario
def op_after_block_not_recorded(ad):
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    z = y * x                                   # after the block: not recorded
    g = tape.gradient(z, x)
    return {"dz_dx": None if g is None else g.data}


@op_after_block_not_recorded.check
def _(got):
    expect_none(got["dz_dx"], what="tape.gradient(z, x) for z computed after the with-block")


@scenario
def persistent_calls_independent(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    with ad.GradientTape(persistent=True) as tape:
        z = x * x * x
    calls = [attempt(lambda: tape.gradient(z, x)) for _ in range(3)]
    if isinstance(calls[0], NotImplementedError):
        raise calls[0]                          # the task is not done yet
    return {"calls": [g.data if isinstance(g, ad.Tensor) else g for g in calls], "x_grad": x.grad}


@persistent_calls_independent.check
def _(got):
    x = np.arange(4.0)
    calls = got["calls"]
    expect(isinstance(calls, list) and len(calls) == 3, what="three gradient() results", expected="3", got=calls)
    for n, g in enumerate(calls, 1):
        expect_close(g, 3 * x * x, what=f"call {n} of tape.gradient(z, x) on a persistent tape",
                     wrong={PERSISTENT_RELEASED: _raised_with("non-persistent"), ACCUMULATED: _grew(3 * x * x)})
    expect_none(got["x_grad"], what="x.grad after tape.gradient() calls", wrong={TAPE_TOUCHED_GRAD: lambda g: True})


@scenario
def tape_leaves_backward_alone(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    with ad.GradientTape() as tape:
        y = x * x
    g = tape.gradient(y, x)                     # the tape's one call: it releases its records
    grad_before = x.grad
    error = attempt(lambda: y.sum().backward()) # backward() still has y's graph
    return {"tape": None if g is None else g.data, "grad_before": grad_before, "error": error, "x_grad": x.grad}


@tape_leaves_backward_alone.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["tape"], 2 * x, what="tape.gradient(y, x)", wrong={RELEASED_TOO_EARLY: None})
    expect_none(got["grad_before"], what="x.grad after tape.gradient()", wrong={TAPE_TOUCHED_GRAD: lambda g: True})
    expect_none(got["error"], what="y.sum().backward() after the tape's call (the error it raised)",
                wrong={TAPE_FREED_BACKWARD: _raised_with("second time")})
    expect_close(got["x_grad"], 2 * x, what="x.grad after y.sum().backward()")


@scenario
def non_persistent_same_target_raises(ad):
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    first = tape.gradient(y, x)
    second = attempt(lambda: tape.gradient(y, x))   # the very same call again: still only one allowed
    if isinstance(second, ad.Tensor):
        second = second.data
    return {"first": None if first is None else first.data, "second": second}


@non_persistent_same_target_raises.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["first"], 2 * x, what="first tape.gradient(y, x)", wrong={RELEASED_TOO_EARLY: None})
    expect_raised(got["second"], "RuntimeError", containing="non-persistent GradientTape",
                  what="second tape.gradient(y, x)",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None, KEPT_RECORDS: 2 * x})


@scenario
def tuple_call_then_raises(ad):
    x = ad.Tensor(np.arange(4.0))
    w = ad.Tensor([1.0, -2.0, 0.5, 3.0])
    with ad.GradientTape() as tape:
        tape.watch((x, w))
        z = x * w
    grads = attempt(lambda: tape.gradient(z, (x, w)))   # one call with a tuple of sources
    if isinstance(grads, NotImplementedError):
        raise grads                                      # the task is not done yet
    if isinstance(grads, Exception):
        return {"raised": grads}
    second = attempt(lambda: tape.gradient(z, x))        # that was the one call
    if isinstance(second, ad.Tensor):
        second = second.data
    return {"type": type(grads).__name__, "values": [g.data for g in grads], "second": second}


@tuple_call_then_raises.check
def _(got):
    x, w = np.arange(4.0), np.array([1.0, -2.0, 0.5, 3.0])
    expect_none(got.get("raised"), what="tape.gradient(z, (x, w)) (the error it raised)",
                wrong={LIST_IS_MANY_CALLS: _raised_with("non-persistent")})
    expect_equal(got["type"], "tuple", what="type of tape.gradient(z, (x, w))")
    values = got["values"]
    expect(isinstance(values, list) and len(values) == 2, what="number of gradients", expected="2", got=values)
    expect_close(values[0], w, what="dz/dx")
    expect_close(values[1], x, what="dz/dw")
    expect_raised(got["second"], "RuntimeError", containing="non-persistent GradientTape",
                  what="a second call after the tuple call",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None, KEPT_RECORDS: w})


@scenario(inputs=_random_x)
def random_persistent_tape(ad, x):
    x = ad.Tensor(x)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = ad.stop_gradient(y) * x
    calls = [tape.gradient(z, x)] + [attempt(lambda: tape.gradient(t, x)) for t in (y, z)]
    return {"calls": [g.data if isinstance(g, ad.Tensor) else g for g in calls]}


@random_persistent_tape.check
def _(got, x):
    calls = got["calls"]
    expect(isinstance(calls, list) and len(calls) == 3, what="three gradient() results", expected="3", got=calls)
    expect_close(calls[0], x * x, what="dz/dx", wrong={STOP_GRADIENT_LEAKS: 3 * x * x})
    expect_close(calls[1], 2 * x, what="then dy/dx", wrong={PERSISTENT_RELEASED: _raised_with("non-persistent")})
    expect_close(calls[2], x * x, what="then dz/dx again", wrong={PERSISTENT_RELEASED: _raised_with("non-persistent"),
                                                                  ACCUMULATED: 2 * x * x})


@scenario(inputs=_random_x)
def random_non_persistent(ad, x):
    x = ad.Tensor(x)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * x
    dz_dx = tape.gradient(z, x)
    second = attempt(lambda: tape.gradient(y, x))
    if isinstance(second, ad.Tensor):
        second = second.data
    return {"dz_dx": None if dz_dx is None else dz_dx.data, "second": second}


@random_non_persistent.check
def _(got, x):
    expect_close(got["dz_dx"], 3 * x * x, what="first tape.gradient(z, x)", wrong={RELEASED_TOO_EARLY: None})
    expect_raised(got["second"], "RuntimeError", containing="non-persistent GradientTape",
                  what="second call tape.gradient(y, x)",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None, KEPT_RECORDS: 2 * x})


# =============================================================== provided engine (0 points)

@scenario(inputs=lambda rng: {"x": rng.uniform(-2, 2, size=(int(rng.integers(2, 5)), 1)),
                              "w": rng.uniform(-2, 2, size=int(rng.integers(2, 5)))})
def engine_random_broadcasting(ad, x, w):
    x, w = ad.Tensor(x, requires_grad=True), ad.Tensor(w, requires_grad=True)
    (x * w - w).sum().backward()
    return {"x_grad": x.grad, "w_grad": w.grad}


@engine_random_broadcasting.check
def _(got, x, w):
    expect_close(got["x_grad"], np.full(x.shape, w.sum()), what=f"x.grad (shape {x.shape})")
    expect_close(got["w_grad"], np.full(w.shape, x.sum() - x.shape[0]), what=f"w.grad (shape {w.shape})")


@scenario(inputs=lambda rng: {"a": float(rng.normal())})
def engine_random_control_flow(ad, a):
    def f(a):                  # D2L §2.5.4
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        if b.sum() > 0:
            c = b
        else:
            c = 100 * b
        return c

    a = ad.Tensor(a, requires_grad=True)
    d = f(a)
    d.backward()
    return {"a_grad": a.grad, "d": d.data}


@engine_random_control_flow.check
def _(got, a):
    b = 2 * a                  # the same control flow on a float: f(a) = k a, so a.grad = k = f(a) / a
    while abs(b) < 1000:
        b *= 2
    d = b if b > 0 else 100 * b
    expect_close(got["d"], d, what="f(a)")
    expect_close(got["a_grad"], d / a, what="a.grad")
