"""Small assignments made on the fly for the sandbox's tests: scenarios given as program bodies."""

from __future__ import annotations

import textwrap
from pathlib import Path

from grader import load_assignment
from grader.spec import Assignment

HIDDEN = "hidden"   # the folder, inside the assignment's, that holds its hidden.yaml


def scenario_assignment(folder: Path, scenarios: list[tuple], memory_mb: int = 256) -> Path:
    """An assignment like mini's, with these ``(id, program body, time limit[, "hidden"])``
    scenarios, each checked for ``{"y": 1}``, and a submission ``squares.py`` whose ``one()`` is 1.
    Hidden scenarios go to ``folder/hidden`` (see :func:`load_made`)."""
    folder.mkdir(parents=True)
    files = {"public": ["assignment.yaml", "scenarios.py", [], []],
             "hidden": [f"{HIDDEN}/hidden.yaml", f"{HIDDEN}/hidden_scenarios.py", [], []]}
    for scenario_id, body, limit, *visibility in scenarios:
        _, _, lines, entries = files[visibility[0] if visibility else "public"]
        lines += ["@scenario", f"def {scenario_id}(sq):", textwrap.indent(textwrap.dedent(body), "    "), "",
                  f"@{scenario_id}.check", "def _(got):", '    expect_equal(got, {"y": 1}, what="y")', ""]
        entries.append(f"  - {{id: {scenario_id}, title: {scenario_id}, task: t, points: 1, time_limit: {limit}}}")
    heads = {"public": textwrap.dedent(f"""\
                 id: recovery
                 title: Recovery
                 submission: squares.py
                 scenario_file: scenarios.py
                 import_time_limit: 5
                 memory_limit_mb: {memory_mb}
                 output_limit_kb: 8
                 tasks:
                   - {{id: t, title: T}}
                 """),
             "hidden": "assignment: recovery\nscenario_file: hidden_scenarios.py\n"}
    for visibility, (spec, code, lines, entries) in files.items():
        if visibility == "hidden" and not entries:
            continue
        (folder / spec).parent.mkdir(exist_ok=True)
        (folder / code).write_text("\n".join(["from grader.expect import expect_equal",
                                              "from grader.scenario import scenario", "", *lines]))
        (folder / spec).write_text(heads[visibility] + "scenarios:\n" + "\n".join(entries) + "\n")
    (folder / "squares.py").write_text("def one():\n    return 1\n")
    return folder


def load_made(folder: Path) -> Assignment:
    """The assignment :func:`scenario_assignment` made in ``folder``, its hidden scenarios included."""
    hidden = folder / HIDDEN
    return load_assignment(folder, hidden if hidden.is_dir() else None)
