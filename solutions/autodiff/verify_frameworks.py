"""Run the D2L programs of the autodiff exercise in real PyTorch, TensorFlow and the reference engine.

Run by hand (never by tests), each framework in its own throwaway environment:

    /tmp/torchenv/bin/python solutions/autodiff/verify_frameworks.py torch
    /tmp/tfenv/bin/python solutions/autodiff/verify_frameworks.py tensorflow
    python solutions/autodiff/verify_frameworks.py reference

and paste the output into VERIFIED.md.
"""
import sys
from pathlib import Path

import numpy as np


def show(label, value):
    if value is None:
        print(f"{label}: None")
    else:
        print(f"{label}: {np.round(np.asarray(value, dtype=float), 6).tolist()}")


def d2l_f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c


def pytorch_style(Tensor, version):
    """The PyTorch-style programs; `Tensor(data, requires_grad)` builds a tensor."""
    print(f"== PyTorch-style programs ({version})")
    x = Tensor(np.arange(4.0), True)
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    show("detach: x.grad after z.sum().backward() (expect u = x^2)", x.grad)
    x.grad = None
    y.sum().backward()
    show("detach: x.grad after y.sum().backward() (expect 2x)", x.grad)

    x = Tensor(np.arange(4.0), True)
    y = (3 * x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    show("retain_graph: 3x^2 backward twice (expect 12x)", x.grad)
    try:
        y.backward()
        print("third backward without retain_graph: no error")
    except RuntimeError as error:
        print(f"third backward: RuntimeError: {str(error)[:60]}...")

    x = Tensor(2.0, True)
    y = 3 * x
    c = 2 * y + 5 * y
    c.backward()
    show("diamond y=3x; c=2y+5y at 2 (expect 21)", x.grad)
    a = Tensor(1.0, True)
    b = a + a
    (b + b).backward()
    show("b=a+a; c=b+b (expect 4)", a.grad)

    np.random.seed(0)
    a = Tensor(np.random.randn(), True)
    show("control flow f(a): a", a.item())
    d = d2l_f(a)
    d.backward()
    show("control flow f(a): a.grad", a.grad)
    show("control flow f(a): d/a", d.item() / a.item())


def run_torch():
    import torch
    torch.set_default_dtype(torch.float64)

    def Tensor(data, requires_grad=False):
        return torch.tensor(data, dtype=torch.float64, requires_grad=requires_grad)
    pytorch_style(Tensor, f"torch {torch.__version__}")


def run_tensorflow():
    import tensorflow as tf
    print(f"== TensorFlow programs (tensorflow {tf.__version__})")
    x = tf.range(4, dtype=tf.float64)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        u = tf.stop_gradient(y)
        z = u * x
    show("persistent: gradient(z, x) (expect u = x^2)", t.gradient(z, x))
    show("persistent: gradient(y, x) (expect 2x)", t.gradient(y, x))
    show("persistent: gradient(z, x) again (expect x^2)", t.gradient(z, x))

    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
        z = tf.stop_gradient(y) * x
    show("non-persistent: first gradient(z, x)", t.gradient(z, x))
    try:
        t.gradient(y, x)
        print("non-persistent: second call: no error")
    except RuntimeError as error:
        print(f"non-persistent: second call: RuntimeError: {error}")

    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        s = tf.stop_gradient(x * x)
        w = s + x
    show("stop_gradient(x*x) (expect None)", t.gradient(s, x))
    show("stop_gradient(x*x) + x (expect ones)", t.gradient(w, x))
    show("stop_gradient(x*x), unconnected_gradients=zero",
         t.gradient(s, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))

    x = tf.constant(3.0, dtype=tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    show("nested: dy/dx of x^3 at 3 (expect 27)", dy_dx)
    show("nested: d2y/dx2 (expect 18)", outer.gradient(dy_dx, x))

    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y
    show("TF docs: dz/dx, dy/dx, dz/dx at 3 (expect 108, 6, 108)",
         [t.gradient(z, x), t.gradient(y, x), t.gradient(z, x)])


def run_reference():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import autodiff as ad

    pytorch_style(lambda data, requires_grad=False: ad.Tensor(data, requires_grad), "reference engine")
    print("== TensorFlow-style programs (reference engine)")
    x = ad.Tensor(np.arange(4.0))
    with ad.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = ad.stop_gradient(y) * x
    show("persistent: gradient(z, x), gradient(y, x), gradient(z, x)",
         [t.gradient(z, x).data, t.gradient(y, x).data, t.gradient(z, x).data])
    with ad.GradientTape() as t:
        t.watch(x)
        y = x * x
        z = ad.stop_gradient(y) * x
    show("non-persistent: first gradient(z, x)", t.gradient(z, x).data)
    try:
        t.gradient(y, x)
    except RuntimeError as error:
        print(f"non-persistent: second call: RuntimeError: {error}")
    with ad.GradientTape(persistent=True) as t:
        t.watch(x)
        s = ad.stop_gradient(x * x)
        w = s + x
    show("stop_gradient(x*x) (expect None)", t.gradient(s, x))
    show("stop_gradient(x*x) + x (expect ones)", t.gradient(w, x).data)
    show("stop_gradient(x*x), unconnected_gradients=zero", t.gradient(s, x, unconnected_gradients="zero").data)
    x = ad.Tensor(3.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    show("nested: dy/dx, d2y/dx2 of x^3 at 3", [dy_dx.data, outer.gradient(dy_dx, x).data])
    with ad.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y
    show("TF docs: dz/dx, dy/dx, dz/dx at 3 (expect 108, 6, 108)",
         [t.gradient(z, x).data, t.gradient(y, x).data, t.gradient(z, x).data])


if __name__ == "__main__":
    {"torch": run_torch, "tensorflow": run_tensorflow, "reference": run_reference}[sys.argv[1]]()
