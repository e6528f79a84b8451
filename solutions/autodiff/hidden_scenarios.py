"""Hidden scenarios of the autodiff assignment (instructor grading only; never copied to exercises/).

The rest of the contract, beyond the public scenarios, and randomized variants of the D2L programs whose
inputs the grader draws from the run's seed (`inputs=`), so a submission that hard-codes [0, 1, 4, 9] fails.
Expected values are closed forms computed here from the inputs, never from the submission. Each task is
scored on its own code, as the public file's doc says: every task scenario runs a control first (the same
program with the task's function replaced by a stand-in made of the engine alone: `ad.Tensor(y.data)` for
Task 1, the engine's own reader of the records for Task 2), and checks a result for what it is (its exact
type, its values against the values the same run read); engine scenarios use neither task.
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

# The sentences are the public scenarios' (exercises/autodiff/scenarios.py) where the misconception is the same:
# one text per misconception, which tests/test_assignment_content.py holds to (this file cannot import that one).
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


TAPE_FREED_BACKWARD = ("releasing the tape freed the records backward() needs; a tape releases only its own "
                       "list of records")
TAPE_TOUCHED_GRAD = "tape.gradient() wrote into .grad; it must neither read nor change .grad"
RECORDS_REVERSED = ("the tape handed out its records in the wrong order: gradient() walks them from the last back, "
                    "so they must come in the order they were recorded (x reached directly and through y lost a path)")
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


def _random_x(rng):
    """A random shape of 0, 1 or 2 axes (1 to 4 long) and values in [-2, 2]."""
    shape = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(0, 3))))
    return {"x": np.asarray(rng.uniform(-2.0, 2.0, size=shape))}


# =============================================================== Task 1: detach and stop_gradient
# Every program runs its control first (and stops there when the engine alone fails), then yours, then the control
# again; the checks look at both controls before yours.

@scenario
def detached_gets_no_grad(ad):
    def run(detach):
        x = ad.Tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x.exp()
        u = detach(y)
        seen = [type(u) is ad.Tensor, isinstance(u, ad.Tensor), type(u).__name__, plain(u), plain(y)]
        error = attempt(lambda: (u * x).sum().backward())
        return {"u": seen, "error": error, "x_grad": plain(x.grad), "u_grad": plain(attempt(lambda: u.grad))}

    control = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(lambda y: y.detach()))
    again = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@detached_gets_no_grad.check
def _(got):
    x = np.array([0.5, -1.0, 2.0])
    runs = controls(got)
    for control in runs:
        expect_control(control["x_grad"], np.exp(x), what="x.grad after (u * x).sum().backward()",
                       misconception=ENGINE_BREAKS_CONTROL)
        expect_control(control["u_grad"], None, what="u.grad", misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    expect_detached(mine["u"], np.exp(x), what="u = x.exp().detach()", controls=[c["u"] for c in runs])
    expect_close(mine["x_grad"], np.exp(x), what="x.grad after (u * x).sum().backward() (= u)",
                 wrong={DETACH_KEPT_HISTORY: np.exp(x) + x * np.exp(x)})
    expect_none(mine["u_grad"], what="u.grad after (u * x).sum().backward()", wrong={DETACH_REQUIRES_GRAD: x})


@scenario
def backward_of_detached_raises(ad):
    def run(detach):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        y = x - 1.0
        u = detach(y)
        seen = [type(u) is ad.Tensor, isinstance(u, ad.Tensor), type(u).__name__, plain(u), plain(y)]
        error = attempt(lambda: u.sum().backward())
        return {"u": seen, "error": error, "u_flags": plain(attempt(lambda: [u.requires_grad, u.is_leaf])),
                "x_grad": plain(x.grad)}

    control = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(lambda y: y.detach()))
    again = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@backward_of_detached_raises.check
def _(got):
    runs = controls(got)
    for control in runs:
        expect_control(control["error"], Raised("RuntimeError", "does not require grad"), what="u.sum().backward()",
                       misconception=ENGINE_BREAKS_CONTROL, wrong={ENGINE_NO_REQUIRES_GRAD_CHECK: None})
        expect_control(control["u_flags"], [False, True], what="[u.requires_grad, u.is_leaf]",
                       misconception=ENGINE_BREAKS_CONTROL)
        expect_control(control["x_grad"], None, what="x.grad after u.sum().backward()", misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    expect_detached(mine["u"], np.arange(4.0) - 1, what="u = (x - 1).detach()", controls=[c["u"] for c in runs])
    expect_none(mine["x_grad"], what="x.grad after u.sum().backward()", wrong={DETACH_KEPT_HISTORY: lambda g: True})
    expect_equal(mine["u_flags"], [False, True], what="[u.requires_grad, u.is_leaf]",
                 wrong={DETACH_NOT_LEAF: lambda g: g[1] is False, DETACH_REQUIRES_GRAD: [True, True]})
    expect_raised(mine["error"], "RuntimeError", containing="does not require grad",
                  what="u.sum().backward() for u = (x - 1).detach()")


@scenario
def x_times_detached_x(ad):
    def run(detach):
        x = ad.Tensor([[1.0, 2.0], [-1.0, 0.5]], requires_grad=True)
        c = detach(x)
        seen = [type(c) is ad.Tensor, isinstance(c, ad.Tensor), type(c).__name__, plain(c), plain(x)]

        def grad():
            (x * c).sum().backward()
            return x.grad
        return {"c": seen, "x_grad": plain(attempt(grad))}

    control = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(lambda t: t.detach()))
    again = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@x_times_detached_x.check
def _(got):
    x = np.array([[1.0, 2.0], [-1.0, 0.5]])
    runs = controls(got)
    for control in runs:
        expect_control(control["x_grad"], x, what="x.grad of sum(x * c)", misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    expect_detached(mine["c"], x, what="c = x.detach()", controls=[c["c"] for c in runs])
    expect_close(mine["x_grad"], x, what="x.grad of sum(x * x.detach())", wrong={DETACH_KEPT_HISTORY: 2 * x})


@scenario
def detach_of_leaf_keeps_leaf(ad):
    def run(detach):
        x = ad.Tensor([2.0, -1.0, 0.5], requires_grad=True)
        c = detach(x)
        seen = [type(c) is ad.Tensor, isinstance(c, ad.Tensor), type(c).__name__, plain(c), plain(x)]
        flags = plain(attempt(lambda: [x.requires_grad, x.is_leaf, c.requires_grad]))

        def grad():
            (x * x).sum().backward()
            return x.grad
        return {"c": seen, "flags": flags, "x_grad": plain(attempt(grad))}

    control = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(lambda t: t.detach()))
    again = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@detach_of_leaf_keeps_leaf.check
def _(got):
    x = np.array([2.0, -1.0, 0.5])
    runs = controls(got)
    for control in runs:
        expect_control(control["flags"], [True, True, False], what="[x.requires_grad, x.is_leaf, c.requires_grad]",
                       misconception=ENGINE_BREAKS_CONTROL)
        expect_control(control["x_grad"], 2 * x, what="x.grad of sum(x*x)", misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    expect_detached(mine["c"], x, what="c = x.detach()", controls=[c["c"] for c in runs])
    expect_equal(mine["flags"], [True, True, False], what="[x.requires_grad, x.is_leaf, x.detach().requires_grad]",
                 wrong={DETACH_CHANGED_FLAG: lambda g: g[0] is False, DETACH_REQUIRES_GRAD: [True, True, True]})
    expect_close(mine["x_grad"], 2 * x, what="x.grad of sum(x*x) after x.detach()")


@scenario
def detached_requires_grad_is_new_leaf(ad):
    def run(detach):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        y = x * 3.0
        u = detach(y)
        seen = [type(u) is ad.Tensor, isinstance(u, ad.Tensor), type(u).__name__, plain(u), plain(y)]
        attempt(lambda: u.requires_grad_())   # a new leaf of its own
        error = attempt(lambda: (u * u).sum().backward())
        return {"u": seen, "u_is_leaf": plain(attempt(lambda: u.is_leaf)),
                "error": error, "u_grad": plain(attempt(lambda: u.grad)), "x_grad": plain(x.grad)}

    control = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(lambda y: y.detach()))
    again = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@detached_requires_grad_is_new_leaf.check
def _(got):
    x = np.arange(4.0)
    runs = controls(got)
    for control in runs:
        expect_control(control["u_is_leaf"], True, what="u.is_leaf", misconception=ENGINE_BREAKS_CONTROL)
        expect_control(control["x_grad"], None, what="x.grad", misconception=ENGINE_BREAKS_CONTROL)
        expect_control(control["u_grad"], 6 * x, what="u.grad (d/du of sum(u*u) = 2u)", misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    expect_detached(mine["u"], 3 * x, what="u = (x * 3).detach()", controls=[c["u"] for c in runs])
    expect_equal(mine["u_is_leaf"], True, what="u.is_leaf", wrong={DETACH_NOT_LEAF: False})
    expect_none(mine["x_grad"], what="x.grad (nothing flows through u to x)",
                wrong={DETACH_KEPT_HISTORY: lambda g: g is not None})
    expect_close(mine["u_grad"], 6 * x, what="u.grad (d/du of sum(u*u) = 2u)")


@scenario
def stop_gradient_in_backward(ad):
    def run(stop):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        y = x * x + 1.0
        s = stop(y)
        seen = [type(s) is ad.Tensor, isinstance(s, ad.Tensor), type(s).__name__, plain(s), plain(y)]

        def grad():
            (s * x).sum().backward()
            return x.grad
        return {"s": seen, "s_flags": plain(attempt(lambda: [s.requires_grad, s.is_leaf])),
                "x_grad": plain(attempt(grad))}

    control = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(control, Exception):
        return {"control": control}
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


@stop_gradient_in_backward.check
def _(got):
    x = np.arange(4.0)
    runs = controls(got)
    for control in runs:
        expect_control(control["s_flags"], [False, True], what="[s.requires_grad, s.is_leaf]",
                       misconception=ENGINE_BREAKS_CONTROL)
        expect_control(control["x_grad"], x * x + 1, what="x.grad of sum(s * x)", misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    blame = blamed(mine["detach"])
    expect_detached(mine["s"], x * x + 1, what="s = stop_gradient(x*x + 1)", controls=[c["s"] for c in runs],
                    not_tensor=blame["not_tensor"], other_class=blame["other_class"])
    expect_close(mine["x_grad"], x * x + 1, what="x.grad of sum(stop_gradient(x*x + 1) * x)",
                 wrong={blame["leaks"]: 3 * x * x + 1})
    expect_equal(mine["s_flags"], [False, True], what="[s.requires_grad, s.is_leaf] for s = stop_gradient(x*x + 1)",
                 wrong={blame["not_leaf"]: [True, True]})


@scenario
def stop_gradient_nested_tapes(ad):
    def run(stop):
        x = ad.Tensor([1.5, -0.5, 2.0])
        w = ad.Tensor(np.ones(3))    # watched by the outer tape, never used: its answer for "no path"

        def fresh():             # a tape with the engine's own reader of the records (Task 2 is not graded here)
            tape = ad.GradientTape()
            tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            return tape

        with fresh() as outer:
            outer.watch([x, w])
            with fresh() as inner:
                inner.watch(x)
                v = x * x
                s = stop(v)
                y = s * x
                dy_dx = attempt(lambda: inner.gradient(y, x))   # = x², a constant for the outer tape too
            d2y = plain(attempt(lambda: outer.gradient(dy_dx, [x, w])))
        return {"s": [type(s) is ad.Tensor, isinstance(s, ad.Tensor), type(s).__name__, plain(s), plain(v)], "dy_dx": plain(dy_dx), "d2y": d2y}

    control = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(control, Exception):
        return {"control": control}
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


@stop_gradient_nested_tapes.check
def _(got):
    x = np.array([1.5, -0.5, 2.0])
    runs = controls(got)
    for control in runs:
        expect_control(control["dy_dx"], x * x, what="inner.gradient(s * x, x)", misconception=ENGINE_BREAKS_CONTROL)
        pair = control["d2y"]
        expect_control(pair[0] if isinstance(pair, list) else pair, None, what="outer d/dx of that",
                       misconception=ENGINE_BREAKS_CONTROL, wrong={ENGINE_UNCONNECTED_ZEROS: is_zeros})
    mine = got["mine"]
    blame = blamed(mine["detach"])
    expect_detached(mine["s"], x * x, what="s = stop_gradient(x*x)", controls=[c["s"] for c in runs],
                    not_tensor=blame["not_tensor"], other_class=blame["other_class"])
    expect_close(mine["dy_dx"], x * x, what="inner.gradient(stop_gradient(x*x) * x, x)",
                 wrong={blame["leaks"]: 3 * x * x})
    pair = mine["d2y"]
    expect(isinstance(pair, list) and len(pair) == 2, what="outer.gradient(that, [x, w])",
           expected="a list of two gradients", got=pair)
    gx, gw = pair
    if gw is None:
        expect_none(gx, what="outer d/dx of inner.gradient(stop_gradient(x*x) * x, x)",
                    wrong={blame["leaks"]: 6 * x, SG_ZERO_RULE: is_zeros})
    else:
        expect(same(gx, gw), what="outer d/dx of inner.gradient(stop_gradient(x*x) * x, x)", got=gx,
               expected=f"{describe(gw)}, what the outer tape gives for a watched source it never used")


@scenario(inputs=_random_x)
def random_d2l_detach(ad, x):
    def run(detach):
        xt = ad.Tensor(x, requires_grad=True)
        y = xt * xt
        u = detach(y)
        seen = [type(u) is ad.Tensor, isinstance(u, ad.Tensor), type(u).__name__, plain(u), plain(y)]

        def dz_dx():
            (u * xt).sum().backward()
            return xt.grad

        first = plain(attempt(dz_dx))
        xt.grad = None

        def dy_dx():
            y.sum().backward()
            return xt.grad
        return {"u": seen, "dz_dx": first, "dy_dx": plain(attempt(dy_dx))}

    control = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(lambda y: y.detach()))
    again = attempt(lambda: run(lambda y: ad.Tensor(y.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@random_d2l_detach.check
def _(got, x):
    runs = controls(got)
    for control in runs:
        expect_control(control["dz_dx"], x * x, what="x.grad after sum(u * x).backward()", misconception=ENGINE_BREAKS_CONTROL)
        expect_control(control["dy_dx"], 2 * x, what="x.grad after y.sum().backward()", misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    expect_detached(mine["u"], x * x, what=f"u = y.detach(), y = x*x of shape {x.shape}", controls=[c["u"] for c in runs])
    expect_close(mine["dz_dx"], x * x, what="x.grad after sum(detach(x*x) * x).backward()",
                 wrong={DETACH_KEPT_HISTORY: 3 * x * x})
    expect_close(mine["dy_dx"], 2 * x, what="x.grad after y.sum().backward()")


@scenario(inputs=lambda rng: {**_random_x(rng), "c": float(rng.uniform(0.5, 3.0))})
def random_stop_gradient_mix(ad, x, c):
    def run(stop):
        b = ad.Tensor(x)
        with ad.GradientTape() as tape:
            tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))   # Task 2 is not graded here
            tape.watch(b)
            v = b * b
            s = stop(v)
            dz_db = plain(attempt(lambda: tape.gradient(s * b + c * b * b, b)))   # only c*b*b carries a gradient via b*b
        return {"s": [type(s) is ad.Tensor, isinstance(s, ad.Tensor), type(s).__name__, plain(s), plain(v)], "dz_db": dz_db}

    control = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(ad.stop_gradient))
    again = attempt(lambda: run(lambda t: ad.Tensor(t.data)))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    if not isinstance(mine, Exception):
        r = ad.Tensor([1.0, 2.0], requires_grad=True)
        d = attempt(lambda: (r * r).detach())   # your detach of the same kind of tensor: when it goes wrong too, the cause is there
        mine["detach"] = [type(d) is ad.Tensor, type(d).__name__, plain(attempt(lambda: d.is_leaf)),
                          plain(attempt(lambda: d.requires_grad))]
    return {"control": control, "mine": mine, "again": again}


@random_stop_gradient_mix.check
def _(got, x, c):
    runs = controls(got)
    for control in runs:
        expect_control(control["dz_db"], x * x + 2 * c * x, what="tape.gradient(s*b + c*b*b, b)",
                       misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    blame = blamed(mine["detach"])
    expect_detached(mine["s"], x * x, what=f"s = stop_gradient(b*b), b of shape {x.shape}", controls=[c["s"] for c in runs],
                    not_tensor=blame["not_tensor"], other_class=blame["other_class"])
    expect_close(mine["dz_db"], x * x + 2 * c * x, what="tape.gradient(stop_gradient(b*b)*b + c*b*b, b)",
                 wrong={blame["leaks"]: 3 * x * x + 2 * c * x})


# =============================================================== Task 2: persistent GradientTape
# Every program runs with the engine's own reader of the records in each tape (the control, which answers as a
# persistent tape would) first, then with yours, then the control again.

@scenario
def tf_docs_persistent(ad):
    def run(own_reader):
        x = ad.Tensor(3.0)
        with ad.GradientTape(persistent=True) as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch(x)
            y = x * x
            z = y * y
        return {"states": [state], "calls": [plain(attempt(lambda: tape.gradient(t, x))) for t in (z, y, z)]}

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(False))
    if not isinstance(mine, Exception) and isinstance(mine["calls"][0], NotImplementedError):
        raise mine["calls"][0]
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@tf_docs_persistent.check
def _(got):
    # TensorFlow GradientTape guide (persistent example) and tensorflow 2.21.0 (VERIFIED.md): 108, 6, 108
    for control in controls(got):
        expect_tape_state(control["states"], [True], what="the")
        expect_tape_control(control["calls"], (108.0, 6.0, 108.0), what="dz/dx, dy/dx, dz/dx at 3")
    first, second, third = got["mine"]["calls"]
    expect_close(first, 108.0, what="dz/dx at 3", wrong={RAISES_ON_FIRST_CALL: raised_with("non-persistent")})
    expect_close(second, 6.0, what="then dy/dx", wrong={PERSISTENT_RELEASED: raised_with("non-persistent")})
    expect_close(third, 108.0, what="then dz/dx again", wrong={PERSISTENT_RELEASED: raised_with("non-persistent")})


@scenario
def nested_tapes_x_cubed(ad):
    def run(own_reader):
        def tape(persistent):
            made = ad.GradientTape(persistent=persistent)
            if own_reader:
                made._take_records_for_call = lambda: (list(made._records), set(made._tracked))
            return made

        x = ad.Tensor(3.0)
        with tape(True) as outer:            # persistent: asked twice
            outer.watch(x)
            with tape(False) as inner:       # non-persistent: asked once
                inner.watch(x)
                y = x * x * x
            # each tape's own state, read once both exist (the engine sets it up per tape)
            states = [plain(attempt(lambda: [t._persistent, t._released])) for t in (outer, inner)]
            dy_dx = attempt(lambda: inner.gradient(y, x))      # made while outer records: outer sees it
        second = [plain(attempt(lambda: outer.gradient(dy_dx, x))) for _ in range(2)]   # the outer tape's own calls
        return {"states": states, "calls": [plain(dy_dx), *second]}

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(False))
    if not isinstance(mine, Exception) and isinstance(mine["calls"][0], NotImplementedError):
        raise mine["calls"][0]
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@nested_tapes_x_cubed.check
def _(got):
    # tensorflow 2.21.0 (VERIFIED.md): 27 and 18
    for control in controls(got):
        expect_tape_state(control["states"], [True, False], what="each")
        expect_tape_control(control["calls"], (27.0, 18.0, 18.0), what="inner dy/dx, outer d²y/dx² (twice) of x³ at 3")
    first, second, third = got["mine"]["calls"]
    expect_close(first, 27.0, what="inner dy/dx of x³ at 3", wrong={RAISES_ON_FIRST_CALL: raised_with("non-persistent")})
    expect_close(second, 18.0, what="outer d²y/dx² at 3 (the outer tape's own first call)",
                 wrong={TAPE_STATE_SHARED: raised_with("non-persistent")})
    expect_close(third, 18.0, what="outer d²y/dx² again (the outer tape is persistent)",
                 wrong={PERSISTENT_RELEASED: raised_with("non-persistent")})


@scenario
def persistent_calls_independent(ad):
    def run(own_reader):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        with ad.GradientTape(persistent=True) as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch(x)
            y = x * 3.0
            z = y * x                 # x reached directly and through y: only walking back from z adds both up
        return {"states": [state], "calls": [plain(attempt(lambda: tape.gradient(z, x))) for _ in range(3)],
                "x_grad": plain(x.grad)}

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(False))
    if not isinstance(mine, Exception) and isinstance(mine["calls"][0], NotImplementedError):
        raise mine["calls"][0]
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@persistent_calls_independent.check
def _(got):
    x = np.arange(4.0)
    for control in controls(got):
        expect_tape_state(control["states"], [True], what="the")
        expect_tape_control(control["calls"], [6 * x] * 3, what="tape.gradient(z, x) for z = (3x) * x")
        expect_control(control["x_grad"], None, what="x.grad after tape.gradient() calls",
                       misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    for n, g in enumerate(mine["calls"], 1):
        expect_close(g, 6 * x, what=f"call {n} of tape.gradient(z, x) on a persistent tape, z = (3x) * x",
                     wrong={RAISES_ON_FIRST_CALL if n == 1 else PERSISTENT_RELEASED: raised_with("non-persistent"),
                            RECORDS_REVERSED: 3 * x})
    expect_none(mine["x_grad"], what="x.grad after tape.gradient() calls", wrong={TAPE_TOUCHED_GRAD: lambda g: True})


@scenario
def tape_leaves_backward_alone(ad):
    def run(own_reader):
        c = ad.Tensor([1.0, -2.0, 0.5, 3.0])

        def backward_of(y, x):       # y.sum().backward(), then x.grad (or the error it raised)
            def grad():
                y.sum().backward()
                return x.grad
            return plain(attempt(grad))

        x0 = ad.Tensor(np.arange(4.0), requires_grad=True)
        untaped = backward_of(x0 * c, x0)           # the same graph, never taped: what backward() gives here
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        with ad.GradientTape() as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch(x)
            y = x * c
        g = tape.gradient(y, x)                     # the tape's one call: it releases its records
        return {"states": [state], "untaped": untaped, "tape": plain(g), "grad_before": plain(x.grad),
                "after": backward_of(y, x)}

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(False))
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@tape_leaves_backward_alone.check
def _(got):
    c = np.array([1.0, -2.0, 0.5, 3.0])
    for control in controls(got):
        expect_tape_state(control["states"], [False], what="the")
        expect_control(control["untaped"], c, what="y.sum().backward() of y = x * c never taped, then x.grad",
                       misconception=ENGINE_BREAKS_CONTROL)
        expect_tape_control([control["tape"]], (c,), what="tape.gradient(y, x) for y = x * c")
        expect_control(control["grad_before"], None, what="x.grad after tape.gradient()", misconception=ENGINE_BREAKS_CONTROL)
        expect_control(control["after"], c, what="y.sum().backward() after the tape's call, then x.grad",
                       misconception=ENGINE_BREAKS_CONTROL)
    mine = got["mine"]
    expect_close(mine["tape"], c, what="tape.gradient(y, x) for y = x * c")
    expect_none(mine["grad_before"], what="x.grad after tape.gradient()", wrong={TAPE_TOUCHED_GRAD: lambda g: True})
    expect_close(mine["after"], c, what="y.sum().backward() after the tape's call, then x.grad",
                 wrong={TAPE_FREED_BACKWARD: raised_with("second time")})


@scenario
def non_persistent_same_target_raises(ad):
    def run(own_reader):
        x = ad.Tensor(np.arange(4.0))
        with ad.GradientTape() as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch(x)
            y = x * x
        # the very same call three times: still only one allowed
        return {"states": [state], "calls": [plain(attempt(lambda: tape.gradient(y, x))) for _ in range(3)]}

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(False))
    if not isinstance(mine, Exception) and isinstance(mine["calls"][0], NotImplementedError):
        raise mine["calls"][0]
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@non_persistent_same_target_raises.check
def _(got):
    x = np.arange(4.0)
    for control in controls(got):
        expect_tape_state(control["states"], [False], what="the")
        expect_tape_control(control["calls"], (2 * x,) * 3, what="tape.gradient(y, x)")
    first, second, third = got["mine"]["calls"]
    expect_close(first, 2 * x, what="first tape.gradient(y, x)", wrong={RAISES_ON_FIRST_CALL: raised_with("non-persistent")})
    used_up = raised_with("non-persistent")
    expect_raised(second, "RuntimeError", containing="non-persistent GradientTape",
                  what="second tape.gradient(y, x)",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None,
                         ONE_CALL_TOO_MANY: lambda g: matches(g, 2 * x) and matches(third, used_up),
                         KEPT_RECORDS: lambda g: matches(g, 2 * x) and not matches(third, used_up),
                         SECOND_CALL_WRONG_ERROR: lambda g: isinstance(g, Raised) and not g.is_a("RuntimeError")})


@scenario
def tuple_call_then_raises(ad):
    def run(own_reader, sources):
        x = ad.Tensor(np.arange(4.0))
        w = ad.Tensor([1.0, -2.0, 0.5, 3.0])
        with ad.GradientTape() as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch((x, w))
            z = x * w
        grads = attempt(lambda: tape.gradient(z, (x, w) if sources == "tuple" else x))   # one call, a tuple of sources
        if isinstance(grads, NotImplementedError):
            raise grads                                      # the task is not done yet
        later = [plain(attempt(lambda: tape.gradient(z, x))) for _ in range(2)]   # that was the one call
        return {"states": [state], "type": type(grads).__name__, "grads": plain(grads), "later": later}

    control = attempt(lambda: run(True, "tuple"))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(False, "tuple"))   # first: then one source on another tape tells a first call refused
    one = attempt(lambda: run(False, "one")["grads"])
    again = attempt(lambda: run(True, "tuple"))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "one": one, "again": again}


@tuple_call_then_raises.check
def _(got):
    x, w = np.arange(4.0), np.array([1.0, -2.0, 0.5, 3.0])
    for control in controls(got):
        expect_tape_state(control["states"], [False], what="the")
        expect_control(control["type"], "tuple", what="type of tape.gradient(z, (x, w))",
                       misconception=ENGINE_BREAKS_CONTROL)
        expect_tape_control(control["grads"], (w, x), what="tape.gradient(z, (x, w))")
        expect_tape_control(control["later"], (w, w), what="tape.gradient(z, x) after it", start=2)
    mine, first_raises = got["mine"], matches(got["one"], raised_with("non-persistent"))
    grads = mine["grads"]
    used_up = raised_with("non-persistent")
    if isinstance(grads, Raised):
        expect_none(grads, what="tape.gradient(z, (x, w)) (the error it raised)",
                    wrong={LIST_IS_MANY_CALLS: lambda g: not first_raises and matches(g, used_up),
                           RAISES_ON_FIRST_CALL: lambda g: first_raises and matches(g, used_up)})
    expect_equal(mine["type"], "tuple", what="type of tape.gradient(z, (x, w))")
    expect(len(grads) == 2, what="number of gradients", expected="2", got=grads)
    expect_close(grads[0], w, what="dz/dx")
    expect_close(grads[1], x, what="dz/dw")
    second, third = mine["later"]
    expect_raised(second, "RuntimeError", containing="non-persistent GradientTape",
                  what="a second call after the tuple call",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None,
                         ONE_CALL_TOO_MANY: lambda g: matches(g, w) and matches(third, used_up),
                         KEPT_RECORDS: lambda g: matches(g, w) and not matches(third, used_up),
                         SECOND_CALL_WRONG_ERROR: lambda g: isinstance(g, Raised) and not g.is_a("RuntimeError")})


@scenario(inputs=_random_x)
def random_persistent_tape(ad, x):
    def run(own_reader):
        xt = ad.Tensor(x)
        with ad.GradientTape(persistent=True) as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch(xt)
            y = xt * xt
            z = ad.Tensor(y.data) * xt      # a constant made by hand (Task 1 is not graded here)
        return {"states": [state], "calls": [plain(attempt(lambda: tape.gradient(t, xt))) for t in (z, y, z)]}

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(False))
    if not isinstance(mine, Exception) and isinstance(mine["calls"][0], NotImplementedError):
        raise mine["calls"][0]
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@random_persistent_tape.check
def _(got, x):
    for control in controls(got):
        expect_tape_state(control["states"], [True], what="the")
        expect_tape_control(control["calls"], (x * x, 2 * x, x * x), what=f"dz/dx, dy/dx, dz/dx for x of shape {x.shape}")
    first, second, third = got["mine"]["calls"]
    expect_close(first, x * x, what="dz/dx", wrong={RAISES_ON_FIRST_CALL: raised_with("non-persistent")})
    expect_close(second, 2 * x, what="then dy/dx", wrong={PERSISTENT_RELEASED: raised_with("non-persistent")})
    expect_close(third, x * x, what="then dz/dx again", wrong={PERSISTENT_RELEASED: raised_with("non-persistent")})


@scenario(inputs=_random_x)
def random_non_persistent(ad, x):
    def run(own_reader):
        xt = ad.Tensor(x)
        with ad.GradientTape() as tape:
            state = plain(attempt(lambda: [tape._persistent, tape._released]))
            if own_reader:
                tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
            tape.watch(xt)
            y = xt * xt
            z = y * xt
            q = z + y
        return {"states": [state], "calls": [plain(attempt(lambda: tape.gradient(t, xt))) for t in (z, y, q, z)]}

    control = attempt(lambda: run(True))
    if isinstance(control, Exception):
        return {"control": control}
    mine = attempt(lambda: run(False))
    if not isinstance(mine, Exception) and isinstance(mine["calls"][0], NotImplementedError):
        raise mine["calls"][0]
    again = attempt(lambda: run(True))
    if isinstance(mine, Exception) and not isinstance(again, Exception):
        raise mine                    # your code raised (the engine alone still runs): its error and traceback
    return {"control": control, "mine": mine, "again": again}


@random_non_persistent.check
def _(got, x):
    for control in controls(got):
        expect_tape_state(control["states"], [False], what="the")
        expect_tape_control(control["calls"], (3 * x * x, 2 * x, 3 * x * x + 2 * x, 3 * x * x),
                            what=f"the calls, x of shape {x.shape}")
    first, second, third, fourth = got["mine"]["calls"]
    expect_close(first, 3 * x * x, what="first tape.gradient(z, x)",
                 wrong={RAISES_ON_FIRST_CALL: raised_with("non-persistent")})
    used_up = raised_with("non-persistent")
    expect_raised(second, "RuntimeError", containing="non-persistent GradientTape", what="second call tape.gradient(y, x)",
                  wrong={SECOND_CALL_ZEROS: is_zeros, SECOND_CALL_NONE: None,
                         TARGET_SEEN: lambda g: matches(g, 2 * x) and not matches(third, used_up) and matches(fourth, used_up),
                         ONE_CALL_TOO_MANY: lambda g: matches(g, 2 * x) and matches(third, used_up),
                         KEPT_RECORDS: lambda g: matches(g, 2 * x) and not matches(fourth, used_up),
                         SECOND_CALL_WRONG_ERROR: lambda g: isinstance(g, Raised) and not g.is_a("RuntimeError")})
    for call, target in ((third, "q"), (fourth, "z")):
        expect_raised(call, "RuntimeError", containing="non-persistent GradientTape",
                      what=f"a later call tape.gradient({target}, x)")


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
            "compare_types": observe(lambda: [type(n < 4) is bool, type(ad.Tensor([1.0, 3.0]) < 2).__name__]),
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
    expect_equal(got["compare_types"], [True, "ndarray"],
                 what="[type(t < 4) is bool, type(Tensor([1, 3]) < 2)]: a plain bool for a 0-d tensor (not a numpy "
                      "bool), an array for another")
    expect_equal(got["b"], [True, False, False, True],
                 what="[b.requires_grad, b.is_leaf] for b = a*2 (a requires grad), then for Tensor([1, 2]) * 2")
    expect_equal(got["set"], [True, False, True, True],
                 what="a.requires_grad_(False) is a, a.requires_grad, a.requires_grad_() is a, a.requires_grad")
    expect_raised(got["non_leaf"], "RuntimeError", what="b.requires_grad_(False) on a non-leaf b",
                  wrong={ENGINE_REQUIRES_GRAD_NONLEAF: lambda g: not isinstance(g, Raised) and got["b_after"] is False})
    expect_equal(got["b_after"], True, what="b.requires_grad after the refused requires_grad_(False)")


@scenario
def engine_backward_contract(ad):
    def observe(action):
        return plain(attempt(action))

    x = ad.Tensor([1.0, 2.0, 4.0], requires_grad=True)
    constant = observe(lambda: ad.Tensor([1.0, 2.0]).sum().backward())           # requires_grad=False
    summed = observe(lambda: [(x * 3).sum().backward(), x.grad][1])               # a one-element one first
    x.grad = None
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
    return {"constant": constant, "summed": summed, "vector": vector, "vjp": vjp, "after_vjp": after_vjp, "reached": reached,
            "x_grad": plain(x.grad), "mean_grad": plain(mean.grad)}


@engine_backward_contract.check
def _(got):
    expect_raised(got["constant"], "RuntimeError", containing="does not require grad",
                  what="Tensor([1, 2]).sum().backward()", wrong={ENGINE_NO_REQUIRES_GRAD_CHECK: None})
    expect_raised(got["vector"], "RuntimeError", containing="only for scalar outputs",
                  what="(x * 3).backward() without a gradient (3 elements)",
                  wrong={ENGINE_NONSCALAR_IMPLICIT: lambda g: g is None and matches(got["summed"], np.full(3, 3.0))})
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
def engine_rules_in_chains(ad):
    def observe(action):
        return plain(attempt(action))

    def grad_of(make, start):             # d(make(a).sum())/da at a = start
        a = ad.Tensor(start, requires_grad=True)

        def grad():
            make(a).sum().backward()
            return a.grad
        return observe(grad)

    def accumulated(start):               # two passes into one leaf: 2a + 3
        a = ad.Tensor(start, requires_grad=True)

        def grad():
            (a * a).sum().backward()
            (a * 3.0).sum().backward()
            return a.grad
        return observe(grad)

    p = ad.Tensor([[1.0], [2.0]], requires_grad=True)   # (2, 1) against (2,): a stretched axis of length 2
    w = ad.Tensor([3.0, -1.0], requires_grad=True)
    observe(lambda: (p * w).sum().backward())
    x = ad.Tensor([1.0, 2.0, 4.0], requires_grad=True)
    return {"chain": grad_of(lambda a: (a ** 3) * 2.0 + a.exp() * 3.0, [1.0, 2.0, 0.5]),
            "norm_at_zero": grad_of(lambda a: a.norm(), np.zeros(3)),
            "norm_of_one": grad_of(lambda a: a.norm() * 2.0, [1.0, 0.0, 0.0]),
            "two_d": accumulated([[1.0, 2.0], [3.0, 4.0]]), "zero_d": accumulated(2.0),
            "broadcast": [plain(p.grad), plain(w.grad)],
            "wrong_shape": observe(lambda: (x * 3.0).backward(gradient=np.ones(2)))}


@engine_rules_in_chains.check
def _(got):
    a = np.array([1.0, 2.0, 0.5])
    expect_close(got["chain"], 6 * a ** 2 + 3 * np.exp(a), what="d/da of sum(2a³ + 3eᵃ): each rule times the gradient "
                 "it is given")
    expect_close(got["norm_at_zero"], np.zeros(3), what="d|a|/da at a = 0 (0, as in PyTorch)")
    expect_close(got["norm_of_one"], np.array([2.0, 0.0, 0.0]), what="d(2|a|)/da at a = [1, 0, 0]")
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    expect_close(got["two_d"], 2 * m + 3, what="a.grad of a 2-D leaf after two passes (2a, then 3)")
    expect_close(got["zero_d"], 7.0, what="a.grad of a 0-d leaf after two passes (2a, then 3)")
    expect_close(got["broadcast"][0], np.full((2, 1), 2.0), what="p.grad for sum(p * w), p of shape (2, 1), w (2,)",
                 wrong={ENGINE_NO_UNBROADCAST: lambda g: np.shape(g) == (2, 2)})
    expect_close(got["broadcast"][1], np.full(2, 3.0), what="w.grad for sum(p * w)")
    expect_raised(got["wrong_shape"], "RuntimeError", what="(x * 3).backward(gradient=) with a gradient of another shape")


@scenario
def engine_tape_targets_and_nesting(ad):
    def fresh(**options):        # a tape with the engine's own reader of the records (Task 2 is not graded here)
        tape = ad.GradientTape(**options)
        tape._take_records_for_call = lambda: (list(tape._records), set(tape._tracked))
        return tape

    def observe(action):
        return plain(attempt(action))

    x = ad.Tensor([1.0, 2.0, 4.0])
    s = ad.Tensor(2.0)
    q = ad.Tensor(5.0)
    with fresh() as tape:
        tape.watch([x, s, q])
        total, mean = (x * x).sum(), (x * x).mean()
        got = {"sum": observe(lambda: tape.gradient(total, x)), "mean": observe(lambda: tape.gradient(mean, x)),
               "itself": observe(lambda: tape.gradient(s, s)),
               "zero": observe(lambda: tape.gradient(s * s, q, unconnected_gradients="zero")),
               "unknown": observe(lambda: tape.gradient(total, x, unconnected_gradients="bogus"))}
    v = ad.Tensor([1.0, -1.0, 2.0])
    r = ad.Tensor([0.5, 1.5, 2.0], requires_grad=True)
    with fresh() as outer:       # each tape watches what it was told to, and no more
        outer.watch(x)
        with fresh(watch_accessed_variables=False) as inner:
            inner.watch(v)
            z = x * v
            u = r * r
        got["nested"] = [observe(lambda: inner.gradient(z, v)), observe(lambda: outer.gradient(z, v)),
                         observe(lambda: outer.gradient(u, r)), observe(lambda: inner.gradient(u, r))]
        got["r_flag"] = observe(lambda: r.requires_grad)
    return got


@engine_tape_targets_and_nesting.check
def _(got):
    x, r = np.array([1.0, 2.0, 4.0]), np.array([0.5, 1.5, 2.0])
    expect_close(got["sum"], 2 * x, what="tape.gradient((x*x).sum(), x)")
    expect_close(got["mean"], 2 * x / 3, what="tape.gradient((x*x).mean(), x)")
    expect_close(got["itself"], 1.0, what="tape.gradient(s, s) for a watched 0-d s")
    expect_close(got["zero"], 0.0, what="tape.gradient(s*s, q, unconnected_gradients='zero') for a 0-d q never used")
    expect_raised(got["unknown"], "ValueError", what="tape.gradient(..., unconnected_gradients='bogus')")
    inner_v, outer_v, outer_r, inner_r = got["nested"]
    expect_close(inner_v, x, what="the inner tape's d(x*v)/dv (v watched by the inner tape)")
    expect_none(outer_v, what="the outer tape's d(x*v)/dv (v watched by the inner tape only)")
    expect_close(outer_r, 2 * r, what="the outer tape's d(r*r)/dr (r has requires_grad: watched on first use)",
                 wrong={ENGINE_NO_AUTO_WATCH: lambda g: g is None and got["r_flag"] is True})
    expect_none(inner_r, what="the inner tape's d(r*r)/dr (watch_accessed_variables=False, r not watched)")


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
        v_flag = plain(attempt(lambda: v.requires_grad))
    with fresh() as tape:
        tape.watch([x, q])
        z = x * w
        zero = plain(attempt(lambda: tape.gradient(z, (w, q), unconnected_gradients="zero")))
    with fresh() as tape:
        tape.watch(x)
        itself = plain(attempt(lambda: tape.gradient(x, x)))
    with fresh(watch_accessed_variables=False) as tape:
        manual = plain(attempt(lambda: tape.gradient(v * 3, v)))
    return {"every": every, "v_flag": v_flag, "zero": zero, "itself": itself, "manual": manual}


@engine_tape_records.check
def _(got):
    x, w = np.array([1.0, 2.0, 4.0]), np.array([2.0, 3.0, 5.0])
    every = got["every"]
    expect(isinstance(every, list) and len(every) == 5, what="tape.gradient(z, [x, w, v, q, y])",
           expected="a list of 5 gradients", got=every)
    expect_close(every[0], 2 * x * w, what="dz/dx for y = x*x, z = y*w + v*3 (x watched)")
    expect_close(every[2], np.full(3, 3.0), what="dz/dv (v has requires_grad=True: watched on its first use)",
                 wrong={ENGINE_NO_AUTO_WATCH: lambda g: g is None and got["v_flag"] is True})
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
        auto.watch(x)
        u = v * v + x * 2.0
        auto_grad = plain(attempt(lambda: auto.gradient(u, [v, x])))
        v_flag = plain(attempt(lambda: v.requires_grad))
    return {"reenter": reenter, "after": after, "auto": auto_grad, "v_flag": v_flag}


@engine_tape_scope.check
def _(got):
    x = np.arange(4.0)
    expect_raised(got["reenter"], "ValueError", what="entering a tape that is already recording")
    expect_none(got["after"], what="tape.gradient(z, x) for z computed after the with-block",
                wrong={ENGINE_UNCONNECTED_ZEROS: is_zeros})
    auto = got["auto"]
    expect(isinstance(auto, list) and len(auto) == 2, what="auto.gradient(v*v + 2x, [v, x])", expected="two gradients",
           got=auto)
    expect_close(auto[1], np.full(4, 2.0), what="d(v*v + 2x)/dx, x watched")
    expect_close(auto[0], 2 * x, what="d(v*v + 2x)/dv, v with requires_grad=True (watched on first use)",
                 wrong={ENGINE_NO_AUTO_WATCH: lambda g: g is None and got["v_flag"] is True})


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
                 wrong={ENGINE_NO_UNBROADCAST: np.broadcast_to(w, broadcast)})
    expect_close(got["w_grad"], np.full(w.shape, x.sum() - x.shape[0]), what=f"w.grad (shape {w.shape})",
                 wrong={ENGINE_NO_UNBROADCAST: np.broadcast_to(x - 1, broadcast)})


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
