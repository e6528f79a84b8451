"""A small reverse-mode automatic differentiation engine on numpy arrays.

You can ask for gradients in the styles of the two frameworks of the course text (D2L §2.5):

* PyTorch style: ``y.backward()`` adds dy/dx into ``x.grad`` for every leaf ``x`` with ``requires_grad=True``.
* TensorFlow style: ``with GradientTape() as tape: ...`` records operations; ``tape.gradient(y, x)`` returns dy/dx.

How it works. Every operation computes its value with numpy and builds its result through ``_make``, together
with a *vector-Jacobian product* ``vjp``: given ``g`` = d(out)/d(output), ``vjp(g)`` returns d(out)/d(input) for
each input. The vjp sits right beside the forward code and is written in Tensor operations, so a gradient
computation is itself made of operations that a tape can record (that is how nested tapes give second
derivatives). ``_make`` stores the vjp on the result for ``backward()`` and tells every recording tape about the
operation; each tape keeps its own list of records.

Your tasks (see README.md):
  Task 1  ``Tensor.detach`` and ``stop_gradient``
  Task 2  ``GradientTape._take_records_for_call``: persistent and non-persistent tapes
"""
import contextlib

import numpy as np

_recording_tapes = []    # tapes inside their `with` block, outermost first
_grad_mode = [True]      # False while backward() runs its vjps: they compute values only


@contextlib.contextmanager
def _no_grad():
    _grad_mode.append(False)
    try:
        yield
    finally:
        _grad_mode.pop()


def _as_tensor(x):
    return x if isinstance(x, Tensor) else Tensor(x)


def _make(data, inputs, vjp):
    """Build the result of an operation on `inputs`; `vjp` maps d/d(result) to a tuple of d/d(input)."""
    if not _grad_mode[-1]:
        return Tensor(data)
    out = Tensor(data, requires_grad=any(t.requires_grad for t in inputs))
    if out.requires_grad:        # a non-leaf remembers how it was made, for backward()
        out._inputs, out._vjp = inputs, vjp
    for tape in _recording_tapes:
        tape._record(out, inputs, vjp)
    return out


class Tensor:
    """An n-dimensional float64 array that can take part in differentiation."""

    __array_ufunc__ = None   # makes `ndarray * Tensor` call Tensor.__rmul__ instead of numpy's loop

    def __init__(self, data, requires_grad=False):
        self.data = np.array(data.data if isinstance(data, Tensor) else data, dtype=np.float64)
        self.requires_grad = bool(requires_grad)
        self.grad = None
        self._inputs = ()    # the tensors this one was computed from; empty for a leaf
        self._vjp = None     # its backward rule; None for a leaf, and once backward() has freed it

    @property
    def shape(self):
        return self.data.shape

    @property
    def is_leaf(self):
        return not self._inputs

    def __repr__(self):
        flag = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor({np.array2string(self.data, separator=', ')}{flag})"

    def requires_grad_(self, flag=True):
        """Set `requires_grad` of a leaf in place and return the tensor."""
        if not flag and not self.is_leaf:
            raise RuntimeError("you can only change requires_grad flags of leaf variables; use detach()")
        self.requires_grad = bool(flag)
        return self

    # ----- reading values (no gradient) -----

    def item(self):
        return float(self.data.item())

    def __float__(self):
        return self.item()

    def _compare(self, other, op):
        result = op(self.data, other.data if isinstance(other, Tensor) else other)
        return bool(result) if result.ndim == 0 else result

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    # ----- operations: forward value and backward rule side by side -----

    def __add__(self, other):
        other = _as_tensor(other)

        def vjp(g):   # d(a+b)/da = d(a+b)/db = 1
            return g._sum_to(self.shape), g._sum_to(other.shape)
        return _make(self.data + other.data, (self, other), vjp)

    def __sub__(self, other):
        other = _as_tensor(other)

        def vjp(g):   # d(a-b)/da = 1, d(a-b)/db = -1
            return g._sum_to(self.shape), (-g)._sum_to(other.shape)
        return _make(self.data - other.data, (self, other), vjp)

    def __mul__(self, other):
        other = _as_tensor(other)

        def vjp(g):   # d(ab)/da = b, d(ab)/db = a
            return (g * other)._sum_to(self.shape), (g * self)._sum_to(other.shape)
        return _make(self.data * other.data, (self, other), vjp)

    def __truediv__(self, other):
        other = _as_tensor(other)

        def vjp(g):   # d(a/b)/da = 1/b, d(a/b)/db = -a/b²
            return (g / other)._sum_to(self.shape), (-g * self / (other * other))._sum_to(other.shape)
        return _make(self.data / other.data, (self, other), vjp)

    def __neg__(self):
        return _make(-self.data, (self,), lambda g: (-g,))

    def __pow__(self, k):
        if isinstance(k, Tensor):
            raise TypeError("the exponent must be a number, not a Tensor")
        # d(a^k)/da = k a^(k-1)
        return _make(self.data ** k, (self,), lambda g: (g * k * self ** (k - 1),))

    def __radd__(self, other):
        return _as_tensor(other) + self

    def __rsub__(self, other):
        return _as_tensor(other) - self

    def __rmul__(self, other):
        return _as_tensor(other) * self

    def __rtruediv__(self, other):
        return _as_tensor(other) / self

    def sum(self):
        """Sum of all elements (0-d): each element gets the output's gradient."""
        return _make(self.data.sum(), (self,), lambda g: (g._broadcast_to(self.shape),))

    def mean(self):
        """Mean of all elements (0-d): each element gets 1/n of the output's gradient."""
        n = self.data.size
        return _make(self.data.mean(), (self,), lambda g: ((g / n)._broadcast_to(self.shape),))

    def exp(self):
        """Elementwise e^a; d(e^a)/da = e^a, the output itself."""
        out = _make(np.exp(self.data), (self,), lambda g: (g * out,))
        return out

    def log(self):
        """Elementwise natural log; d(ln a)/da = 1/a."""
        return _make(np.log(self.data), (self,), lambda g: (g / self,))

    def norm(self):
        """Euclidean norm of all elements (0-d); d|a|/da = a/|a| (0 at a = 0, as in PyTorch)."""
        def vjp(g):
            return (self * (g / out),) if out.data != 0 else (self * 0.0,)
        out = _make(np.sqrt(np.sum(self.data ** 2)), (self,), vjp)
        return out

    # Broadcasting copies an operand along some axes; its gradient is the sum of the copies' gradients.
    # These two operations undo each other, so each one is the other's backward rule.

    def _sum_to(self, shape):
        """Sum over the axes numpy broadcasting added or stretched, giving `shape`."""
        if self.shape == shape:
            return self
        lead = self.data.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and self.shape[lead + i] != 1)
        data = self.data.sum(axis=axes, keepdims=True).reshape(shape)
        return _make(data, (self,), lambda g: (g._broadcast_to(self.shape),))

    def _broadcast_to(self, shape):
        """Copy along new or length-1 axes, giving `shape`."""
        if self.shape == shape:
            return self
        return _make(np.broadcast_to(self.data, shape), (self,), lambda g: (g._sum_to(self.shape),))

    # ----- PyTorch style -----

    def backward(self, gradient=None, retain_graph=False):
        """Add d(self)/d(leaf) into `.grad` of every leaf with requires_grad=True that self depends on.

        `gradient` is d(out)/d(self) (default 1, only for one-element tensors). Unless `retain_graph`, the
        backward rules this pass uses are freed, and a later pass through them raises RuntimeError.
        """
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if gradient is None:
            if self.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            gradient = np.ones_like(self.data)
        gradient = Tensor(gradient)
        if gradient.shape != self.shape:
            raise RuntimeError(f"gradient has shape {gradient.shape}, expected {self.shape}")

        order = self._topological_order()
        grads = {self: gradient}       # d(self)/d(t) for each tensor t reached so far
        with _no_grad():
            for t in reversed(order):  # every tensor after all the tensors computed from it
                g = grads.pop(t)
                if t.is_leaf:
                    t.grad = g.data.copy() if t.grad is None else np.array(t.grad + g.data)
                    continue
                for x, gx in zip(t._inputs, t._vjp(g)):
                    if x.requires_grad:
                        grads[x] = grads[x] + gx if x in grads else gx
                if not retain_graph:
                    t._vjp = None

    def _topological_order(self):
        """The tensors self depends on through requires_grad, each after its inputs (each visited once)."""
        order, visited, stack = [], set(), [(self, False)]
        while stack:                   # depth-first, with an explicit stack so long chains don't recurse
            t, inputs_done = stack.pop()
            if inputs_done:
                order.append(t)
                continue
            if t in visited:
                continue
            visited.add(t)
            if not t.is_leaf and t._vjp is None:
                raise RuntimeError(
                    "Trying to backward through the graph a second time (or directly access saved tensors "
                    "after they have already been freed). Specify retain_graph=True if you need to backward "
                    "through the graph a second time.")
            stack.append((t, True))
            stack.extend((x, False) for x in t._inputs if x.requires_grad)
        return order

    def detach(self):
        """A new leaf with this tensor's values (and shape), requires_grad=False, no history and no .grad (None).

        No gradient flows through the result to anything this tensor was made from. This tensor itself, its
        requires_grad and its history stay as they are (D2L §2.5.3: y's own gradient survives detachment).
        """
        raise NotImplementedError("Task 1: implement Tensor.detach")


def stop_gradient(t):
    """A tensor equal in value to `t` through which no gradient flows, for backward() and for every tape.

    Like tf.stop_gradient and jax.lax.stop_gradient; the result is a leaf with requires_grad=False.
    """
    raise NotImplementedError("Task 1: implement stop_gradient")


class GradientTape:
    """Records operations inside its `with` block, to differentiate through them later (TensorFlow style)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._records = []        # (output, inputs, vjp) of every recorded operation, in the order they ran
        self._tracked = set()     # watched tensors and outputs of recorded operations
        self._recording = False
        self._released = False    # a non-persistent tape sets this once it has served its gradient() call

    def __enter__(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an "
                             "already-active tape.")
        self._recording = True
        _recording_tapes.append(self)
        return self

    def __exit__(self, *exc_info):
        _recording_tapes.remove(self)
        self._recording = False    # stop recording; what was recorded stays for gradient()

    def watch(self, tensor):
        """Differentiate with respect to `tensor` (or each tensor of a list or tuple)."""
        for t in tensor if isinstance(tensor, (list, tuple)) else [tensor]:
            self._tracked.add(t)

    def _record(self, out, inputs, vjp):
        """Called by _make for every operation while this tape records."""
        if self._watch_accessed_variables:   # trainable variables are watched on first use
            self._tracked.update(t for t in inputs if t.is_leaf and t.requires_grad)
        if any(t in self._tracked for t in inputs):
            self._records.append((out, inputs, vjp))
            self._tracked.add(out)

    def _take_records_for_call(self):
        """Hand one gradient() call what this tape recorded: the pair (records, tracked).

        A persistent tape hands them out on every call, unchanged. A non-persistent tape hands them out once
        and then releases them (drops its references); every later call raises RuntimeError("A non-persistent
        GradientTape can only be used to compute one set of gradients (or jacobians)").
        """
        raise NotImplementedError("Task 2: implement GradientTape._take_records_for_call")

    def gradient(self, target, sources, unconnected_gradients="none"):
        """d(sum of target)/d(source) through the operations this tape recorded, for each source.

        `sources` is a tensor (one result back) or a list/tuple of tensors (same container back). A source
        with no recorded path to `target` gets None, or zeros with unconnected_gradients="zero". Never
        reads or changes `.grad`. The computation is made of Tensor operations, so a tape that is recording
        while this runs records it (nested tapes give higher derivatives).
        """
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError(f"unconnected_gradients must be 'none' or 'zero', not {unconnected_gradients!r}")
        records, tracked = self._take_records_for_call()

        grads = {target: Tensor(np.ones_like(target.data))} if target in tracked else {}
        for out, inputs, vjp in reversed(records):   # recording order is a topological order
            if out not in grads:
                continue
            for x, gx in zip(inputs, vjp(grads[out])):
                if x in tracked:
                    grads[x] = grads[x] + gx if x in grads else gx

        def result(source):
            if source in grads:
                return grads[source]
            return Tensor(np.zeros_like(source.data)) if unconnected_gradients == "zero" else None
        if isinstance(sources, (list, tuple)):
            return type(sources)(result(s) for s in sources)
        return result(sources)
