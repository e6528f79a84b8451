"""Public scenarios of the autodiff assignment: what `grader check` runs on your autodiff.py.

Each scenario is a small program run against your module (`ad`) in a sandbox, and a check that compares
what it returned with values worked out by hand (closed forms). Values next to the D2L programs were
verified in PyTorch 2.13 and TensorFlow 2.21 (solutions/autodiff/VERIFIED.md).

Each task is scored on its own code:
- A scenario of Task 1 that uses a tape gives the tape its own `_take_records_for_call` (a persistent
  tape's answer, Task 2's easy half) and asks it inside its `with` block, so a slip in Task 2 costs
  nothing here. A scenario of Task 2 that needs a constant makes it with `ad.Tensor(y.data)` instead of
  calling `stop_gradient`. Scenarios of the provided engine use neither task.
- A Task 1 scenario that calls backward() first runs the same program with a constant made by hand
  (`ad.Tensor(y.data)`) in place of your detach: the *control*. When the control gets the closed form,
  yours must too; when it does not, the provided engine was changed, and your detach must behave as
  the control does (the engine's own checks say what changed).
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

# ----- misconceptions a wrong answer reveals (shown to the student next to the failure) -----
# Task 1
DETACH_KEPT_HISTORY = ("y.detach() returned y itself, or a copy that still remembers how y was made, so the "
                       "gradient flowed through it: dz/dx came out as 3x² instead of u = x²")
DETACH_FREED_Y = ("y.detach() returned y or a copy sharing y's history, so z.sum().backward() went through y and "
                  "freed y's graph: y.sum().backward() then failed")
DETACH_CHANGED_FLAG = "t.detach() set requires_grad=False on t itself; detaching must leave t as it was"
DETACH_CHANGED_HISTORY = "t.detach() removed t's own history (t became a leaf); detaching must leave t as it was"
DETACH_SAME_OBJECT = "y.detach() returned y itself; it must return a new tensor"
DETACH_NOT_TENSOR = "y.detach() returned something that is not a Tensor (a numpy array?); it must return a new Tensor"
DETACH_REQUIRES_GRAD = "y.detach() returned a tensor with requires_grad=True; a detached tensor has requires_grad=False"
DETACH_NOT_LEAF = "y.detach() returned a tensor that still has a history (is_leaf is False); it must be a new leaf"
SG_LEAKS = "stop_gradient(t) let the gradient through: it returned t itself, or something still linked to t"
SG_ZERO_RULE = ("stop_gradient(t) was recorded as an operation whose gradient is zero; it must cut the graph, so "
                "the tape sees no path at all (None, as in TensorFlow)")
SG_NOT_LEAF = ("stop_gradient(t) returned a tensor with a history or with requires_grad=True; it must return a "
               "leaf with requires_grad=False")
SG_NOT_TENSOR = "stop_gradient(t) returned something that is not a Tensor"
# Task 2
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
CLEARED_ON_EXIT = ("the tape forgot what it recorded when its with-block ended; leaving the block only "
                   "stops recording, gradient() must still work afterwards")
RELEASED_TOO_EARLY = ("the non-persistent tape had nothing left at its first gradient() call: it released its "
                      "records before handing them out")
# The provided engine (you changed it: restore it from the handout)
ENGINE_MUL_RULE = "the engine's multiplication rule is wrong: d(ab)/da = b and d(ab)/db = a (each operand gets the other)"
ENGINE_SUB_RULE = "the engine's subtraction rule is wrong: d(a-b)/db = -1 (the second operand gets -g)"
ENGINE_RSUB = "1 - x computed x - 1: Tensor.__rsub__ must compute other - self"
ENGINE_RADD = "2 + x failed: Tensor.__radd__ (a number on the left of +) is missing or broken"
ENGINE_POW_RULE = "the engine's power rule lost its factor k: d(a^k)/da = k·a^(k-1)"
ENGINE_MEAN_RULE = "the engine's mean rule lost its 1/n: each of the n elements gets 1/n of the gradient"
ENGINE_LOG_RULE = "the engine's log rule is wrong: d(ln a)/da = 1/a"
ENGINE_NO_UNBROADCAST = ("a broadcast operand's gradient was not summed back to the operand's own shape "
                         "(Tensor._sum_to)")
ENGINE_PATHS_ASSIGNED = ("backward() kept only one path's gradient for a tensor reached by several paths: the "
                         "gradients of all paths must be added up (+), not assigned (=)")
ENGINE_INPUTS_DEDUPLICATED = ("an operation that uses one tensor twice (a + a, x * x) passed a gradient along one "
                              "use only: its inputs were deduplicated")
ENGINE_NO_VISITED = ("backward()'s topological sort put a tensor in the order once per path instead of once "
                     "(its visited set is missing)")
ENGINE_ORDER = ("backward() passed a tensor's gradient on before it was complete: it must walk the topological "
                "order from the output back (reversed)")
ENGINE_FREES_UNREACHED = ("backward() freed the records of operations it never went through; a pass frees only "
                          "the records it used")
ENGINE_RETAIN_IGNORED = "backward(retain_graph=True) freed its records anyway; with retain_graph=True it keeps them"
ENGINE_GRAD_OVERWRITTEN = "backward() overwrote .grad instead of adding into it (.grad accumulates across calls)"
ENGINE_NO_AUTO_WATCH = ("the tape did not watch a leaf with requires_grad=True on its first use "
                        "(watch_accessed_variables=True watches it, like a trainable tf.Variable)")
ENGINE_BREAKS_CONTROL = ("the provided engine gets this program wrong even with ad.Tensor(y.data) in place of your "
                         "function, so your function cannot be checked here: restore the engine you changed (the "
                         "provided engine's checks say what it gets wrong)")
ENGINE_UNCONNECTED_ZEROS = ("tape.gradient() gave zeros for a source without a recorded path; that is None "
                            "unless unconnected_gradients='zero'")


def expect_no_error(got, *, what, wrong):
    """`got` is not a record of an exception; `wrong` names the misconception of a known error."""
    if isinstance(got, Raised):
        expect_none(got, what=f"{what} (the error it raised)", wrong=wrong)


def expect_as_control(got, control, closed, *, what, wrong=None):
    """`got` (the task's run) is the closed form. The control run (the same program with ad.Tensor(y.data) in place
    of the task's code) must get it first: when it does not, the provided engine was changed, the task's code cannot
    be told right or wrong here, and no points are given (a run that merely agrees with a broken control proves
    nothing: a lying engine would agree with itself)."""
    closed = np.asarray(closed, dtype=float)
    expect(same(control, closed), what=f"{what}, with ad.Tensor(y.data) in place of your function",
           expected=describe(closed), got=control, misconception=ENGINE_BREAKS_CONTROL)
    expect_close(got, closed, what=what, wrong=wrong or {})


# =============================================================== Task 1: detach and stop_gradient

@scenario
def d2l_detach_dz_dx(ad):
    def run(detach):              # D2L §2.5.3, with `detach` for y.detach()
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        y = x * x
        u = detach(y)             # a constant with y's values: no gradient flows through it

        def dz_dx():
            (u * x).sum().backward()
            return x.grad
        return {"u_is_tensor": isinstance(u, ad.Tensor), "dz_dx": plain(attempt(dz_dx))}

    control = run(lambda y: ad.Tensor(y.data))   # the control (see the module doc)
    return {"control": control, "detach": run(lambda y: y.detach())}


@d2l_detach_dz_dx.check
def _(got):
    # D2L §2.5.3 (PyTorch): x.grad == u == [0, 1, 4, 9]; verified in torch 2.13.0 (solutions/autodiff/VERIFIED.md)
    x, mine = np.arange(4.0), got["detach"]
    expect_equal(mine["u_is_tensor"], True, what="isinstance(y.detach(), Tensor)", wrong={DETACH_NOT_TENSOR: False})
    expect_as_control(mine["dz_dx"], got["control"]["dz_dx"], x * x, what="x.grad after z.sum().backward()",
                      wrong={DETACH_KEPT_HISTORY: 3 * x * x})


@scenario
def d2l_detach_keeps_y_graph(ad):
    def run(detach):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        y = x * x
        u = detach(y)
        flags = plain(attempt(lambda: [y.requires_grad, y.is_leaf]))   # y as detaching left it
        attempt(lambda: (u * x).sum().backward())
        x.grad = None

        def dy_dx():              # y's own graph must still be there
            y.sum().backward()
            return x.grad
        return {"u_is_tensor": isinstance(u, ad.Tensor), "y_flags": flags, "dy_dx": plain(attempt(dy_dx))}

    control = run(lambda y: ad.Tensor(y.data))
    return {"control": control, "detach": run(lambda y: y.detach())}


@d2l_detach_keeps_y_graph.check
def _(got):
    # D2L §2.5.3: then x.grad == 2x == [0, 2, 4, 6], no error; verified in torch 2.13.0 (VERIFIED.md)
    x, mine = np.arange(4.0), got["detach"]
    expect_equal(mine["u_is_tensor"], True, what="isinstance(y.detach(), Tensor)", wrong={DETACH_NOT_TENSOR: False})
    flags = mine["y_flags"]   # what the run itself saw of y decides which cause to name
    expect_as_control(mine["dy_dx"], got["control"]["dy_dx"], 2 * x, what="x.grad after y.sum().backward()",
                      wrong={DETACH_CHANGED_FLAG: lambda g: flags == [False, False],
                             DETACH_CHANGED_HISTORY: lambda g: flags == [True, True],
                             DETACH_FREED_Y: lambda g: flags == [True, False] and matches(g, raised_with("second time"))})


@scenario
def detach_properties(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    y = x * x
    u = y.detach()
    return {"u_is_y": u is y, "u_is_tensor": isinstance(u, ad.Tensor), "u_data": plain(u),
            "u_flags": plain(attempt(lambda: [u.requires_grad, u.is_leaf])),
            "y_flags": plain(attempt(lambda: [y.requires_grad, y.is_leaf]))}


@detach_properties.check
def _(got):
    x = np.arange(4.0)
    expect_equal(got["u_is_y"], False, what="u is y", wrong={DETACH_SAME_OBJECT: True})
    expect_equal(got["u_is_tensor"], True, what="isinstance(u, Tensor)", wrong={DETACH_NOT_TENSOR: False})
    expect_close(got["u_data"], x * x, what="u.data")
    expect_equal(got["u_flags"], [False, True], what="[u.requires_grad, u.is_leaf]",
                 wrong={DETACH_REQUIRES_GRAD: lambda g: g[0] is True and g[1] in (True, False),
                        DETACH_NOT_LEAF: [False, False]})
    expect_equal(got["y_flags"], [True, False], what="[y.requires_grad, y.is_leaf] after y.detach()",
                 wrong={DETACH_CHANGED_FLAG: [False, False], DETACH_CHANGED_HISTORY: [True, True]})


@scenario
def stop_gradient_on_tape(ad):
    x = ad.Tensor(np.arange(4.0))
    w = ad.Tensor(np.ones(4))     # watched and never used: the tape's answer for "no path" (the control)

    def grads(make_target, unconnected="none"):   # [d/dx, d/dw] from a fresh tape, asked inside its block
        with ad.GradientTape() as tape:
            tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))   # see the module doc
            tape.watch([x, w])
            s = ad.stop_gradient(x * x)
            return s, plain(attempt(lambda: tape.gradient(make_target(s), [x, w],
                                                          unconnected_gradients=unconnected)))

    s, blocked = grads(lambda s: s)                  # no path: None
    _, plus_x = grads(lambda s: s + x)               # only through "+ x": ones
    _, zero = grads(lambda s: s, unconnected="zero")  # "zero": zeros
    r = ad.Tensor(np.arange(4.0), requires_grad=True)
    s2 = ad.stop_gradient(r * r)
    return {"s_is_tensor": isinstance(s, ad.Tensor), "s_data": plain(s),
            "s_flags": plain(attempt(lambda: [s2.requires_grad, s2.is_leaf])),
            "blocked": blocked, "plus_x": plus_x, "zero": zero}


@stop_gradient_on_tape.check
def _(got):
    # TensorFlow 2.21.0 (VERIFIED.md): None, [1, 1, 1, 1], [0, 0, 0, 0]
    x = np.arange(4.0)
    expect_equal(got["s_is_tensor"], True, what="isinstance(stop_gradient(x*x), Tensor)",
                 wrong={SG_NOT_TENSOR: False})
    expect_close(got["s_data"], x * x, what="stop_gradient(x*x).data")
    expect_equal(got["s_flags"], [False, True], what="[s.requires_grad, s.is_leaf] for s = stop_gradient(r*r), "
                 "r with requires_grad=True", wrong={SG_NOT_LEAF: lambda g: isinstance(g, list) and len(g) == 2})
    for key, target, closed, leaked in (("blocked", "stop_gradient(x*x)", None, 2 * x),
                                        ("plus_x", "stop_gradient(x*x) + x", np.ones(4), 2 * x + 1),
                                        ("zero", "stop_gradient(x*x), unconnected_gradients='zero'", np.zeros(4),
                                         2 * x)):
        pair = got[key]
        expect(isinstance(pair, list) and len(pair) == 2, what=f"tape.gradient({target}, [x, w])",
               expected="a list of two gradients", got=pair)
        gx, gw = pair
        if closed is None:
            # A watched source that was never used (w) shows what "no path" gives on this tape: None, as
            # shipped. Zeros for x beside None for w, and only then, is a stop_gradient recorded as an operation.
            if gw is None:
                expect_none(gx, what=f"d/dx of {target}", wrong={SG_LEAKS: leaked, SG_ZERO_RULE: is_zeros})
            else:
                expect(same(gx, gw), what=f"d/dx of {target}", got=gx,
                       expected=f"{describe(gw)}, what this tape gives for a watched source it never used")
        else:
            expect_close(gx, closed, what=f"d/dx of {target}", wrong={SG_LEAKS: leaked})


# =============================================================== Task 2: persistent GradientTape

@scenario
def d2l_persistent_tape(ad):
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        u = ad.Tensor(y.data)     # a constant with y's values, made by hand (Task 1 is not graded here)
        z = u * x
    first = tape.gradient(z, x)
    second = attempt(lambda: tape.gradient(y, x))   # a persistent tape answers again...
    third = attempt(lambda: tape.gradient(z, x))    # ...and again, with the same answer
    return {"calls": plain([first, second, third])}


@d2l_persistent_tape.check
def _(got):
    # D2L §2.5.3 (TensorFlow, persistent tape): u, 2x, u = [0,1,4,9], [0,2,4,6], [0,1,4,9];
    # verified in tensorflow 2.21.0 (VERIFIED.md)
    x = np.arange(4.0)
    u = x * x
    first, second, third = got["calls"]
    expect_close(first, u, what="first tape.gradient(z, x)")
    expect_close(second, 2 * x, what="then tape.gradient(y, x)",
                 wrong={PERSISTENT_RELEASED: raised_with("non-persistent"), ACCUMULATED: grew(2 * x)})
    expect_close(third, u, what="then tape.gradient(z, x) again",
                 wrong={PERSISTENT_RELEASED: raised_with("non-persistent"), ACCUMULATED: grew(u)})


@scenario
def non_persistent_second_call_raises(ad):
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape() as tape:                  # persistent=False: one gradient() call
        tape.watch(x)
        y = x * x
        z = y * x
    first = tape.gradient(z, x)
    second = attempt(lambda: tape.gradient(y, x))    # another target, same tape: must raise
    third = attempt(lambda: tape.gradient(z, x))     # the first target again: must raise too
    return {"first": plain(first), "second": plain(second), "third": plain(third)}


@non_persistent_second_call_raises.check
def _(got):
    # TensorFlow 2.21.0 (VERIFIED.md): RuntimeError "A non-persistent GradientTape can only be used to
    # compute one set of gradients (or jacobians)"
    x = np.arange(4.0)
    expect_close(got["first"], 3 * x * x, what="first tape.gradient(z, x)")
    third_raised = matches(got["third"], raised_with("non-persistent"))   # the control: the first target again
    expect_raised(got["second"], "RuntimeError", containing="non-persistent GradientTape",
                  what="second call tape.gradient(y, x)",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None,
                         TARGET_SEEN: lambda g: third_raised and matches(g, 2 * x),
                         KEPT_RECORDS: lambda g: not third_raised and matches(g, 2 * x),
                         SECOND_CALL_WRONG_ERROR: lambda g: isinstance(g, Raised) and not g.is_a("RuntimeError")})


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
    return {"type": type(grads).__name__, "grads": plain(grads)}


@one_call_with_list_of_sources.check
def _(got):
    x, w = np.arange(4.0), np.array([1.0, -2.0, 0.5, 3.0])
    grads = got["grads"]
    expect_no_error(grads, what="tape.gradient(z, [x, w])", wrong={LIST_IS_MANY_CALLS: raised_with("non-persistent")})
    expect_equal(got["type"], "list", what="type of tape.gradient(z, [x, w])")
    expect(len(grads) == 2, what="number of gradients", expected="2", got=grads)
    expect_close(grads[0], w + 1, what="dz/dx")
    expect_close(grads[1], x, what="dz/dw")


@scenario
def gradient_after_with_block(ad):
    x = ad.Tensor(np.arange(4.0))

    def after_block(tape, own_records=False):   # d(x*x)/dx, asked after the with-block has ended
        with tape:
            if own_records:   # the control: the engine's own records, without your Task 2 code
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch(x)
            y = x * x
        return plain(attempt(lambda: tape.gradient(y, x)))

    control = after_block(ad.GradientTape(), own_records=True)
    persistent, non_persistent = after_block(ad.GradientTape(persistent=True)), after_block(ad.GradientTape())
    for answer in (persistent, non_persistent):
        if isinstance(answer, NotImplementedError):
            raise answer                             # the task is not done yet
    return {"control": control, "persistent": persistent, "non_persistent": non_persistent}


@gradient_after_with_block.check
def _(got):
    x = np.arange(4.0)
    # Which cause to name follows from the run's own controls: records gone for the engine's own reading
    # too (cleared when the block ended), or only for a non-persistent tape (released before its first call).
    control_ok = matches(got["control"], 2 * x)
    expect_close(got["persistent"], 2 * x, what="a persistent tape's gradient(y, x) after the with-block",
                 wrong={CLEARED_ON_EXIT: lambda g: not control_ok and (g is None or is_zeros(g))})
    expect_close(got["non_persistent"], 2 * x, what="a non-persistent tape's gradient(y, x) after the with-block",
                 wrong={RELEASED_TOO_EARLY: lambda g: control_ok and (g is None or is_zeros(g)),
                        CLEARED_ON_EXIT: lambda g: not control_ok and (g is None or is_zeros(g))})


# =============================================================== provided engine (0 points)
# These use neither task: they tell you whether the code you were given still works as shipped.

@scenario
def engine_basic_rules(ad):
    c = ad.Tensor([2.0, 3.0, 5.0])
    grads = {}
    for name, f in [("3*x", lambda x: 3 * x), ("x*c", lambda x: x * c), ("x+c", lambda x: x + c),
                    ("x-c", lambda x: x - c), ("c-x", lambda x: c - x), ("x/c", lambda x: x / c),
                    ("c/x", lambda x: c / x), ("-x", lambda x: -x), ("x**3", lambda x: x ** 3),
                    ("exp", lambda x: x.exp()), ("log", lambda x: x.log()), ("mean", lambda x: x.mean()),
                    ("norm", lambda x: x.norm())]:
        x = ad.Tensor([1.0, 2.0, 4.0], requires_grad=True)

        def grad():               # each is one path from the output to x
            f(x).sum().backward()
            return x.grad
        grads[name] = plain(attempt(grad))
    return grads


@engine_basic_rules.check
def _(got):
    x, c = np.array([1.0, 2.0, 4.0]), np.array([2.0, 3.0, 5.0])
    order = raised_a("KeyError")   # one path each: only a wrong walk order fails to find a gradient

    def rule(name, closed):
        expect_close(got[name], closed, what=f"gradient of {name} at x = [1, 2, 4]", wrong={ENGINE_ORDER: order})
    expect_close(got["3*x"], np.full(3, 3.0), what="gradient of 3*x", wrong={ENGINE_ORDER: order, ENGINE_MUL_RULE: x})
    expect_close(got["x*c"], c, what="gradient of x*c", wrong={ENGINE_ORDER: order, ENGINE_MUL_RULE: x})
    rule("x+c", np.ones(3))
    rule("x-c", np.ones(3))
    expect_close(got["c-x"], -np.ones(3), what="gradient of c-x", wrong={ENGINE_ORDER: order, ENGINE_SUB_RULE: np.ones(3)})
    rule("x/c", 1 / c)
    rule("c/x", -c / x ** 2)
    rule("-x", -np.ones(3))
    expect_close(got["x**3"], 3 * x ** 2, what="gradient of x**3", wrong={ENGINE_ORDER: order, ENGINE_POW_RULE: x ** 2})
    rule("exp", np.exp(x))
    expect_close(got["log"], 1 / x, what="gradient of log", wrong={ENGINE_ORDER: order, ENGINE_LOG_RULE: x})
    expect_close(got["mean"], np.full(3, 1 / 3), what="gradient of mean",
                 wrong={ENGINE_ORDER: order, ENGINE_MEAN_RULE: np.ones(3)})
    rule("norm", x / np.sqrt(21.0))


@scenario
def engine_numbers_on_either_side(ad):
    got = {}
    for name, f in [("2+x", lambda x: 2 + x), ("1-x", lambda x: 1 - x), ("3*x", lambda x: 3 * x),
                    ("1/x", lambda x: 1 / x), ("x-1", lambda x: x - 1),
                    ("array*x", lambda x: np.array([1.0, -1.0, 2.0]) * x)]:
        x = ad.Tensor([1.0, 2.0, 4.0], requires_grad=True)
        value = attempt(lambda: f(x))

        def grad():
            value.sum().backward()
            return x.grad
        got[name] = {"value": plain(value), "grad": plain(attempt(grad))}
    return got


@engine_numbers_on_either_side.check
def _(got):
    x = np.array([1.0, 2.0, 4.0])
    order = raised_a("KeyError")
    expect_close(got["2+x"]["value"], 2 + x, what="2+x at x = [1, 2, 4]", wrong={ENGINE_RADD: raised_a("TypeError")})
    expect_close(got["1-x"]["value"], 1 - x, what="1-x at x = [1, 2, 4]", wrong={ENGINE_RSUB: x - 1})
    for name, value, grad in [("3*x", 3 * x, np.full(3, 3.0)), ("1/x", 1 / x, -1 / x ** 2), ("x-1", x - 1, np.ones(3)),
                              ("array*x", np.array([1.0, -1.0, 2.0]) * x, np.array([1.0, -1.0, 2.0]))]:
        expect_close(got[name]["value"], value, what=f"{name} at x = [1, 2, 4]")
    expect_close(got["2+x"]["grad"], np.ones(3), what="gradient of 2+x", wrong={ENGINE_ORDER: order})
    # its value was right (checked above), so a gradient of +1 is the subtraction rule's sign
    expect_close(got["1-x"]["grad"], -np.ones(3), what="gradient of 1-x", wrong={ENGINE_ORDER: order,
                                                                                ENGINE_SUB_RULE: np.ones(3)})
    expect_close(got["3*x"]["grad"], np.full(3, 3.0), what="gradient of 3*x", wrong={ENGINE_ORDER: order,
                                                                                    ENGINE_MUL_RULE: x})
    expect_close(got["1/x"]["grad"], -1 / x ** 2, what="gradient of 1/x", wrong={ENGINE_ORDER: order})
    expect_close(got["x-1"]["grad"], np.ones(3), what="gradient of x-1", wrong={ENGINE_ORDER: order})
    expect_close(got["array*x"]["grad"], np.array([1.0, -1.0, 2.0]), what="gradient of array*x",
                 wrong={ENGINE_ORDER: order, ENGINE_MUL_RULE: x})


@scenario
def engine_backward_twice_raises(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    s = (3 * x).sum()
    first = attempt(lambda: s.backward())
    return {"first": first, "second": attempt(lambda: s.backward())}   # the first call freed the graph


@engine_backward_twice_raises.check
def _(got):
    # PyTorch 2.13.0 (VERIFIED.md): "Trying to backward through the graph a second time ..."
    expect_none(got["first"], what="the first s.backward() (the error it raised)",
                wrong={ENGINE_ORDER: raised_a("KeyError")})
    expect_raised(got["second"], "RuntimeError", containing="backward through the graph a second time",
                  what="second s.backward() without retain_graph")


@scenario
def engine_retain_graph_accumulates(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    s = (3 * x).sum()
    first = attempt(lambda: s.backward(retain_graph=True))
    second = attempt(lambda: s.backward())     # allowed: the first call kept the graph
    return {"first": first, "second": second, "x_grad": plain(x.grad)}


@engine_retain_graph_accumulates.check
def _(got):
    expect_none(got["first"], what="s.backward(retain_graph=True) (the error it raised)",
                wrong={ENGINE_ORDER: raised_a("KeyError")})
    expect_none(got["second"], what="second s.backward() after retain_graph=True (the error it raised)",
                wrong={ENGINE_RETAIN_IGNORED: raised_with("second time")})
    expect_close(got["x_grad"], np.full(4, 6.0), what="x.grad after two backward() of sum(3x): 3 + 3",
                 wrong={ENGINE_GRAD_OVERWRITTEN: np.full(4, 3.0)})


@scenario
def engine_two_graphs_accumulate(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    a = (3 * x).sum()
    b = (2 * x).sum()            # made before a.backward(), which must leave it alone
    first = attempt(lambda: a.backward())
    second = attempt(lambda: b.backward())    # a separate graph: .grad adds up
    return {"first": first, "second": second, "x_grad": plain(x.grad)}


@engine_two_graphs_accumulate.check
def _(got):
    expect_none(got["first"], what="a.backward() (the error it raised)", wrong={ENGINE_ORDER: raised_a("KeyError")})
    expect_none(got["second"], what="b.backward() after a.backward() (the error it raised)",
                wrong={ENGINE_FREES_UNREACHED: raised_with("second time")})
    expect_close(got["x_grad"], np.full(4, 5.0), what="x.grad after backward() of sum(3x), then of sum(2x)",
                 wrong={ENGINE_GRAD_OVERWRITTEN: np.full(4, 2.0)})


@scenario
def engine_diamond_and_double_add(ad):
    def diamond():
        x = ad.Tensor(2.0, requires_grad=True)
        y = 3 * x
        (2 * y + 5 * y).backward()   # two paths from the output to y, through two operations
        return x.grad

    def double_add():
        a = ad.Tensor(1.0, requires_grad=True)
        b = a + a
        (b + b).backward()           # one operation using b twice, and one using a twice
        return a.grad
    return {"diamond": plain(attempt(diamond)), "double_add": plain(attempt(double_add))}


@engine_diamond_and_double_add.check
def _(got):
    # PyTorch 2.13.0 (VERIFIED.md): 21 and 4. The diamond comes first: only once it is right (paths through
    # different operations add up, the order is right) does the double add tell deduplicated inputs and a
    # missing visited set apart from the rest.
    expect_close(got["diamond"], 21.0, what="dc/dx for y = 3x, c = 2y + 5y at x = 2",
                 wrong={ENGINE_PATHS_ASSIGNED: lambda g: matches(g, 6.0) or matches(g, 15.0),
                        ENGINE_ORDER: raised_a("KeyError"),
                        # y went through twice in one pass, the second time with its record freed by the first
                        ENGINE_NO_VISITED: raised_with("'NoneType' object is not callable")})
    expect_close(got["double_add"], 4.0, what="d/da of (a + a) + (a + a)",
                 wrong={ENGINE_INPUTS_DEDUPLICATED: 1.0, ENGINE_NO_VISITED: raised_a("KeyError")})


# A linear backward() takes a few ms here and an exponential one minutes: the time limit tells them apart
# (assignment.yaml), and a student (or a batch) with the exponential one waits no longer.
@scenario
def engine_long_chain_linear_time(ad):
    x = ad.Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(24):
        y = y + y              # 2^24 paths from y to x: backward must visit each tensor once
    error = attempt(lambda: y.backward())
    return {"error": error, "x_grad": plain(x.grad)}


@engine_long_chain_linear_time.check
def _(got):
    expect_none(got["error"], what="y.backward() (the error it raised)")
    expect_close(got["x_grad"], 2.0 ** 24, what="x.grad after 24 doublings y = y + y")


@scenario
def engine_broadcasting(ad):
    x = ad.Tensor([[1.0], [2.0], [3.0]], requires_grad=True)   # shape (3, 1)
    w = ad.Tensor([1.0, -1.0, 2.0, 0.5], requires_grad=True)   # shape (4,)
    error = attempt(lambda: (x * w + x).sum().backward())      # x * w has shape (3, 4)
    return {"error": error, "x_grad": plain(x.grad), "w_grad": plain(w.grad)}


@engine_broadcasting.check
def _(got):
    x, w = np.array([[1.0], [2.0], [3.0]]), np.array([1.0, -1.0, 2.0, 0.5])
    expect_none(got["error"], what="(x * w + x).sum().backward() (the error it raised)")
    expect_close(got["x_grad"], np.full((3, 1), w.sum() + 4), what="x.grad (summed back to shape (3, 1))",
                 wrong={ENGINE_NO_UNBROADCAST: lambda g: np.shape(g) == (3, 4)})
    expect_close(got["w_grad"], np.full(4, x.sum()), what="w.grad (summed back to shape (4,))",
                 wrong={ENGINE_NO_UNBROADCAST: lambda g: np.shape(g) == (3, 4)})


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
    d = attempt(lambda: f(a))
    return {"d": plain(d), "error": attempt(lambda: d.backward()), "a_grad": plain(a.grad)}


@engine_d2l_control_flow.check
def _(got):
    # f is linear in a, so a.grad == d / a; PyTorch 2.13.0 (VERIFIED.md): 1024
    a = 1.764052
    expect_close(got["d"], 1024.0 * a, what="f(a)")
    expect_none(got["error"], what="f(a).backward() (the error it raised)", wrong={ENGINE_ORDER: raised_a("KeyError")})
    expect_close(got["a_grad"], 1024.0, what="a.grad")
