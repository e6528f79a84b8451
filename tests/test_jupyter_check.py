"""The check inside Jupyter, driven through IPython itself: a real InteractiveShell in a
subprocess loads the extension and runs ``%grader check`` as a cell; its rich output is what
IPython's display formatter makes of the returned object."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "autodiff"
SOLUTION = ROOT / "solutions" / "autodiff" / "autodiff.py"

SHELL = textwrap.dedent("""
    import json, sys
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "grader")
    cell = shell.run_cell(sys.argv[1])
    assert cell.error_in_exec is None, repr(cell.error_in_exec)
    data, _ = shell.display_formatter.format(cell.result)
    report = cell.result
    print(json.dumps({"html": data.get("text/html"), "text": data["text/plain"],
                      "score": getattr(report.result, "score", None), "passed": getattr(report, "passed", None),
                      "modules": sorted(m for m in sys.modules if m.split(".")[0] in ("nbformat", "grader"))}))
""")


def run_cell(cell: str, cwd: Path) -> dict:
    run = subprocess.run([sys.executable, "-c", SHELL, cell], cwd=cwd, capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture
def folder(tmp_path):
    folder = tmp_path / "autodiff"
    shutil.copytree(EXERCISE, folder)
    return folder


def test_check_shows_a_table_misconceptions_and_collapsible_details(folder):
    source = SOLUTION.read_text().replace("        return Tensor(self.data)   #", "        return self   #")
    (folder / "autodiff.py").write_text(source)
    shown = run_cell("%grader check autodiff.py --seed 5", folder)
    html = ET.fromstring(shown["html"])
    assert html.find(".//table") is not None
    failures = html.findall(".//details")
    assert failures and any(d.findtext("summary/code") == "detach_properties" for d in failures)
    assert "Likely misconceptions" in shown["html"] and "detach() returned y itself" in shown["html"]
    assert "Checking autodiff.py" in shown["text"] and shown["passed"] is False


def test_check_grades_as_the_cli_does(folder):
    shutil.copy(SOLUTION, folder / "autodiff.py")
    shown = run_cell("%grader check autodiff.py --seed 5", folder)
    cli = subprocess.run([sys.executable, "-m", "grader", "check", "--json", "--seed", "5", "autodiff.py"],
                         cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert shown["score"] == json.loads(cli.stdout)["score"] == 55 and shown["passed"] is True
    assert "nbformat" not in shown["modules"] and "grader.runner" not in shown["modules"]


def test_the_function_works_without_the_magic(folder):
    shutil.copy(SOLUTION, folder / "autodiff.py")
    shown = run_cell("import grader.notebook\ngrader.notebook.check('autodiff.py', seed=1)", folder)
    assert shown["passed"] is True


def test_usage_and_errors_are_shown_not_raised(folder):
    assert run_cell("%grader", folder)["text"].startswith("usage: %grader check")
    shown = run_cell("%grader check missing.ipynb", folder)
    assert "Error: missing.ipynb does not exist" in shown["text"]
    empty = folder.parent / "empty"
    empty.mkdir()
    assert "cannot tell which notebook this kernel runs" in run_cell("%grader check", empty)["text"]


def _solved_notebook(folder: Path, source: str | None = None) -> Path:
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_notebook", ROOT / "solutions" / "make_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = folder / "autodiff.ipynb"
    path.write_text(module.make_notebook(source or SOLUTION.read_text(), (EXERCISE / "README.md").read_text(),
                                         SOLUTION.read_text()))
    return path


def test_a_notebook_checks_itself_by_the_frontends_word_and_never_guesses(folder):
    source = SOLUTION.read_text().replace("        return Tensor(self.data)   #", "        return self   #")
    _solved_notebook(folder, source)
    shutil.copy(folder / "autodiff.ipynb", folder / "autodiff-Copy1.ipynb")
    _solved_notebook(folder)   # autodiff.ipynb now passes; the copy still fails
    # No frontend says which notebook runs (nbconvert, a plain IPython): refused, never autodiff.ipynb.
    refused = run_cell("%grader check --seed 2", folder)
    assert refused["score"] is None
    assert refused["text"].startswith("Error: cannot tell which notebook this kernel runs"), refused["text"]
    assert "%grader check autodiff.ipynb" in refused["text"]
    # JupyterLab's word (the path from the server's root; the kernel runs in the notebook's folder).
    told = run_cell("import os\nos.environ['JPY_SESSION_NAME'] = 'course/week2/autodiff-Copy1.ipynb'\n"
                    "import grader.notebook\ngrader.notebook.check(seed=2)", folder)
    assert told["passed"] is False and "autodiff-Copy1.ipynb" in told["text"]
    elsewhere = folder.parent / "elsewhere"
    elsewhere.mkdir()
    vscode = run_cell(f"__vsc_ipynb_file__ = {str(folder / 'autodiff-Copy1.ipynb')!r}\n"
                      f"import grader.notebook\ngrader.notebook.check(assignment={str(folder)!r}, seed=2)", elsewhere)
    assert vscode["score"] == told["score"]
    missing = run_cell("__session__ = 'gone.ipynb'\n%grader check", folder)
    assert missing["text"].startswith("Error: Jupyter says this kernel runs gone.ipynb, which is not in ")


def test_the_notebooks_left_out_lines_are_listed(folder):
    path = _solved_notebook(folder)
    import nbformat
    node = nbformat.read(path, as_version=4)
    node.cells.insert(1, nbformat.v4.new_code_cell("%matplotlib inline\nprint('hello')", id="demo"))
    nbformat.write(node, path)
    shown = run_cell("%grader check autodiff.ipynb", folder)
    assert shown["passed"] is True
    html = ET.fromstring(shown["html"])
    listed = [item.findtext("code") for item in html.findall(".//details/ul/li")]
    assert listed == ["autodiff.ipynb, cell 2, line 1: not graded: %matplotlib inline (IPython syntax, not Python)",
                      "autodiff.ipynb, cell 2, line 2: not graded: print('hello') (top-level code runs in Jupyter "
                      "only: definitions, imports and simple assignments are graded)"]


def test_in_a_notebook_that_could_not_be_saved_the_check_says_so(folder):
    _solved_notebook(folder)
    # A kernel attribute is what tells a notebook's shell (ipykernel's) from a terminal's; nobody is
    # there to act on the save request, so the file does not change and the check must say so.
    shown = run_cell("get_ipython().kernel = object()\nimport grader.notebook\n"
                     "grader.notebook.SAVE_WAIT_SECONDS = 0.3\n"
                     "grader.notebook.check('autodiff.ipynb')", folder)
    assert shown["text"].startswith("Could not save autodiff.ipynb for you, so this checks it as last saved")
    assert shown["passed"] is True


def test_the_magic_checks_one_task(folder):
    shutil.copy(SOLUTION, folder / "autodiff.py")
    shown = run_cell("%grader check autodiff.py --task tape --seed 5", folder)
    assert shown["score"] == 30 and shown["passed"] is True
    assert "detach_properties" not in shown["html"] and "d2l_persistent_tape" in shown["html"]
    assert "did you mean 'tape'?" in run_cell("%grader check autodiff.py --task tpae", folder)["text"]
