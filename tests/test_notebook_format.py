"""The notebook reader as pure functions: the IPython rules, the statement rules, the line map,
and every way a file is refused (real notebooks made by nbformat)."""

import json
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("nbformat", reason="the notebook tests need the [notebook] extra (part of [test])")

import nbformat
from notebook_fixtures import dumps, notebook, widget_cell, with_image

from grader.formats.cell_statements import CellPolicy
from grader.formats.dropped import DropReason
from grader.formats.ipython_syntax import strip_ipython
from grader.formats.line_map import relocate_traceback
from grader.formats.notebook import MAX_CODE_BYTES, NotebookError, read_notebook
from grader.spec_cache import SpecCache

FORBIDDEN = ("torch", "tensorflow")


def read(node, assignment="autodiff", policy=CellPolicy.DEFINITIONS):
    return read_notebook(dumps(node), "autodiff.ipynb", assignment=assignment, policy=policy, forbidden=FORBIDDEN)


def reasons(module):
    return [(item.where.cell, item.where.line, item.end_line, item.dropped.reason) for item in module.dropped]


# --------------------------------------------------------------------------- IPython syntax

def test_line_magics_and_shell_commands_are_dropped_in_place():
    cell = strip_ipython("!pip install d2l==1.0.3\n%matplotlib inline\nfiles = !ls\nimport numpy as np\n"
                         "Tensor?\n??detach\n%pip install numpy")
    assert cell.lines == ("\n", "\n", "\n", "import numpy as np\n", "\n", "\n", "\n")
    assert [(d.line, d.text, d.reason) for d in cell.dropped] == [
        (1, "!pip install d2l==1.0.3", DropReason.LINE_MAGIC), (2, "%matplotlib inline", DropReason.LINE_MAGIC),
        (3, "files = !ls", DropReason.LINE_MAGIC), (5, "Tensor?", DropReason.LINE_MAGIC),
        (6, "??detach", DropReason.LINE_MAGIC), (7, "%pip install numpy", DropReason.LINE_MAGIC)]


def test_a_magic_inside_a_block_becomes_pass():
    cell = strip_ipython("def f():\n    %time g()\n")
    assert cell.lines == ("def f():\n", "    pass\n")


def test_percent_and_bang_inside_brackets_or_strings_are_python():
    source = 'x = (7\n% 2)\ny = [1,\n!= 2] if False else 0\ns = """\n!not a command\n%not a magic\n"""\n'
    cell = strip_ipython(source)
    assert "".join(cell.lines) == source and cell.dropped == ()


def test_cell_magics_drop_the_cell_or_unwrap_it():
    tab = strip_ipython("%%tab pytorch\nimport torch\nx = torch.ones(3)")
    assert tab.lines is None and [(d.line, d.end_line, d.reason) for d in tab.dropped] == [(1, 3, DropReason.D2L_TAB)]
    bash = strip_ipython("%%bash\nls -l\n")
    assert bash.lines is None and bash.dropped[0].reason is DropReason.CELL_MAGIC
    for magic in ("%%tab all", "%%tab pytorch, all", "%%time", "%%capture out"):
        kept = strip_ipython(f"{magic}\ndef f():\n    return 1\n")
        assert kept.lines == ("\n", "def f():\n", "    return 1\n"), magic
        assert [d.reason for d in kept.dropped] == [DropReason.CELL_MAGIC_LINE]


# --------------------------------------------------------------------------- statements

def test_definitions_imports_and_simple_assignments_are_kept_the_rest_dropped():
    module = read(notebook(
        "import numpy as np\nimport contextlib\n_tapes = []\nEPS: float = 1e-6\nSHAPE = (2, 3)\n"
        "def f(x):\n    return x * 2\nclass T:\n    pass\nT.f = f\nsquare = lambda x: x * x\n\"\"\"a docstring\"\"\"",
        "print(f(3))\nfor i in range(3):\n    f(i)\nx = f(3)\ny = x + 1\nassert y == 7\nf(2)"))
    assert "print" not in module.text and "for i" not in module.text and "x = f(3)" not in module.text
    for kept in ("import numpy as np", "_tapes = []", "EPS: float = 1e-6", "T.f = f", "square = lambda"):
        assert kept in module.text
    assert reasons(module) == [
        (2, 1, 1, DropReason.DEMONSTRATION), (2, 2, 3, DropReason.DEMONSTRATION), (2, 4, 4, DropReason.CALLS),
        (2, 5, 5, DropReason.DEPENDS_ON_DROPPED), (2, 6, 6, DropReason.DEMONSTRATION),
        (2, 7, 7, DropReason.DEMONSTRATION)]
    compile(module.text, "autodiff.py", "exec")


def test_imports_graded_code_cannot_use_are_dropped_but_forbidden_ones_kept():
    module = read(notebook("import matplotlib.pyplot as plt\nfrom d2l import torch as d2l\nimport torch\n"
                           "from . import sibling\nimport os, json\n@d2l.add_to_class(object)\ndef f():\n    pass\n"
                           "def g(plot=plt.plot):\n    pass"))
    assert reasons(module) == [(1, 1, 1, DropReason.UNAVAILABLE_IMPORT), (1, 2, 2, DropReason.UNAVAILABLE_IMPORT),
                               (1, 4, 4, DropReason.UNAVAILABLE_IMPORT), (1, 6, 8, DropReason.DEPENDS_ON_DROPPED),
                               (1, 9, 10, DropReason.DEPENDS_ON_DROPPED)]
    assert "import torch" in module.text and "import os, json" in module.text


def test_statements_on_one_line_go_together_and_a_name_rebound_by_kept_code_is_usable():
    module = read(notebook("a = 1; print(a)\nb = 2; c = b", "x = make()\nx = 3\ny = x"))
    assert reasons(module) == [(1, 1, 1, DropReason.DEMONSTRATION), (2, 1, 1, DropReason.CALLS)]
    assert "b = 2; c = b" in module.text and "y = x" in module.text


def test_the_all_policy_keeps_every_statement_but_not_ipython_or_d2l_tabs():
    module = read(notebook("%load_ext d2lbook.tab\nfrom d2lbook import tab\ntab.interact_select(['pytorch',\n"
                           "    'tensorflow'])", "x = [1, 2]\nprint(x)\nfor v in x:\n    print(v)"),
                  policy=CellPolicy.ALL)
    assert reasons(module) == [(1, 1, 1, DropReason.LINE_MAGIC), (1, 2, 2, DropReason.D2L_TAB),
                               (1, 3, 4, DropReason.D2L_TAB)]
    assert module.text.endswith("x = [1, 2]\nprint(x)\nfor v in x:\n    print(v)\n")


# --------------------------------------------------------------------------- line map

def test_module_lines_map_back_to_cells_markdown_cells_counted():
    module = read(notebook(("md", "# Title"), "import numpy as np\n\ndef f():\n    return 1", ("md", "text"),
                           "print(1)", "%%bash\nls", "def g():\n    return f()"))
    lines = module.text.splitlines()
    assert lines[module.line_map.module_line(6, 2) - 1] == "    return f()"
    place = module.line_map.locate(module.line_map.module_line(6, 2))
    assert (place.cell, place.cell_id, place.line) == (6, "cell-6", 2)
    assert module.where(4, "autodiff.ipynb") == "autodiff.ipynb, cell 2, line 4"
    assert module.line_map.module_line(4, 1) is None  # a cell all dropped is not in the module
    assert module.line_map.locate(len(lines) + 1) is None


def test_tracebacks_point_at_cells():
    module = read(notebook("import numpy as np", ("md", "x"), "def f(x):\n    return 1 / x"))
    line = module.line_map.module_line(3, 2)
    traceback = (f'Traceback (most recent call last):\n  File "<scenario x>", line 3, in program\n'
                 f'  File "autodiff.py", line {line}, in f\n    return 1 / x\nZeroDivisionError: division by zero\n')
    relocated = relocate_traceback(traceback, "autodiff.py", lambda n: module.where(n, "autodiff.ipynb"))
    assert '  File "autodiff.ipynb", cell 3, line 2, in f\n    return 1 / x' in relocated
    assert 'File "<scenario x>", line 3, in program' in relocated


def test_a_syntax_error_names_its_cell_and_line():
    cells = [("md", f"text {n}") if n % 2 else f"x{n} = {n}" for n in range(1, 7)]
    with pytest.raises(NotebookError) as raised:
        read(notebook(*cells, "def f(x):\n    y = x +\n    return y"))
    assert str(raised.value).splitlines() == ["autodiff.ipynb, cell 7, line 2: invalid syntax", "    y = x +",
                                              "           ^"]


# --------------------------------------------------------------------------- refusals

def test_a_file_that_is_not_json_or_not_a_notebook_is_refused_clearly():
    with pytest.raises(NotebookError, match=r"is not a Jupyter notebook: it is not JSON \(line 1, column 1"):
        read_notebook(b"import numpy as np\n", "autodiff.ipynb", assignment="autodiff")
    with pytest.raises(NotebookError, match="is JSON but not a Jupyter notebook"):
        read_notebook(b'{"cells": []}', "autodiff.ipynb", assignment="autodiff")
    with pytest.raises(NotebookError, match="is not UTF-8"):
        read_notebook(b'{"a": "\xff"}', "autodiff.ipynb", assignment="autodiff")


def test_versions_other_than_4_are_refused_with_what_to_do():
    for major, advice in ((3, "save it again, which converts it to version 4"), (5, "tell your instructors")):
        data = json.dumps({"nbformat": major, "nbformat_minor": 0, "worksheets": [], "metadata": {}}).encode()
        with pytest.raises(NotebookError, match=f"is a version {major} notebook; .*{advice}"):
            read_notebook(data, "autodiff.ipynb", assignment="autodiff")


def test_an_invalid_notebook_is_refused_with_where_counting_cells_from_one():
    node = json.loads(dumps(notebook(*[("md", f"# part {n}") for n in range(10)], "x = 1")))
    node["cells"][10]["execution_count"] = "three"
    for cache in (None, SpecCache(Path(tempfile.mkdtemp()))):   # grade's nbformat, and check's fast validator
        with pytest.raises(NotebookError) as refused:
            read_notebook(json.dumps(node).encode(), "autodiff.ipynb", assignment="autodiff", cache=cache)
        message = str(refused.value)
        assert message.startswith("autodiff.ipynb is not a valid Jupyter notebook (nbformat 4): cell 11's "
                                  "execution_count"), message
        assert "cells[" not in message


def test_another_assignments_notebook_is_refused():
    with pytest.raises(NotebookError, match="is the notebook of the assignment 'linreg', not of 'autodiff'"):
        read(notebook("x = 1", assignment="linreg"))
    assert read(notebook("x = 1", assignment=None)).text == "x = 1\n"  # a notebook of the student's own


def test_outputs_do_not_count_against_the_code_limit():
    node = notebook("import numpy as np", with_image("x = 1", megabytes=5))
    assert len(dumps(node)) > 5_000_000
    assert read(node).text == "import numpy as np\nx = 1\n"
    with pytest.raises(NotebookError, match="hold more than 1,000,000 bytes of code"):
        read(notebook("x = 1\n" * (MAX_CODE_BYTES // 6 + 1)))


def test_a_widget_cell_is_read_without_a_kernel_and_dropped():
    node = notebook("import numpy as np", widget_cell())
    node.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                               "version_minor": 0}}
    module = read(node)
    assert module.text == "import numpy as np\n"
    assert [r[3] for r in reasons(module)] == [DropReason.UNAVAILABLE_IMPORT, DropReason.CALLS,
                                               DropReason.DEMONSTRATION, DropReason.DEMONSTRATION]


def test_warnings_say_cell_line_and_why():
    module = read(notebook("!pip install d2l==1.0.3\n%matplotlib inline", "%%tab pytorch\nimport torch\nx = 1",
                           "import numpy as np"))
    assert module.warnings("autodiff.ipynb") == (
        "autodiff.ipynb, cell 1, line 1: not graded: !pip install d2l==1.0.3 (IPython syntax, not Python)",
        "autodiff.ipynb, cell 1, line 2: not graded: %matplotlib inline (IPython syntax, not Python)",
        "autodiff.ipynb, cell 2, lines 1-3: not graded: %%tab pytorch (D2L's framework tabs: this engine is numpy)")


def test_cells_before_nbformat_4_5_have_no_ids():
    node = nbformat.v4.upgrade(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]))
    data = json.loads(nbformat.writes(node))
    data["nbformat_minor"] = 4
    del data["cells"][0]["id"]
    module = read_notebook(json.dumps(data).encode(), "autodiff.ipynb", assignment="autodiff")
    assert module.line_map.locate(1).cell_id is None


def test_a_notebook_without_graded_code_is_refused_clearly():
    with pytest.raises(NotebookError, match=r"has no code to grade \(2 code cells, none with graded code\)"):
        read(notebook(("md", "# My answers"), "print('hi')", "%matplotlib inline"))
