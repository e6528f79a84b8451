"""Hidden scenarios of the autodiff assignment (instructor grading only; never copied to exercises/).

The rest of the contract, beyond the public scenarios, and randomized variants of the D2L programs whose
inputs the grader draws from the run's seed (`inputs=`), so a submission that hard-codes [0, 1, 4, 9] fails.
Expected values are closed forms computed here from the inputs, never from the submission. Each task is
scored on its own code, as the public file's doc says: Task 1 scenarios run a control (the same program with
`ad.Tensor(y.data)`) and give their tapes their own reader of the records; Task 2 scenarios make constants
with `ad.Tensor(y.data)`; engine scenarios use neither task.
"""
import numpy as np

from grader.expect import (
    describe,
    expect,
    expect_close,
    expect_equal,
    expect_none,
    expect_raised,
    grew,
    is_zeros,
    matches,
    raised_a,
    raised_with,
    same,
)
from grader.scenario import attempt, plain, scenario
from grader.values import Raised

# The sentences are the public scenarios' (exercises/autodiff/scenarios.py) where the misconception is the same:
# one text per misconception, which tests/test_assignment_content.py holds to (this file cannot import that one).
DETACH_KEPT_HISTORY = ("y.detach() returned y itself, or a copy that still remembers how y was made, so the "
                       "gradient flowed through it: dz/dx came out as 3x² instead of u = x²")
DETACH_FREED_Y = ("y.detach() returned y or a copy sharing y's history, so z.sum().backward() went through y and "
                  "freed y's graph: y.sum().backward() then failed")
DETACH_CHANGED_FLAG = "t.detach() set requires_grad=False on t itself; detaching must leave t as it was"
DETACH_CHANGED_HISTORY = "t.detach() removed t's own history (t became a leaf); detaching must leave t as it was"
DETACH_NOT_TENSOR = "y.detach() returned something that is not a Tensor (a numpy array?); it must return a new Tensor"
DETACH_REQUIRES_GRAD = "y.detach() returned a tensor with requires_grad=True; a detached tensor has requires_grad=False"
DETACH_NOT_LEAF = "y.detach() returned a tensor that still has a history (is_leaf is False); it must be a new leaf"
SG_LEAKS = "stop_gradient(t) let the gradient through: it returned t itself, or something still linked to t"
SG_ZERO_RULE = ("stop_gradient(t) was recorded as an operation whose gradient is zero; it must cut the graph, so "
                "the tape sees no path at all (None, as in TensorFlow)")
SG_NOT_LEAF = ("stop_gradient(t) returned a tensor with a history or with requires_grad=True; it must return a "
               "leaf with requires_grad=False")
SG_NOT_TENSOR = "stop_gradient(t) returned something that is not a Tensor"
SECOND_CALL_ZEROS = ("a used-up non-persistent tape returned zeros; it must raise RuntimeError "
                     "(\"A non-persistent GradientTape can only be used to compute one set of gradients\")")
SECOND_CALL_NONE = ("a used-up non-persistent tape returned None; it must raise RuntimeError "
                    "(\"A non-persistent GradientTape can only be used to compute one set of gradients\")")
SECOND_CALL_WRONG_ERROR = ("a used-up non-persistent tape raised another kind of error; it must raise RuntimeError "
                           "(\"A non-persistent GradientTape can only be used to compute one set of gradients\")")
KEPT_RECORDS = ("the non-persistent tape answered a second gradient() call: persistent=False was ignored or "
                "inverted; a non-persistent tape releases its records after its one call")
TARGET_SEEN = ("the non-persistent tape refused only a target it had already differentiated; it must refuse "
               "every call after the first one, whatever the target")
PERSISTENT_RELEASED = ("the persistent tape refused a second call: persistent=True was ignored or inverted "
                       "(a persistent tape answers any number of calls)")
ACCUMULATED = ("the persistent tape's answers grow from call to call: each gradient() call must start "
               "afresh (no accumulation across calls)")
LIST_IS_MANY_CALLS = ("one gradient() call with a list of sources was counted as several calls; a list of "
                      "sources is one call")
TAPE_FREED_BACKWARD = ("releasing the tape freed the records backward() needs; a tape releases only its own "
                       "list of records")
TAPE_TOUCHED_GRAD = "tape.gradient() wrote into .grad; it must neither read nor change .grad"
ENGINE_ORDER = ("backward() passed a tensor's gradient on before it was complete: it must walk the topological "
                "order from the output back (reversed)")
ENGINE_NO_UNBROADCAST = ("a broadcast operand's gradient was not summed back to the operand's own shape "
                         "(Tensor._sum_to)")
ENGINE_FREES_UNREACHED = ("backward() freed the records of operations it never went through; a pass frees only "
                          "the records it used")
ENGINE_NO_REQUIRES_GRAD_CHECK = ("backward() of a tensor that does not require grad did nothing; it must raise "
                                 "RuntimeError ('does not require grad')")
ENGINE_NONSCALAR_IMPLICIT = ("backward() without a gradient ran on a tensor of several elements; only a "
                             "one-element tensor has an implicit gradient of 1 (RuntimeError otherwise)")
ENGINE_NONLEAF_GRAD = "backward() gave a non-leaf tensor a .grad; only leaves get one"
ENGINE_REQUIRES_GRAD_NONLEAF = ("requires_grad_(False) on a non-leaf changed its flag; it must raise RuntimeError "
                                "(only leaves' flags can change; use detach())")
ENGINE_RECURSIVE = ("backward() follows every path from the output by recursion instead of one pass in "
                    "topological order: a long chain overflows Python's stack (and shared subgraphs take "
                    "exponential time)")
ENGINE_NO_AUTO_WATCH = ("the tape did not watch a leaf with requires_grad=True on its first use "
                        "(watch_accessed_variables=True watches it, like a trainable tf.Variable)")
ENGINE_BREAKS_CONTROL = ("the provided engine gets this program wrong even with ad.Tensor(y.data) in place of your "
                         "function, so your function cannot be checked here: restore the engine you changed (the "
                         "provided engine's checks say what it gets wrong)")
ENGINE_UNCONNECTED_ZEROS = ("tape.gradient() gave zeros for a source without a recorded path; that is None "
                            "unless unconnected_gradients='zero'")


def expect_as_control(got, control, closed, *, what, wrong=None):
    """`got` (the task's run) is the closed form. The control run (the same program with ad.Tensor(y.data) in place
    of the task's code) must get it first: when it does not, the provided engine was changed, the task's code cannot
    be told right or wrong here, and no points are given (a run that merely agrees with a broken control proves
    nothing: a lying engine would agree with itself)."""
    closed = np.asarray(closed, dtype=float)
    expect(same(control, closed), what=f"{what}, with ad.Tensor(y.data) in place of your function",
           expected=describe(closed), got=control, misconception=ENGINE_BREAKS_CONTROL)
    expect_close(got, closed, what=what, wrong=wrong or {})


def _random_x(rng):
    """A random shape of 1 or 2 axes (1 to 4 long) and values in [-2, 2]."""
    shape = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(1, 3))))
    return {"x": rng.uniform(-2.0, 2.0, size=shape)}


# =============================================================== Task 1: detach and stop_gradient

@scenario
def detached_gets_no_grad(ad):
    def run(detach):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        u = detach(x * x)
        error = attempt(lambda: (u * x).sum().backward())
        return {"u_is_tensor": isinstance(u, ad.Tensor), "error": error, "x_grad": plain(x.grad),
                "u_grad": plain(attempt(lambda: u.grad))}

    control = run(lambda y: ad.Tensor(y.data))
    return {"control": control, "detach": run(lambda y: y.detach())}


@detached_gets_no_grad.check
def _(got):
    x, mine, control = np.arange(4.0), got["detach"], got["control"]
    expect_equal(mine["u_is_tensor"], True, what="isinstance(u, Tensor)", wrong={DETACH_NOT_TENSOR: False})
    expect_as_control(mine["x_grad"], control["x_grad"], x * x, what="x.grad after (u * x).sum().backward() (= u)",
                      wrong={DETACH_KEPT_HISTORY: 3 * x * x})
    expect_none(mine["u_grad"], what="u.grad after (u * x).sum().backward()", wrong={DETACH_REQUIRES_GRAD: x})


@scenario
def backward_of_detached_raises(ad):
    def run(detach):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        u = detach(x * x)
        error = attempt(lambda: u.sum().backward())
        return {"u_is_tensor": isinstance(u, ad.Tensor), "error": error,
                "u_requires_grad": plain(attempt(lambda: u.requires_grad)), "x_grad": plain(x.grad)}

    control = run(lambda y: ad.Tensor(y.data))
    return {"control": control, "detach": run(lambda y: y.detach())}


@backward_of_detached_raises.check
def _(got):
    mine, control = got["detach"], got["control"]
    expect_equal(mine["u_is_tensor"], True, what="isinstance(u, Tensor)", wrong={DETACH_NOT_TENSOR: False})
    expect_equal(mine["u_requires_grad"], False, what="u.requires_grad", wrong={DETACH_REQUIRES_GRAD: True})
    expect_none(mine["x_grad"], what="x.grad after u.sum().backward()", wrong={DETACH_KEPT_HISTORY: lambda g: True})
    if matches(control["error"], raised_with("does not require grad")):   # the engine as shipped
        expect_raised(mine["error"], "RuntimeError", containing="does not require grad",
                      what="u.sum().backward() for u = (x*x).detach()")
    else:
        expect(same(mine["error"], control["error"]), what="u.sum().backward() for u = (x*x).detach()",
               got=mine["error"], expected=f"{describe(control['error'])}, as for ad.Tensor(y.data) (the provided "
                                           "engine was changed: see its own checks)")


@scenario
def x_times_detached_x(ad):
    def run(detach):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        c = detach(x)

        def grad():
            (x * c).sum().backward()
            return x.grad
        return {"c_is_tensor": isinstance(c, ad.Tensor), "x_grad": plain(attempt(grad))}

    control = run(lambda t: ad.Tensor(t.data))
    return {"control": control, "detach": run(lambda t: t.detach())}


@x_times_detached_x.check
def _(got):
    x, mine = np.arange(4.0), got["detach"]
    expect_equal(mine["c_is_tensor"], True, what="isinstance(x.detach(), Tensor)", wrong={DETACH_NOT_TENSOR: False})
    expect_as_control(mine["x_grad"], got["control"]["x_grad"], x, what="x.grad of sum(x * x.detach())",
                      wrong={DETACH_KEPT_HISTORY: 2 * x})


@scenario
def detach_of_leaf_keeps_leaf(ad):
    def run(detach):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        c = detach(x)
        flags = plain(attempt(lambda: [x.requires_grad, x.is_leaf, c.requires_grad]))

        def grad():
            (x * x).sum().backward()
            return x.grad
        return {"c_is_tensor": isinstance(c, ad.Tensor), "flags": flags, "x_grad": plain(attempt(grad))}

    control = run(lambda t: ad.Tensor(t.data))
    return {"control": control, "detach": run(lambda t: t.detach())}


@detach_of_leaf_keeps_leaf.check
def _(got):
    x, mine = np.arange(4.0), got["detach"]
    expect_equal(mine["c_is_tensor"], True, what="isinstance(x.detach(), Tensor)", wrong={DETACH_NOT_TENSOR: False})
    expect_equal(mine["flags"], [True, True, False], what="[x.requires_grad, x.is_leaf, x.detach().requires_grad]",
                 wrong={DETACH_CHANGED_FLAG: lambda g: g[0] is False, DETACH_REQUIRES_GRAD: [True, True, True]})
    expect_as_control(mine["x_grad"], got["control"]["x_grad"], 2 * x, what="x.grad of sum(x*x) after x.detach()")


@scenario
def detached_requires_grad_is_new_leaf(ad):
    def run(detach):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        u = detach(x * x)
        attempt(lambda: u.requires_grad_())   # a new leaf of its own
        error = attempt(lambda: (u * u).sum().backward())
        return {"u_is_tensor": isinstance(u, ad.Tensor), "u_is_leaf": plain(attempt(lambda: u.is_leaf)),
                "error": error, "u_grad": plain(attempt(lambda: u.grad)), "x_grad": plain(x.grad)}

    control = run(lambda y: ad.Tensor(y.data))
    return {"control": control, "detach": run(lambda y: y.detach())}


@detached_requires_grad_is_new_leaf.check
def _(got):
    x, mine, control = np.arange(4.0), got["detach"], got["control"]
    expect_equal(mine["u_is_tensor"], True, what="isinstance(u, Tensor)", wrong={DETACH_NOT_TENSOR: False})
    expect_equal(mine["u_is_leaf"], True, what="u.is_leaf", wrong={DETACH_NOT_LEAF: False})
    expect_none(mine["x_grad"], what="x.grad (nothing flows through u to x)",
                wrong={DETACH_KEPT_HISTORY: lambda g: g is not None})
    expect_as_control(mine["u_grad"], control["u_grad"], 2 * x * x, what="u.grad (d/du of sum(u*u) = 2u)")


@scenario
def stop_gradient_in_backward(ad):
    def run(stop):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        s = stop(x * x)

        def grad():
            (s * x).sum().backward()
            return x.grad
        return {"s_is_tensor": isinstance(s, ad.Tensor), "s_data": plain(s),
                "s_flags": plain(attempt(lambda: [s.requires_grad, s.is_leaf])), "x_grad": plain(attempt(grad))}

    control = run(lambda t: ad.Tensor(t.data))
    return {"control": control, "stop_gradient": run(lambda t: ad.stop_gradient(t))}


@stop_gradient_in_backward.check
def _(got):
    x, mine = np.arange(4.0), got["stop_gradient"]
    expect_equal(mine["s_is_tensor"], True, what="isinstance(stop_gradient(x*x), Tensor)", wrong={SG_NOT_TENSOR: False})
    expect_close(mine["s_data"], x * x, what="stop_gradient(x*x).data")
    expect_as_control(mine["x_grad"], got["control"]["x_grad"], x * x, what="x.grad of sum(stop_gradient(x*x) * x)",
                      wrong={SG_LEAKS: 3 * x * x})
    expect_equal(mine["s_flags"], [False, True], what="[s.requires_grad, s.is_leaf] for s = stop_gradient(x*x)",
                 wrong={SG_NOT_LEAF: lambda g: isinstance(g, list) and len(g) == 2})


@scenario
def stop_gradient_nested_tapes(ad):
    x = ad.Tensor(np.arange(4.0))
    w = ad.Tensor(np.ones(4))    # watched by the outer tape, never used: its answer for "no path" (the control)

    def fresh():                 # a tape with its own reader of the records (Task 2 is not graded here)
        tape = ad.GradientTape()
        tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
        return tape

    with fresh() as outer:
        outer.watch([x, w])
        with fresh() as inner:
            inner.watch(x)
            y = ad.stop_gradient(x * x) * x
            dy_dx = attempt(lambda: inner.gradient(y, x))   # = x², a constant for the outer tape too
        d2y = plain(attempt(lambda: outer.gradient(dy_dx, [x, w])))
    return {"dy_dx": plain(dy_dx), "d2y": d2y}


@stop_gradient_nested_tapes.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["dy_dx"], x * x, what="inner.gradient(stop_gradient(x*x) * x, x)", wrong={SG_LEAKS: 3 * x * x})
    pair = got["d2y"]
    expect(isinstance(pair, list) and len(pair) == 2, what="outer.gradient(that, [x, w])",
           expected="a list of two gradients", got=pair)
    gx, gw = pair
    if gw is None:
        expect_none(gx, what="outer d/dx of inner.gradient(stop_gradient(x*x) * x, x)",
                    wrong={SG_LEAKS: 6 * x, SG_ZERO_RULE: is_zeros})
    else:
        expect(same(gx, gw), what="outer d/dx of inner.gradient(stop_gradient(x*x) * x, x)", got=gx,
               expected=f"{describe(gw)}, what the outer tape gives for a watched source it never used")


@scenario(inputs=_random_x)
def random_d2l_detach(ad, x):
    def run(detach):
        xt = ad.Tensor(x, requires_grad=True)
        y = xt * xt
        u = detach(y)

        def dz_dx():
            (u * xt).sum().backward()
            return xt.grad

        first = plain(attempt(dz_dx))
        xt.grad = None

        def dy_dx():
            y.sum().backward()
            return xt.grad
        return {"u_is_tensor": isinstance(u, ad.Tensor), "dz_dx": first, "dy_dx": plain(attempt(dy_dx))}

    control = run(lambda y: ad.Tensor(y.data))
    return {"control": control, "detach": run(lambda y: y.detach())}


@random_d2l_detach.check
def _(got, x):
    mine, control = got["detach"], got["control"]
    expect_equal(mine["u_is_tensor"], True, what="isinstance(y.detach(), Tensor)", wrong={DETACH_NOT_TENSOR: False})
    expect_as_control(mine["dz_dx"], control["dz_dx"], x * x, what="x.grad after sum(detach(x*x) * x).backward()",
                      wrong={DETACH_KEPT_HISTORY: 3 * x * x})
    expect_as_control(mine["dy_dx"], control["dy_dx"], 2 * x, what="x.grad after y.sum().backward()")


@scenario(inputs=lambda rng: {**_random_x(rng), "c": float(rng.uniform(0.5, 3.0))})
def random_stop_gradient_mix(ad, x, c):
    x = ad.Tensor(x)
    with ad.GradientTape() as tape:
        tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))   # Task 2 is not graded here
        tape.watch(x)
        s = ad.stop_gradient(x * x)
        dz_dx = plain(attempt(lambda: tape.gradient(s * x + c * x * x, x)))   # only c*x*x carries a gradient via x*x
    return {"s_is_tensor": isinstance(s, ad.Tensor), "dz_dx": dz_dx}


@random_stop_gradient_mix.check
def _(got, x, c):
    expect_equal(got["s_is_tensor"], True, what="isinstance(stop_gradient(x*x), Tensor)", wrong={SG_NOT_TENSOR: False})
    expect_close(got["dz_dx"], x * x + 2 * c * x, what="tape.gradient(stop_gradient(x*x)*x + c*x*x, x)",
                 wrong={SG_LEAKS: 3 * x * x + 2 * c * x})


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
    return {"calls": plain([dz_dx, dy_dx, dz_dx_again])}


@tf_docs_persistent.check
def _(got):
    # TensorFlow GradientTape guide (persistent example) and tensorflow 2.21.0 (VERIFIED.md): 108, 6, 108
    first, second, third = got["calls"]
    expect_close(first, 108.0, what="dz/dx at 3")
    expect_close(second, 6.0, what="then dy/dx", wrong={PERSISTENT_RELEASED: raised_with("non-persistent"),
                                                        ACCUMULATED: grew(6.0)})
    expect_close(third, 108.0, what="then dz/dx again", wrong={PERSISTENT_RELEASED: raised_with("non-persistent"),
                                                               ACCUMULATED: grew(108.0)})


@scenario
def nested_tapes_x_cubed(ad):
    x = ad.Tensor(3.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy_dx = inner.gradient(y, x)      # made while outer records: outer sees it
    d2y_dx2 = attempt(lambda: outer.gradient(dy_dx, x))
    return {"dy_dx": plain(dy_dx), "d2y_dx2": plain(d2y_dx2)}


@nested_tapes_x_cubed.check
def _(got):
    # tensorflow 2.21.0 (VERIFIED.md): 27 and 18
    expect_close(got["dy_dx"], 27.0, what="inner dy/dx of x³ at 3")
    expect_close(got["d2y_dx2"], 18.0, what="outer d²y/dx² at 3")


@scenario
def persistent_calls_independent(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        z = x * x * x
    first = tape.gradient(z, x)
    calls = [first] + [attempt(lambda: tape.gradient(z, x)) for _ in range(2)]
    return {"calls": plain(calls), "x_grad": plain(x.grad)}


@persistent_calls_independent.check
def _(got):
    x = np.arange(4.0)
    for n, g in enumerate(got["calls"], 1):
        expect_close(g, 3 * x * x, what=f"call {n} of tape.gradient(z, x) on a persistent tape",
                     wrong={PERSISTENT_RELEASED: raised_with("non-persistent"), ACCUMULATED: grew(3 * x * x)})
    expect_none(got["x_grad"], what="x.grad after tape.gradient() calls", wrong={TAPE_TOUCHED_GRAD: lambda g: True})


@scenario
def tape_leaves_backward_alone(ad):
    c = ad.Tensor([1.0, -2.0, 0.5, 3.0])

    def backward_of(y, x):       # y.sum().backward(), then x.grad (or the error it raised)
        def grad():
            y.sum().backward()
            return x.grad
        return plain(attempt(grad))

    x0 = ad.Tensor(np.arange(4.0), requires_grad=True)
    control = backward_of(x0 * c, x0)           # the same graph, never taped: what backward() gives here
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * c
    g = tape.gradient(y, x)                     # the tape's one call: it releases its records
    grad_before = plain(x.grad)
    return {"tape": plain(g), "grad_before": grad_before, "control": control, "after": backward_of(y, x)}


@tape_leaves_backward_alone.check
def _(got):
    c = np.array([1.0, -2.0, 0.5, 3.0])
    expect_close(got["tape"], c, what="tape.gradient(y, x) for y = x * c")
    expect_none(got["grad_before"], what="x.grad after tape.gradient()", wrong={TAPE_TOUCHED_GRAD: lambda g: True})
    if same(got["control"], c):
        expect_close(got["after"], c, what="y.sum().backward() after the tape's call, then x.grad",
                     wrong={TAPE_FREED_BACKWARD: raised_with("second time")})
    else:
        expect(same(got["after"], got["control"]), what="y.sum().backward() after the tape's call, then x.grad",
               got=got["after"], expected=f"{describe(got['control'])}, as backward() gives for the same graph "
                                          "never taped (the provided engine was changed: see its own checks)")


@scenario
def non_persistent_same_target_raises(ad):
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    first = tape.gradient(y, x)
    second = attempt(lambda: tape.gradient(y, x))   # the very same call again: still only one allowed
    return {"first": plain(first), "second": plain(second)}


@non_persistent_same_target_raises.check
def _(got):
    x = np.arange(4.0)
    expect_close(got["first"], 2 * x, what="first tape.gradient(y, x)")
    expect_raised(got["second"], "RuntimeError", containing="non-persistent GradientTape",
                  what="second tape.gradient(y, x)",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None, KEPT_RECORDS: 2 * x,
                         SECOND_CALL_WRONG_ERROR: lambda g: isinstance(g, Raised) and not g.is_a("RuntimeError")})


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
    second = attempt(lambda: tape.gradient(z, x))        # that was the one call
    return {"type": type(grads).__name__, "grads": plain(grads), "second": plain(second)}


@tuple_call_then_raises.check
def _(got):
    x, w = np.arange(4.0), np.array([1.0, -2.0, 0.5, 3.0])
    grads = got["grads"]
    if isinstance(grads, Raised):
        expect_none(grads, what="tape.gradient(z, (x, w)) (the error it raised)",
                    wrong={LIST_IS_MANY_CALLS: raised_with("non-persistent")})
    expect_equal(got["type"], "tuple", what="type of tape.gradient(z, (x, w))")
    expect(len(grads) == 2, what="number of gradients", expected="2", got=grads)
    expect_close(grads[0], w, what="dz/dx")
    expect_close(grads[1], x, what="dz/dw")
    expect_raised(got["second"], "RuntimeError", containing="non-persistent GradientTape",
                  what="a second call after the tuple call",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None, KEPT_RECORDS: w,
                         SECOND_CALL_WRONG_ERROR: lambda g: isinstance(g, Raised) and not g.is_a("RuntimeError")})


@scenario(inputs=_random_x)
def random_persistent_tape(ad, x):
    x = ad.Tensor(x)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = ad.Tensor(y.data) * x      # a constant made by hand (Task 1 is not graded here)
    calls = [tape.gradient(z, x)] + [attempt(lambda: tape.gradient(t, x)) for t in (y, z)]
    return {"calls": plain(calls)}


@random_persistent_tape.check
def _(got, x):
    first, second, third = got["calls"]
    expect_close(first, x * x, what="dz/dx")
    expect_close(second, 2 * x, what="then dy/dx", wrong={PERSISTENT_RELEASED: raised_with("non-persistent")})
    expect_close(third, x * x, what="then dz/dx again", wrong={PERSISTENT_RELEASED: raised_with("non-persistent"),
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
    third = attempt(lambda: tape.gradient(z, x))     # the first target again
    return {"dz_dx": plain(dz_dx), "second": plain(second), "third": plain(third)}


@random_non_persistent.check
def _(got, x):
    expect_close(got["dz_dx"], 3 * x * x, what="first tape.gradient(z, x)")
    third_raised = matches(got["third"], raised_with("non-persistent"))   # the control: the first target again
    expect_raised(got["second"], "RuntimeError", containing="non-persistent GradientTape",
                  what="second call tape.gradient(y, x)",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None,
                         TARGET_SEEN: lambda g: third_raised and matches(g, 2 * x),
                         KEPT_RECORDS: lambda g: not third_raised and matches(g, 2 * x),
                         SECOND_CALL_WRONG_ERROR: lambda g: isinstance(g, Raised) and not g.is_a("RuntimeError")})


# =============================================================== provided engine (0 points)

@scenario
def engine_tensor_contract(ad):
    def observe(action):
        return plain(attempt(action))

    n = ad.Tensor(3)
    a = ad.Tensor(np.arange(3.0), requires_grad=True)
    b = a * 2                    # a result of an operand with requires_grad: a non-leaf
    k = ad.Tensor([1.0, 2.0]) * 2
    return {"n": observe(lambda: [type(n.data).__name__, n.data.dtype.name, n.data.item(), n.shape,
                                  n.requires_grad, n.is_leaf, n.grad]),
            "m": observe(lambda: [ad.Tensor([[1, 2, 3]]).data.dtype.name, ad.Tensor([[1, 2, 3]]).shape]),
            "compare": observe(lambda: [n < 4, n <= 2, n > 2.5, n >= 3, float(n), n.item()]),
            "b": observe(lambda: [b.requires_grad, b.is_leaf, k.requires_grad, k.is_leaf]),
            "set": observe(lambda: [a.requires_grad_(False) is a, a.requires_grad, a.requires_grad_() is a,
                                    a.requires_grad]),
            "non_leaf": observe(lambda: b.requires_grad_(False)), "b_after": observe(lambda: b.requires_grad)}


@engine_tensor_contract.check
def _(got):
    expect_equal(got["n"], ["ndarray", "float64", 3.0, [], False, True, None],
                 what="[type(t.data), t.data.dtype, t.data.item(), t.shape, t.requires_grad, t.is_leaf, t.grad] "
                      "for t = Tensor(3)")
    expect_equal(got["m"], ["float64", [1, 3]], what="[dtype, shape] of Tensor([[1, 2, 3]])")
    expect_equal(got["compare"], [True, False, True, True, 3.0, 3.0],
                 what="[t < 4, t <= 2, t > 2.5, t >= 3, float(t), t.item()] for t = Tensor(3)")
    expect_equal(got["b"], [True, False, False, True],
                 what="[b.requires_grad, b.is_leaf] for b = a*2 (a requires grad), then for Tensor([1, 2]) * 2")
    expect_equal(got["set"], [True, False, True, True],
                 what="a.requires_grad_(False) is a, a.requires_grad, a.requires_grad_() is a, a.requires_grad")
    expect_raised(got["non_leaf"], "RuntimeError", what="b.requires_grad_(False) on a non-leaf b",
                  wrong={ENGINE_REQUIRES_GRAD_NONLEAF: lambda g: not isinstance(g, Raised)})
    expect_equal(got["b_after"], True, what="b.requires_grad after the refused requires_grad_(False)")


@scenario
def engine_backward_contract(ad):
    def observe(action):
        return plain(attempt(action))

    x = ad.Tensor([1.0, 2.0, 4.0], requires_grad=True)
    constant = observe(lambda: ad.Tensor([1.0, 2.0]).sum().backward())           # requires_grad=False
    vector = observe(lambda: (x * 3).backward())                                  # 3 elements, no gradient
    y = x * ad.Tensor([2.0, 3.0, 5.0])
    vjp = observe(lambda: y.backward(gradient=np.array([1.0, 0.5, -1.0])))        # a vector-Jacobian product

    def grads():
        return [x.grad, y.grad, x.grad.dtype.name]
    after_vjp = observe(grads)
    x.grad = None
    kept = x * 5                          # made before the next pass, which does not go through it
    observe(lambda: (x * 2).sum().backward())
    x.grad = None
    reached = observe(lambda: kept.sum().backward())
    mean = ad.Tensor([1.0, 2.0, 4.0, 5.0], requires_grad=True)
    observe(lambda: mean.mean().backward())
    return {"constant": constant, "vector": vector, "vjp": vjp, "after_vjp": after_vjp, "reached": reached,
            "x_grad": plain(x.grad), "mean_grad": plain(mean.grad)}


@engine_backward_contract.check
def _(got):
    expect_raised(got["constant"], "RuntimeError", containing="does not require grad",
                  what="Tensor([1, 2]).sum().backward()", wrong={ENGINE_NO_REQUIRES_GRAD_CHECK: None})
    expect_raised(got["vector"], "RuntimeError", containing="only for scalar outputs",
                  what="(x * 3).backward() without a gradient (3 elements)", wrong={ENGINE_NONSCALAR_IMPLICIT: None})
    expect_none(got["vjp"], what="y.backward(gradient=[1, 0.5, -1]) for y = x * [2, 3, 5] (the error it raised)",
                wrong={ENGINE_ORDER: raised_a("KeyError")})
    after = got["after_vjp"]
    expect(isinstance(after, list) and len(after) == 3, what="[x.grad, y.grad, x.grad.dtype]",
           expected="three values", got=after)
    expect_close(after[0], np.array([2.0, 1.5, -5.0]), what="x.grad: the vector-Jacobian product [2, 3, 5]·v")
    expect_none(after[1], what="y.grad of the non-leaf y", wrong={ENGINE_NONLEAF_GRAD: lambda g: g is not None})
    expect_equal(after[2], "float64", what="x.grad.dtype")
    expect_none(got["reached"], what="kept.sum().backward() after a pass that did not go through it (the error)",
                wrong={ENGINE_FREES_UNREACHED: raised_with("second time")})
    expect_close(got["x_grad"], np.full(3, 5.0), what="x.grad of sum(5x)")
    expect_close(got["mean_grad"], np.full(4, 0.25), what="gradient of the mean of 4 elements")


@scenario
def engine_deep_chain(ad):
    x = ad.Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(1200):
        y = y + 1.0            # one path, 1200 operations deep
    return {"error": attempt(lambda: y.backward()), "x_grad": plain(x.grad)}


@engine_deep_chain.check
def _(got):
    expect_none(got["error"], what="backward() through a chain of 1200 operations (the error it raised)",
                wrong={ENGINE_RECURSIVE: raised_a("RecursionError"), ENGINE_ORDER: raised_a("KeyError")})
    expect_close(got["x_grad"], 1.0, what="x.grad")


@scenario
def engine_tape_records(ad):
    x = ad.Tensor([1.0, 2.0, 4.0])                      # watched
    w = ad.Tensor([2.0, 3.0, 5.0])                      # not watched, requires_grad=False
    v = ad.Tensor([1.0, -1.0, 2.0], requires_grad=True)  # watched on first use
    q = ad.Tensor(np.ones(3))                           # watched, never used

    def fresh(**options):        # a tape with its own records' reader (see the module doc), asked inside its block
        tape = ad.GradientTape(**options)
        tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
        return tape

    with fresh() as tape:
        tape.watch([x, q])
        y = x * x
        z = y * w + v * 3
        every = plain(attempt(lambda: tape.gradient(z, [x, w, v, q, y])))
    with fresh() as tape:
        tape.watch([x, q])
        z = x * w
        zero = plain(attempt(lambda: tape.gradient(z, (w, q), unconnected_gradients="zero")))
    with fresh() as tape:
        tape.watch(x)
        itself = plain(attempt(lambda: tape.gradient(x, x)))
    with fresh(watch_accessed_variables=False) as tape:
        manual = plain(attempt(lambda: tape.gradient(v * 3, v)))
    return {"every": every, "zero": zero, "itself": itself, "manual": manual}


@engine_tape_records.check
def _(got):
    x, w = np.array([1.0, 2.0, 4.0]), np.array([2.0, 3.0, 5.0])
    every = got["every"]
    expect(isinstance(every, list) and len(every) == 5, what="tape.gradient(z, [x, w, v, q, y])",
           expected="a list of 5 gradients", got=every)
    expect_close(every[0], 2 * x * w, what="dz/dx for y = x*x, z = y*w + v*3 (x watched)")
    expect_close(every[2], np.full(3, 3.0), what="dz/dv (v has requires_grad=True: watched on its first use)",
                 wrong={ENGINE_NO_AUTO_WATCH: None})
    expect_none(every[1], what="dz/dw (w not watched)", wrong={ENGINE_UNCONNECTED_ZEROS: is_zeros})
    expect_none(every[3], what="dz/dq (q watched, never used)", wrong={ENGINE_UNCONNECTED_ZEROS: is_zeros})
    expect_close(every[4], w, what="dz/dy (y made by a recorded operation)")
    zero = got["zero"]
    expect(isinstance(zero, list) and len(zero) == 2, what="tape.gradient(x*w, (w, q), unconnected_gradients='zero')",
           expected="two gradients", got=zero)
    expect_close(zero[0], np.zeros(3), what="d(x*w)/dw, w not watched, unconnected_gradients='zero'")
    expect_close(zero[1], np.zeros(3), what="d(x*w)/dq, q never used, unconnected_gradients='zero'")
    expect_close(got["itself"], np.ones(3), what="tape.gradient(x, x) for a watched x")
    expect_none(got["manual"], what="d(3v)/dv with watch_accessed_variables=False and no watch(v)")


@scenario
def engine_tape_scope(ad):
    x = ad.Tensor(np.arange(4.0))

    def fresh(**options):        # a tape with its own reader of the records (Task 2 is not graded here)
        tape = ad.GradientTape(**options)
        tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
        return tape

    with fresh() as tape:
        tape.watch(x)
        y = x * x
        reenter = attempt(lambda: tape.__enter__())   # entering a recording tape again
    z = y * x                                        # after the block: not recorded
    after = plain(attempt(lambda: tape.gradient(z, x)))
    v = ad.Tensor(np.arange(4.0), requires_grad=True)
    with fresh() as auto:                            # watches v on first use
        u = v * v
        auto_grad = plain(attempt(lambda: auto.gradient(u, v)))
    return {"reenter": reenter, "after": after, "auto": auto_grad}


@engine_tape_scope.check
def _(got):
    x = np.arange(4.0)
    expect_raised(got["reenter"], "ValueError", what="entering a tape that is already recording")
    expect_none(got["after"], what="tape.gradient(z, x) for z computed after the with-block",
                wrong={ENGINE_UNCONNECTED_ZEROS: is_zeros})
    expect_close(got["auto"], 2 * x, what="d(v*v)/dv, v with requires_grad=True (watched on first use)",
                 wrong={ENGINE_NO_AUTO_WATCH: None})


@scenario(inputs=lambda rng: {"x": rng.uniform(-2, 2, size=(int(rng.integers(2, 5)), 1)),
                              "w": rng.uniform(-2, 2, size=int(rng.integers(2, 5)))})
def engine_random_broadcasting(ad, x, w):
    x, w = ad.Tensor(x, requires_grad=True), ad.Tensor(w, requires_grad=True)
    error = attempt(lambda: (x * w - w).sum().backward())
    return {"error": error, "x_grad": plain(x.grad), "w_grad": plain(w.grad)}


@engine_random_broadcasting.check
def _(got, x, w):
    broadcast = (x.shape[0], w.shape[0])
    expect_none(got["error"], what="(x * w - w).sum().backward() (the error it raised)")
    expect_close(got["x_grad"], np.full(x.shape, w.sum()), what=f"x.grad (shape {x.shape})",
                 wrong={ENGINE_NO_UNBROADCAST: lambda g: np.shape(g) == broadcast})
    expect_close(got["w_grad"], np.full(w.shape, x.sum() - x.shape[0]), what=f"w.grad (shape {w.shape})",
                 wrong={ENGINE_NO_UNBROADCAST: lambda g: np.shape(g) == broadcast})


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
    d = attempt(lambda: f(a))
    return {"d": plain(d), "error": attempt(lambda: d.backward()), "a_grad": plain(a.grad)}


@engine_random_control_flow.check
def _(got, a):
    b = 2 * a                  # the same control flow on a float: f(a) = k a, so a.grad = k = f(a) / a
    while abs(b) < 1000:
        b *= 2
    d = b if b > 0 else 100 * b
    expect_close(got["d"], d, what="f(a)")
    expect_none(got["error"], what="f(a).backward() (the error it raised)", wrong={ENGINE_ORDER: raised_a("KeyError")})
    expect_close(got["a_grad"], d / a, what="a.grad")
