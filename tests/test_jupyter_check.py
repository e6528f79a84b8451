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
    assert "cannot tell which notebook to check" in run_cell("%grader check", empty)["text"]
