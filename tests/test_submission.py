"""Static checks on a submission: the forbidden-import scan finds the same imports, however spelt,
whether or not its cheap first look at the bytecode lets it skip the syntax tree."""

from __future__ import annotations

import pytest

from grader.submission import read_submission

FORBIDDEN = ("torch", "jax", "autograd")


@pytest.mark.parametrize("source, module", [
    ("import torch\n", "torch"),
    ("import torch.nn as nn\n", "torch.nn"),
    ("from jax import numpy as jnp\n", "jax"),
    ("def f():\n    import autograd\n", "autograd"),
    ("class A:\n    def m(self):\n        if True:\n            from jax.numpy import sin\n", "jax.numpy"),
    ("x = __import__('tor' 'ch')\n", "torch"),                 # adjacent literals, joined by the compiler
    ("x = __import__('\\x74orch')\n", "torch"),                # an escape, decoded by the compiler
    ("import importlib\nm = importlib.import_module(name=' jax ')\n", "jax"),
    ("exec('import autograd')\n", "autograd"),
    ("def f():\n    return lambda: exec('from torch import nn')\n", "torch"),
])
def test_forbidden_imports_are_found(tmp_path, source, module):
    path = tmp_path / "autodiff.py"
    path.write_text(source)
    problem = read_submission(path, FORBIDDEN).problem
    assert problem is not None and f"imports {module!r}" in problem, problem


@pytest.mark.parametrize("source", [
    '"""Unlike autograd or torch, this engine is ours."""\n',   # a mention is not an import
    "torch_like = 1\n",
    "class Net:\n    jax = None\n\nNet().jax\n",
    "x = 'import numpy'\n",
    "import numpy as np\n",
])
def test_mentions_that_are_not_imports_pass(tmp_path, source):
    path = tmp_path / "autodiff.py"
    path.write_text(source)
    assert read_submission(path, FORBIDDEN).problem is None


def test_errors_python_raises_at_compile_time_are_reported_before_running(tmp_path):
    path = tmp_path / "autodiff.py"
    path.write_text("x = 1\nreturn x\n")
    assert read_submission(path, FORBIDDEN).problem.startswith("autodiff.py, line 2: 'return' outside function")
