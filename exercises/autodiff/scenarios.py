"""Public scenarios of the autodiff assignment: what `grader check` runs on your autodiff.py.

Each scenario is a small program run against your module (`ad`) in a sandbox, and a check that compares
what it returned with values worked out by hand (closed forms). Values next to the D2L programs were
verified in PyTorch 2.13 and TensorFlow 2.21 (solutions/autodiff/VERIFIED.md).

Each task is scored on its own code, and each scenario first runs its *control*: the same program with
your function replaced by a stand-in made of the provided engine alone. For Task 1 the stand-in of
`detach` (and of `stop_gradient`) is a constant made by hand, `ad.Tensor(y.data)`; for Task 2 the
stand-in of `_take_records_for_call` is the engine's own reader of the records, which answers as a
persistent tape would. When the control gets the closed form, your code must too; when it does not, the
provided engine was changed, your function cannot be judged there (no points), and the feedback says so
(the engine's own checks say what changed). A Task 1 scenario on a tape gives that tape the engine's
reader (Task 2 is not graded there); a Task 2 scenario makes its constants with `ad.Tensor(y.data)`.

A result is checked for what it is, not for what it claims: `type(u) is Tensor` (a subclass, or an object
whose `__class__` says Tensor, is not one), and its values against the values the same run read from the
tensor it was made from, on expressions and shapes other than the examples'.
"""
import numpy as np

from grader.expect import (
    describe,
    expect,
    expect_close,
    expect_control,
    expect_equal,
    expect_none,
    expect_raised,
    expect_ran,
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
DETACH_OTHER_CLASS = ("y.detach() returned an object of another class that only looks like a Tensor (a subclass, or "
                      "an object whose __class__ says Tensor); it must return a Tensor itself")
DETACH_REQUIRES_GRAD = "y.detach() returned a tensor with requires_grad=True; a detached tensor has requires_grad=False"
DETACH_NOT_LEAF = "y.detach() returned a tensor that still has a history (is_leaf is False); it must be a new leaf"
DETACH_SHAPE = ("y.detach() changed the shape of the values: the new tensor has y's shape (a 0-d tensor stays 0-d, "
                "a 2-D one stays 2-D)")
DETACH_COPIED_GRAD = ("t.detach() carried t's .grad over to the new tensor: a detached tensor starts without a "
                      "gradient (.grad is None, as in PyTorch)")
SG_LEAKS = "stop_gradient(t) let the gradient through: it returned t itself, or something still linked to t"
SG_ZERO_RULE = ("stop_gradient(t) was recorded as an operation whose gradient is zero; it must cut the graph, so "
                "the tape sees no path at all (None, as in TensorFlow)")
SG_NOT_LEAF = ("stop_gradient(t) returned a leaf with requires_grad=True; the tensor it returns has "
               "requires_grad=False")
SG_NOT_TENSOR = "stop_gradient(t) returned something that is not a Tensor"
# Task 2
SECOND_CALL_ZEROS = ("a used-up non-persistent tape returned zeros; it must raise RuntimeError "
                     "(\"A non-persistent GradientTape can only be used to compute one set of gradients\")")
SECOND_CALL_NONE = ("a used-up non-persistent tape returned None; it must raise RuntimeError "
                    "(\"A non-persistent GradientTape can only be used to compute one set of gradients\")")
SECOND_CALL_WRONG_ERROR = ("a used-up non-persistent tape raised another kind of error; it must raise RuntimeError "
                           "(\"A non-persistent GradientTape can only be used to compute one set of gradients\")")
KEPT_RECORDS = ("the non-persistent tape answered every gradient() call: persistent=False was ignored; a "
                "non-persistent tape releases its records after its one call")
PERSISTENT_INVERTED = ("the persistent flag works the wrong way round: the non-persistent tape answered every call "
                       "and the persistent one refused its second (if not persistent: release)")
TARGET_SEEN = ("the non-persistent tape refused only a target it had already differentiated; it must refuse "
               "every call after the first one, whatever the target")
ONE_CALL_TOO_MANY = ("the non-persistent tape answered a second gradient() call and refused only from the third: "
                     "its count of calls is off by one (it must refuse every call after the first)")
RAISES_ON_FIRST_CALL = ("the tape refused its very first gradient() call: its test for \"used up\" already holds "
                        "before any call (the tape marked used before the test, or the test the wrong way round)")
EMPTY_IS_USED = ("the non-persistent tape refused its first call because it had recorded nothing: no records is "
                 "not the same as used up (tape.gradient(x, x) of a watched x records nothing and gives ones)")
TAPE_STATE_SHARED = ("once one non-persistent tape had answered, another tape refused its own first call: the "
                     "used-up state was kept where every tape sees it (on the class, or in a global), not on self")
PERSISTENT_RELEASED = ("the persistent tape refused a second call: persistent=True was ignored or inverted "
                       "(a persistent tape answers any number of calls)")
RELEASED_TOO_EARLY = ("the non-persistent tape had nothing left at its first gradient() call: it released its "
                      "records before handing them out")
# The provided engine (you changed it: restore it from the handout)
LIST_IS_MANY_CALLS = ("one gradient() call with a list of sources was counted as several calls (a changed "
                      "GradientTape.gradient?); a list of sources is one call")
ACCUMULATED = ("the persistent tape's answers grow from call to call even with the engine's own reader of the "
               "records: the changed GradientTape.gradient keeps something across calls (each call must start afresh)")
CLEARED_ON_EXIT = ("the tape forgot what it recorded when its with-block ended (a changed GradientTape.__exit__?); "
                   "leaving the block only stops recording, gradient() must still work afterwards")
ENGINE_RECORDS_TWICE = ("the tape's gradients came out twice too large even with the engine's own reader of the "
                        "records: the changed engine records each operation twice (_make, GradientTape._record)")
ENGINE_WATCH_IGNORED = ("tape.watch(x) did not make the tape watch x (a changed GradientTape.watch?): a watched "
                        "source's gradient came out as None even inside the with-block")
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
ENGINE_ORDER = ("backward() looked for a tensor's gradient before it had one (a KeyError): it must walk the "
                "topological order from the output back (reversed), passing each gradient on to the inputs")
ENGINE_NEG = "-x came out wrong: Tensor.__neg__ must give -x (and its rule -g)"
ENGINE_FREES_UNREACHED = ("backward() freed the records of operations it never went through; a pass frees only "
                          "the records it used")
ENGINE_RETAIN_IGNORED = "backward(retain_graph=True) freed its records anyway; with retain_graph=True it keeps them"
ENGINE_GRAD_OVERWRITTEN = "backward() overwrote .grad instead of adding into it (.grad accumulates across calls)"
ENGINE_NO_AUTO_WATCH = ("the tape did not watch a leaf with requires_grad=True on its first use "
                        "(watch_accessed_variables=True watches it, like a trainable tf.Variable)")
ENGINE_BREAKS_CONTROL = ("the provided engine gets this program wrong even without your code (your function replaced "
                         "by a stand-in made of the engine alone), so your function cannot be checked here: restore "
                         "the engine you changed (the provided engine's checks say what it gets wrong)")
ENGINE_UNCONNECTED_ZEROS = ("tape.gradient() gave zeros for a source without a recorded path; that is None "
                            "unless unconnected_gradients='zero'")


def expect_no_error(got, *, what, wrong):
    """`got` is not a record of an exception; `wrong` names the misconception of a known error."""
    if isinstance(got, Raised):
        expect_none(got, what=f"{what} (the error it raised)", wrong=wrong)


def controls(got):
    """The control runs of a task scenario, before and after yours (see the module doc), each come to its end: when
    the engine alone fails, or fails once it has been used, it is the cause. They are checked before your run."""
    expect_ran(got["control"], what="the scenario's program", misconception=ENGINE_BREAKS_CONTROL)
    expect_ran(got["again"], what="the scenario's program, run again after yours", misconception=ENGINE_BREAKS_CONTROL)
    return got["control"], got["again"]


def expect_tape_control(calls, closed, *, what, start=1):
    """The answers of a Task 2 control (each call read by the engine's own reader, as a persistent tape would) are
    the closed forms; which engine change it looks like, when they are not, follows from the answers themselves:
    twice the answer from the first call on (each operation recorded twice), or growing from call to call."""
    calls = calls if isinstance(calls, (list, tuple)) else [calls]   # an error instead of a list of answers
    for n, (got, value) in enumerate(zip(calls, closed), start):   # n: the call's number on its tape
        value = np.asarray(value, dtype=float)
        expect_control(got, value, what=f"{what}, call {n}", misconception=ENGINE_BREAKS_CONTROL,
                       wrong={ENGINE_RECORDS_TWICE: lambda g, v=value, first=n == 1: first and matches(g, 2 * v),
                              ACCUMULATED: lambda g, v=value, later=n > 1: later and grew(v)(g)})


def expect_tape_state(states, persistent, *, what):
    """The engine's own state of each tape of a control run, read as it was made (`[tape._persistent,
    tape._released]`): as GradientTape(persistent=...) sets it up."""
    for state, flag in zip(states, persistent):
        expect_control(state, [flag, False], what=f"[tape._persistent, tape._released] of {what} "
                       f"GradientTape(persistent={flag}) as made", misconception=ENGINE_BREAKS_CONTROL)


def expect_detached(seen, expected, *, what, controls=(), not_tensor=DETACH_NOT_TENSOR, other_class=DETACH_OTHER_CLASS):
    """`seen` = [type(r) is Tensor, isinstance(r, Tensor), type(r).__name__, r's values, the values of what r was made
    from], all read in one run: r is a Tensor itself, with the same values and shape as its source, which are `expected`. `controls`:
    the same observations of the control runs, checked first (the engine made the source, and the stand-in)."""
    for control in controls:
        expect_control(control[4], expected, what=f"the values {what} was made from", misconception=ENGINE_BREAKS_CONTROL)
        expect_control(control[3], expected, what=f"the values of {what}", misconception=ENGINE_BREAKS_CONTROL)
    exact, claims, kind, values, source = seen
    expect(exact is True, what=f"type({what}) is Tensor", expected="True (a Tensor itself)",
           got=f"False: an object of class {kind}" + (", which isinstance() takes for a Tensor" if claims else ""),
           misconception=not_tensor if kind == "ndarray" else other_class if claims is True else None)
    expect_close(source, expected, what=f"the values {what} was made from")
    reshaped = (lambda g: np.size(g) == np.size(source) and np.shape(g) != np.shape(source)
                and matches(np.ravel(g), np.ravel(source)))
    expect_close(values, source, what=f"{what}'s values (equal to its source's, read in the same run)",
                 wrong={DETACH_SHAPE: reshaped})


def blamed(probe):
    """Which sentences a stop_gradient gone wrong gets: detach's, when the same run saw your detach go wrong the same
    way (`probe` = [type(d) is Tensor, type(d).__name__, d.is_leaf, d.requires_grad] for d = (r*r).detach(), r with
    requires_grad; stop_gradient may be built on detach), else stop_gradient's own."""
    seen = isinstance(probe, list) and len(probe) == 4
    wrong_type = seen and probe[0] is not True
    kept = seen and not wrong_type and probe[2] is False
    flagged = seen and not wrong_type and not kept and probe[3] is True
    return {"not_tensor": DETACH_NOT_TENSOR if wrong_type else SG_NOT_TENSOR,
            "other_class": DETACH_OTHER_CLASS if wrong_type else SG_NOT_TENSOR,
            "leaks": DETACH_KEPT_HISTORY if kept or flagged else SG_LEAKS,
            "not_leaf": DETACH_REQUIRES_GRAD if flagged else SG_NOT_LEAF}


# The inputs of the D2L programs (a program has its own copy): the book's, and others (a value computed for the
# book's alone is not an answer).
D2L_INPUTS = (np.arange(4.0), np.array([[0.5, -1.0], [2.0, 1.5]]), np.array(-0.75))


# =============================================================== Task 1: detach and stop_gradient

@scenario
def d2l_detach_dz_dx(ad):
    def run(detach):              # D2L §2.5.3, with `detach` for y.detach(), on the book's x and on others
        runs = []
        for start in (np.arange(4.0), np.array([[0.5, -1.0], [2.0, 1.5]]), np.array(-0.75)):
            x = ad.Tensor(start, requires_grad=True)
            y = x * x
            u = detach(y)         # a constant with y's values: no gradient flows through it
            seen = [type(u) is ad.Tensor, isinstance(u, ad.Tensor), type(u).__name__, plain(u), plain(y)]

            def dz_dx():
                (u * x).sum().backward()
                return x.grad
            runs.append({"u": seen, "dz_dx": plain(attempt(dz_dx))})
        return runs

    control = attempt(lambda: run(lambda y: ad.Tensor(y.data)))   # the control (see the module doc)
    if isinstance(control, Exception):
        return {"control": control}   # the engine alone failed: your code is not run
    mine = attempt(lambda: run(lambda y: y.detach()))
    again = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@d2l_detach_dz_dx.check
def _(got):
    # D2L §2.5.3 (PyTorch): x.grad == u == [0, 1, 4, 9]; verified in torch 2.13.0 (solutions/autodiff/VERIFIED.md)
    runs = controls(got)
    for n, x in enumerate(D2L_INPUTS):
        for control in runs:
            expect_control(control[n]["dz_dx"], x * x, what=f"x.grad after z.sum().backward(), x of shape {x.shape}",
                           misconception=ENGINE_BREAKS_CONTROL)
        mine = got["mine"][n]
        expect_detached(mine["u"], x * x, what=f"u = y.detach(), y = x*x of shape {x.shape}",
                        controls=[control[n]["u"] for control in runs])
        expect_close(mine["dz_dx"], x * x, what=f"x.grad after z.sum().backward(), x of shape {x.shape}",
                     wrong={DETACH_KEPT_HISTORY: 3 * x * x})


@scenario
def d2l_detach_keeps_y_graph(ad):
    def run(detach):
        runs = []
        for start in (np.arange(4.0), np.array([[0.5, -1.0], [2.0, 1.5]])):   # the book's x, then another
            x = ad.Tensor(start, requires_grad=True)
            y = x * x
            u = detach(y)
            seen = [type(u) is ad.Tensor, isinstance(u, ad.Tensor), type(u).__name__, plain(u), plain(y)]
            flags = plain(attempt(lambda: [y.requires_grad, y.is_leaf]))   # y as detaching left it
            attempt(lambda: (u * x).sum().backward())
            x.grad = None

            def dy_dx():          # y's own graph must still be there
                y.sum().backward()
                return x.grad
            runs.append({"u": seen, "y_flags": flags, "dy_dx": plain(attempt(dy_dx))})
        return runs

    control = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(control, Exception):
        return {"control": control}   # the engine alone failed: your code is not run
    mine = attempt(lambda: run(lambda y: y.detach()))
    again = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@d2l_detach_keeps_y_graph.check
def _(got):
    # D2L §2.5.3: then x.grad == 2x == [0, 2, 4, 6], no error; verified in torch 2.13.0 (VERIFIED.md)
    runs = controls(got)
    for n, x in enumerate(D2L_INPUTS[:2]):
        for control in runs:
            expect_control(control[n]["y_flags"], [True, False], what="[y.requires_grad, y.is_leaf] for y = x*x",
                           misconception=ENGINE_BREAKS_CONTROL)
            expect_control(control[n]["dy_dx"], 2 * x, what=f"x.grad after y.sum().backward(), x of shape {x.shape}",
                           misconception=ENGINE_BREAKS_CONTROL)
        mine = got["mine"][n]
        expect_detached(mine["u"], x * x, what=f"u = y.detach(), y = x*x of shape {x.shape}",
                        controls=[control[n]["u"] for control in runs])
        flags = mine["y_flags"]   # what the run itself saw of y decides which cause to name
        expect_close(mine["dy_dx"], 2 * x, what=f"x.grad after y.sum().backward(), x of shape {x.shape}",
                     wrong={DETACH_CHANGED_FLAG: lambda g: flags == [False, False],
                            DETACH_CHANGED_HISTORY: lambda g: flags == [True, True],
                            DETACH_FREED_Y: lambda g: flags == [True, False] and matches(g, raised_with("second time"))})


@scenario
def detach_properties(ad):
    def run(detach):
        w = ad.Tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        s = ad.Tensor(1.5, requires_grad=True)
        leaf = ad.Tensor([1.0, 2.0, 3.0], requires_grad=True)
        attempt(lambda: (leaf * leaf).sum().backward())   # leaf.grad = 2 * leaf, before it is detached
        got = {}
        for name, t in (("w.exp() - 1 (2-D)", w.exp() - 1.0), ("s * s * s (0-d)", s * s * s),
                        ("a leaf with a .grad", leaf)):
            d = detach(t)
            got[name] = {"d_is_t": d is t, "seen": [type(d) is ad.Tensor, isinstance(d, ad.Tensor), type(d).__name__, plain(d), plain(t)],
                         "d_flags": plain(attempt(lambda: [d.requires_grad, d.is_leaf])),
                         "d_grad": plain(attempt(lambda: d.grad)),
                         "t_flags": plain(attempt(lambda: [t.requires_grad, t.is_leaf])), "t_grad": plain(t.grad)}
        return got

    control = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(control, Exception):
        return {"control": control}   # the engine alone failed: your code is not run
    mine = attempt(lambda: run(lambda t: t.detach()))
    again = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@detach_properties.check
def _(got):
    w, s, leaf = np.array([[1.0, -2.0], [0.5, 3.0]]), 1.5, np.array([1.0, 2.0, 3.0])
    runs = controls(got)
    for name, values, leaf_like, grad in (("w.exp() - 1 (2-D)", np.exp(w) - 1, False, None),
                                          ("s * s * s (0-d)", np.array(s ** 3), False, None),
                                          ("a leaf with a .grad", leaf, True, 2 * leaf)):
        for control in runs:
            for key, expected in (("d_flags", [False, True]), ("t_flags", [True, leaf_like])):
                expect_control(control[name][key], expected, what=f"{key[0]}'s [requires_grad, is_leaf], t = {name}",
                               misconception=ENGINE_BREAKS_CONTROL)
            expect_control(control[name]["d_grad"], None, what=f"d.grad, t = {name}", misconception=ENGINE_BREAKS_CONTROL)
            expect_control(control[name]["t_grad"], grad, what=f"t.grad, t = {name}", misconception=ENGINE_BREAKS_CONTROL)
        seen = got["mine"][name]
        expect_equal(seen["d_is_t"], False, what=f"t.detach() is t, for t = {name}", wrong={DETACH_SAME_OBJECT: True})
        expect_detached(seen["seen"], values, what=f"t.detach() for t = {name}",
                        controls=[control[name]["seen"] for control in runs])
        expect_equal(seen["d_flags"], [False, True], what=f"[d.requires_grad, d.is_leaf] for d = t.detach(), t = {name}",
                     wrong={DETACH_NOT_LEAF: lambda g: g[1] is False, DETACH_REQUIRES_GRAD: [True, True]})
        expect_none(seen["d_grad"], what=f"d.grad for d = t.detach(), t = {name} (as in PyTorch)",
                    wrong={DETACH_COPIED_GRAD: lambda g: grad is not None and matches(g, grad)})
        expect_equal(seen["t_flags"], [True, leaf_like], what=f"[t.requires_grad, t.is_leaf] after t.detach(), t = {name}",
                     wrong={DETACH_CHANGED_FLAG: [False, leaf_like]} if leaf_like else
                     {DETACH_CHANGED_FLAG: [False, False], DETACH_CHANGED_HISTORY: [True, True]})
        if grad is not None:
            expect_close(seen["t_grad"], grad, what=f"t.grad after t.detach(), t = {name}")


@scenario
def stop_gradient_on_tape(ad):
    def run(stop):
        a = ad.Tensor([[0.0, 1.0], [2.0, 3.0]])
        q = ad.Tensor(np.ones((2, 2)))     # watched and never used: the tape's answer for "no path"

        def grads(make_target, unconnected="none"):   # [d/da, d/dq] from a fresh tape, asked inside its block
            with ad.GradientTape() as tape:
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))   # see the module doc
                tape.watch([a, q])
                v = a * 3.0 + a * a
                s = stop(v)
                return s, v, plain(attempt(lambda: tape.gradient(make_target(s), [a, q],
                                                                 unconnected_gradients=unconnected)))

        s, v, blocked = grads(lambda s: s)              # no path: None
        plus = grads(lambda s: s + a)[2]                # only through "+ a": ones
        zero = grads(lambda s: s, unconnected="zero")[2]  # "zero": zeros
        r = ad.Tensor(2.5, requires_grad=True)
        r2 = r * r
        s2 = stop(r2)
        return {"s": [type(s) is ad.Tensor, isinstance(s, ad.Tensor), type(s).__name__, plain(s), plain(v)],
                "s2": [s2 is r2, plain(attempt(lambda: [s2.requires_grad, s2.is_leaf]))],
                "blocked": blocked, "plus": plus, "zero": zero}

    control = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(control, Exception):
        return {"control": control}   # the engine alone failed: your code is not run
    mine = attempt(lambda: run(ad.stop_gradient))
    again = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    if not isinstance(mine, Exception):
        b = ad.Tensor([1.0, 2.0], requires_grad=True)
        d = attempt(lambda: (b * b).detach())   # your detach of the same kind of tensor: when it goes wrong too, the cause is there
        mine["detach"] = [type(d) is ad.Tensor, type(d).__name__, plain(attempt(lambda: d.is_leaf)),
                          plain(attempt(lambda: d.requires_grad))]
    return {"control": control, "mine": mine, "again": again}


@stop_gradient_on_tape.check
def _(got):
    # TensorFlow 2.21.0 (VERIFIED.md): None, ones, zeros
    a = np.array([[0.0, 1.0], [2.0, 3.0]])
    cases = (("blocked", "stop_gradient(v)", None, 2 * a + 3), ("plus", "stop_gradient(v) + a", np.ones((2, 2)), 2 * a + 4),
             ("zero", "stop_gradient(v), unconnected_gradients='zero'", np.zeros((2, 2)), 2 * a + 3))
    runs = controls(got)
    for control in runs:
        for key, target, closed, _ in cases:
            pair = control[key]
            expect_control(pair[0] if isinstance(pair, list) else pair, closed, what=f"d/da of {target}",
                           misconception=ENGINE_BREAKS_CONTROL,
                           wrong={ENGINE_UNCONNECTED_ZEROS: is_zeros} if closed is None else {})
        expect_control(control["s2"][1], [False, True], what="[s.requires_grad, s.is_leaf] for s = stop_gradient(r*r)",
                       misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    blame = blamed(mine["detach"])
    expect_detached(mine["s"], 3 * a + a * a, what="s = stop_gradient(a*3 + a*a)", controls=[c["s"] for c in runs],
                    not_tensor=blame["not_tensor"], other_class=blame["other_class"])
    for key, target, closed, leaked in cases:
        pair = mine[key]
        expect(isinstance(pair, list) and len(pair) == 2, what=f"tape.gradient({target}, [a, q])",
               expected="a list of two gradients", got=pair)
        gx, gw = pair
        if closed is None:
            # A watched source never used (q) shows what "no path" gives on this tape: None, as shipped. Zeros for
            # a beside None for q, and only then, is a stop_gradient recorded as an operation.
            if gw is None:
                expect_none(gx, what=f"d/da of {target}", wrong={blame["leaks"]: leaked, SG_ZERO_RULE: is_zeros})
            else:
                expect(same(gx, gw), what=f"d/da of {target}", got=gx,
                       expected=f"{describe(gw)}, what this tape gives for a watched source it never used")
        else:
            expect_close(gx, closed, what=f"d/da of {target}", wrong={blame["leaks"]: leaked})
    itself, flags = mine["s2"]
    expect_equal(flags, [False, True], what="[s.requires_grad, s.is_leaf] for s = stop_gradient(r*r), r with "
                 "requires_grad=True", wrong={SG_LEAKS: lambda g: itself is True and blame["leaks"] == SG_LEAKS,
                                              blame["not_leaf"]: [True, True]})


# =============================================================== Task 2: persistent GradientTape

@scenario
def d2l_persistent_tape(ad):
    def run(own_reader):
        x = ad.Tensor(np.arange(4.0))
        with ad.GradientTape(persistent=True) as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:        # the control: the engine's own reader of the records (see the module doc)
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch(x)
            y = x * x
            u = ad.Tensor(y.data)     # a constant with y's values, made by hand (Task 1 is not graded here)
            z = u * x
        # a persistent tape answers, again and again, with the same answer
        return {"states": [state], "calls": [plain(attempt(lambda: tape.gradient(t, x))) for t in (z, y, z)]}

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}   # the engine alone failed: your code is not run
    mine = attempt(lambda: run(False))
    if not isinstance(mine, Exception) and isinstance(mine["calls"][0], NotImplementedError):
        raise mine["calls"][0]        # the task is not done yet
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@d2l_persistent_tape.check
def _(got):
    # D2L §2.5.3 (TensorFlow, persistent tape): u, 2x, u = [0,1,4,9], [0,2,4,6], [0,1,4,9];
    # verified in tensorflow 2.21.0 (VERIFIED.md)
    x = np.arange(4.0)
    u = x * x
    for control in controls(got):
        expect_tape_state(control["states"], [True], what="the")
        expect_tape_control(control["calls"], (u, 2 * x, u), what="tape.gradient(z, x), (y, x), (z, x)")
    first, second, third = got["mine"]["calls"]
    expect_close(first, u, what="first tape.gradient(z, x)", wrong={RAISES_ON_FIRST_CALL: raised_with("non-persistent")})
    expect_close(second, 2 * x, what="then tape.gradient(y, x)", wrong={PERSISTENT_RELEASED: raised_with("non-persistent")})
    expect_close(third, u, what="then tape.gradient(z, x) again", wrong={PERSISTENT_RELEASED: raised_with("non-persistent")})


@scenario
def non_persistent_second_call_raises(ad):
    def run(own_reader):
        x = ad.Tensor(np.arange(4.0))
        states = []

        def tape(persistent=False):
            made = ad.GradientTape(persistent=persistent)
            states.append(plain(attempt(lambda: [made._persistent, made._released])))
            if own_reader:        # the control: the engine's own reader (see the module doc)
                made._take_records_for_call = lambda: (list(made._records), set(made._tracked))
            return made

        with tape() as first:     # persistent=False: one gradient() call
            first.watch(x)
            y = x * x
            z = y * x
            q = z + y
        # its one call, then a new target, another new one, and the first target again: each must raise
        calls = [plain(attempt(lambda: first.gradient(t, x))) for t in (z, y, q, z)]
        with tape() as second:    # another tape: its own first call is answered, whatever the first one did
            second.watch(x)
            w = x * 2.0
        calls.append(plain(attempt(lambda: second.gradient(w, x))))
        with tape() as empty:     # a tape that recorded nothing: gradient(x, x) is ones, then it is used up
            empty.watch(x)
        calls += [plain(attempt(lambda: empty.gradient(x, x))) for _ in range(2)]
        with tape(persistent=True) as kept:   # beside them, a persistent tape answers twice
            kept.watch(x)
            v = x * 3.0
        calls += [plain(attempt(lambda: kept.gradient(v, x))) for _ in range(2)]
        return {"states": states, "calls": calls}

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}   # the engine alone failed: your code is not run
    mine = attempt(lambda: run(False))
    if not isinstance(mine, Exception) and isinstance(mine["calls"][0], NotImplementedError):
        raise mine["calls"][0]        # the task is not done yet
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@non_persistent_second_call_raises.check
def _(got):
    # TensorFlow 2.21.0 (VERIFIED.md): RuntimeError "A non-persistent GradientTape can only be used to
    # compute one set of gradients (or jacobians)"
    x = np.arange(4.0)
    answers = (3 * x * x, 2 * x, 3 * x * x + 2 * x, 3 * x * x, np.full(4, 2.0), np.ones(4), np.ones(4), np.full(4, 3.0),
               np.full(4, 3.0))
    for control in controls(got):
        expect_tape_state(control["states"], [False, False, False, True], what="each")
        expect_tape_control(control["calls"], answers, what="the calls of the scenario")
    first, second, third, fourth, other, empty, empty_again, kept, kept_again = got["mine"]["calls"]
    expect_close(first, 3 * x * x, what="first tape.gradient(z, x)",
                 wrong={RAISES_ON_FIRST_CALL: raised_with("non-persistent")})
    # Which cause to name follows from the calls after it: a new target answered, the first one refused (the targets
    # are counted), or the third call refused (the calls are counted one too far), or every call answered (with the
    # persistent tape's second call refused: the flag is inverted).
    used_up = raised_with("non-persistent")
    inverted = matches(kept_again, used_up)
    expect_raised(second, "RuntimeError", containing="non-persistent GradientTape", what="second call tape.gradient(y, x)",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None,
                         TARGET_SEEN: lambda g: matches(g, 2 * x) and not matches(third, used_up) and matches(fourth, used_up),
                         ONE_CALL_TOO_MANY: lambda g: matches(g, 2 * x) and matches(third, used_up),
                         PERSISTENT_INVERTED: lambda g: matches(g, 2 * x) and not matches(fourth, used_up) and inverted,
                         KEPT_RECORDS: lambda g: matches(g, 2 * x) and not matches(fourth, used_up),
                         SECOND_CALL_WRONG_ERROR: lambda g: isinstance(g, Raised) and not g.is_a("RuntimeError")})
    for call, target in ((third, "q"), (fourth, "z")):
        expect_raised(call, "RuntimeError", containing="non-persistent GradientTape",
                      what=f"a later call tape.gradient({target}, x)")
    expect_close(other, np.full(4, 2.0), what="another tape's own first call, gradient(2 * x, x)",
                 wrong={TAPE_STATE_SHARED: used_up})
    expect_close(empty, np.ones(4), what="gradient(x, x) of a tape that recorded nothing (its first call)",
                 wrong={EMPTY_IS_USED: used_up})
    expect_raised(empty_again, "RuntimeError", containing="non-persistent GradientTape",
                  what="that tape's second call", wrong={SECOND_CALL_NONE: None, KEPT_RECORDS: np.ones(4)})
    expect_close(kept, np.full(4, 3.0), what="a persistent tape's first call beside them")
    expect_close(kept_again, np.full(4, 3.0), what="the persistent tape's second call",
                 wrong={PERSISTENT_RELEASED: used_up})


@scenario
def one_call_with_list_of_sources(ad):
    def call(sources, own_reader=False):   # one call on a fresh non-persistent tape; sources: which of (x, w)
        x = ad.Tensor(np.arange(4.0))
        w = ad.Tensor([1.0, -2.0, 0.5, 3.0])
        with ad.GradientTape() as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:                   # the control: the engine's own reader (see the module doc)
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch([x, w])
            z = x * w + x
        grads = attempt(lambda: tape.gradient(z, [x, w] if sources == "list" else x))
        if isinstance(grads, NotImplementedError):
            raise grads                        # the task is not done yet
        return {"states": [state], "type": type(grads).__name__, "grads": plain(grads)}

    control = attempt(lambda: call("list", own_reader=True))
    if isinstance(control, Exception):
        return {"control": control}   # the engine alone failed: your code is not run
    mine = attempt(lambda: call("list"))
    # Then one source on another fresh tape: that tells a tape that refuses its first call from a list counted as
    # several calls.
    one = attempt(lambda: call("one")["grads"])
    again = attempt(lambda: call("list", own_reader=True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "one": one, "again": again}


@one_call_with_list_of_sources.check
def _(got):
    x, w = np.arange(4.0), np.array([1.0, -2.0, 0.5, 3.0])
    for control in controls(got):
        expect_tape_state(control["states"], [False], what="the")
        expect_control(control["type"], "list", what="type of tape.gradient(z, [x, w])", misconception=ENGINE_BREAKS_CONTROL)
        expect_tape_control(control["grads"], (w + 1, x), what="tape.gradient(z, [x, w])")
    mine, first_raises = got["mine"], matches(got["one"], raised_with("non-persistent"))
    grads = mine["grads"]
    used_up = raised_with("non-persistent")
    expect_no_error(grads, what="tape.gradient(z, [x, w])",
                    wrong={LIST_IS_MANY_CALLS: lambda g: not first_raises and matches(g, used_up),
                           RAISES_ON_FIRST_CALL: lambda g: first_raises and matches(g, used_up)})
    expect_equal(mine["type"], "list", what="type of tape.gradient(z, [x, w])")
    expect(len(grads) == 2, what="number of gradients", expected="2", got=grads)
    expect_close(grads[0], w + 1, what="dz/dx")
    expect_close(grads[1], x, what="dz/dw")


@scenario
def gradient_after_with_block(ad):
    def after_block(persistent, own_reader=False):   # d(x*x)/dx, asked after the with-block has ended
        x = ad.Tensor(np.arange(4.0))
        inside = None
        with ad.GradientTape(persistent=persistent) as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:   # the control: the engine's own reader, asked inside the block too
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch(x)
            y = x * x
            if own_reader:
                inside = [plain(attempt(lambda: x in tape._tracked)), plain(attempt(lambda: tape.gradient(y, x)))]
        return {"states": [state], "inside": inside, "after": plain(attempt(lambda: tape.gradient(y, x)))}

    def run(own_reader):
        return [after_block(persistent, own_reader) for persistent in (True, False)]

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}   # the engine alone failed: your code is not run
    mine = attempt(lambda: run(False))
    for answer in mine if not isinstance(mine, Exception) else ():
        if isinstance(answer["after"], NotImplementedError):
            raise answer["after"]                    # the task is not done yet
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@gradient_after_with_block.check
def _(got):
    x = np.arange(4.0)
    # Which engine change to name follows from the control's own observations: x never watched, or records
    # there inside the block and gone after it.
    for control in controls(got):
        for made, persistent in zip(control, (True, False)):
            expect_tape_state(made["states"], [persistent], what="the")
            watched, inside = made["inside"]
            expect_control(inside, 2 * x, what="tape.gradient(y, x) inside the with-block",
                           misconception=ENGINE_BREAKS_CONTROL,
                           wrong={ENGINE_WATCH_IGNORED: lambda g, seen=watched is True: not seen and g is None})
            expect_control(made["after"], 2 * x, what="tape.gradient(y, x) after the with-block",
                           misconception=ENGINE_BREAKS_CONTROL, wrong={CLEARED_ON_EXIT: lambda g: g is None or is_zeros(g)})
    persistent, non_persistent = (made["after"] for made in got["mine"])
    expect_close(persistent, 2 * x, what="a persistent tape's gradient(y, x) after the with-block")
    expect_close(non_persistent, 2 * x, what="a non-persistent tape's gradient(y, x) after the with-block",
                 wrong={RELEASED_TOO_EARLY: lambda g: g is None or is_zeros(g)})


# =============================================================== provided engine (0 points)
# These use neither task: they tell you whether the code you were given still works as shipped.

@scenario
def engine_basic_rules(ad):
    c = ad.Tensor([2.0, 3.0, 5.0])
    grads = {"neg": plain(attempt(lambda: -ad.Tensor([1.0, 2.0, 4.0])))}
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
    expect_close(got["neg"], -x, what="-x at x = [1, 2, 4]", wrong={ENGINE_NEG: x})
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
                    ("1/x", lambda x: 1 / x), ("x-1", lambda x: x - 1), ("x+2", lambda x: x + 2), ("-x", lambda x: -x),
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
    # The number on the left is to blame only where the same operation with the number on the right works.
    right_side = matches(got["x+2"]["value"], x + 2), matches(got["x-1"]["value"], x - 1)
    expect_close(got["2+x"]["value"], 2 + x, what="2+x at x = [1, 2, 4]",
                 wrong={ENGINE_RADD: lambda g: right_side[0] and matches(g, raised_a("TypeError"))})
    expect_close(got["1-x"]["value"], 1 - x, what="1-x at x = [1, 2, 4]",
                 wrong={ENGINE_RSUB: lambda g: right_side[1] and matches(g, x - 1)})
    expect_close(got["-x"]["value"], -x, what="-x at x = [1, 2, 4]", wrong={ENGINE_NEG: x})
    for name, value, grad in [("3*x", 3 * x, np.full(3, 3.0)), ("1/x", 1 / x, -1 / x ** 2), ("x-1", x - 1, np.ones(3)),
                              ("array*x", np.array([1.0, -1.0, 2.0]) * x, np.array([1.0, -1.0, 2.0]))]:
        expect_close(got[name]["value"], value, what=f"{name} at x = [1, 2, 4]")
    # The plain gradients first: only once backward() gets those right does a wrong one name its own rule.
    expect_close(got["x-1"]["grad"], np.ones(3), what="gradient of x-1", wrong={ENGINE_ORDER: order})
    expect_close(got["2+x"]["grad"], np.ones(3), what="gradient of 2+x", wrong={ENGINE_ORDER: order})
    expect_close(got["3*x"]["grad"], np.full(3, 3.0), what="gradient of 3*x", wrong={ENGINE_ORDER: order,
                                                                                    ENGINE_MUL_RULE: x})
    # its value was right (checked above), so a gradient of +1 is the subtraction rule's sign
    expect_close(got["1-x"]["grad"], -np.ones(3), what="gradient of 1-x", wrong={ENGINE_ORDER: order,
                                                                                ENGINE_SUB_RULE: np.ones(3)})
    expect_close(got["1/x"]["grad"], -1 / x ** 2, what="gradient of 1/x", wrong={ENGINE_ORDER: order})
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
    after_first = plain(x.grad)
    second = attempt(lambda: s.backward())     # allowed: the first call kept the graph
    return {"first": first, "after_first": after_first, "second": second, "x_grad": plain(x.grad)}


@engine_retain_graph_accumulates.check
def _(got):
    expect_none(got["first"], what="s.backward(retain_graph=True) (the error it raised)",
                wrong={ENGINE_ORDER: raised_a("KeyError")})
    expect_none(got["second"], what="second s.backward() after retain_graph=True (the error it raised)",
                wrong={ENGINE_RETAIN_IGNORED: raised_with("second time")})
    expect_close(got["after_first"], np.full(4, 3.0), what="x.grad after the first backward() of sum(3x)")
    expect_close(got["x_grad"], np.full(4, 6.0), what="x.grad after two backward() of sum(3x): 3 + 3",
                 wrong={ENGINE_GRAD_OVERWRITTEN: np.full(4, 3.0)})


@scenario
def engine_two_graphs_accumulate(ad):
    x = ad.Tensor(np.arange(4.0), requires_grad=True)
    a = (3 * x).sum()
    b = (2 * x).sum()            # made before a.backward(), which must leave it alone
    first = attempt(lambda: a.backward())
    after_first = plain(x.grad)
    second = attempt(lambda: b.backward())    # a separate graph: .grad adds up
    return {"first": first, "after_first": after_first, "second": second, "x_grad": plain(x.grad)}


@engine_two_graphs_accumulate.check
def _(got):
    expect_none(got["first"], what="a.backward() (the error it raised)", wrong={ENGINE_ORDER: raised_a("KeyError")})
    expect_none(got["second"], what="b.backward() after a.backward() (the error it raised)",
                wrong={ENGINE_FREES_UNREACHED: raised_with("second time")})
    expect_close(got["after_first"], np.full(4, 3.0), what="x.grad after backward() of sum(3x)")
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
    def chain():                     # one path, each tensor reached once
        x = ad.Tensor(2.0, requires_grad=True)
        (2 * (3 * x)).backward()
        return x.grad
    return {"chain": plain(attempt(chain)), "diamond": plain(attempt(diamond)), "double_add": plain(attempt(double_add))}


@engine_diamond_and_double_add.check
def _(got):
    # PyTorch 2.13.0 (VERIFIED.md): 21 and 4. The diamond comes first: only once it is right (paths through
    # different operations add up, the order is right) does the double add tell deduplicated inputs and a
    # missing visited set apart from the rest.
    expect_close(got["chain"], 6.0, what="d(2 * 3x)/dx at x = 2", wrong={ENGINE_ORDER: raised_a("KeyError")})
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
                 wrong={ENGINE_NO_UNBROADCAST: np.broadcast_to(w + 1, (3, 4))})
    expect_close(got["w_grad"], np.full(4, x.sum()), what="w.grad (summed back to shape (4,))",
                 wrong={ENGINE_NO_UNBROADCAST: np.broadcast_to(x, (3, 4))})


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
