"""The HTML report of a check, for a Jupyter notebook's output: the score, a table of scenarios,
the likely misconceptions, and each failure's details in a collapsible ``<details>`` block.

Pure: renders a :class:`~grader.results.SubmissionResult` to a string, with the same explanations
as the console (:func:`grader.report.text.explain`). Inline styles only: a notebook's output may
not load a stylesheet, and none leaks into the rest of the page.
"""

from __future__ import annotations

from html import escape

from grader.report.text import (
    STATUS_WORDS,
    explain,
    import_output,
    one_line,
    points,
    provided_notice,
)
from grader.results import ScenarioResult, SubmissionResult

_PASS, _FAIL, _DIM = "#1a7f37", "#cf222e", "#57606a"
_CELL = "padding:2px 8px;text-align:left;border-bottom:1px solid #d0d7de"


def render_html(result: SubmissionResult, *, title: str = "") -> str:
    out = ['<div class="grader-result" style="font-family:system-ui,sans-serif;line-height:1.4">',
           _header(result, title)]
    if result.error:
        out.append(f'<p style="color:{_FAIL};font-weight:bold">This submission could not be graded:</p>'
                   f"<pre>{escape(result.error)}</pre>")
    notice = provided_notice(result)
    if notice:
        out.append(f'<p style="color:{_FAIL};font-weight:bold">{escape(notice)}</p>')
    if result.warnings:
        count = len(result.warnings)
        heading = f"{count} part{'s' * (count != 1)} of your notebook not graded (they run in Jupyter only)"
        out.append(_collapsible(heading,
                                "<ul>" + "".join(f"<li><code>{escape(w)}</code></li>" for w in result.warnings)
                                + "</ul>", open_=False))
    printed = import_output(result)
    if printed:
        out.append(_collapsible("Printed while importing", f"<pre>{escape(printed)}</pre>", open_=False))
    misconceptions = [s for s in result.scenarios if not s.passed and s.feedback.misconception]
    if misconceptions and not result.error:
        out.append("<p><b>Likely misconceptions</b></p><ul>" + "".join(
            f"<li><code>{escape(s.id)}</code>: {escape(s.feedback.misconception or '')}</li>" for s in misconceptions)
            + "</ul>")
    out.append(_table(result))
    failures = [s for s in result.scenarios if not s.passed]
    if failures and not result.error:
        out.append(f"<p><b>{len(failures)} scenario{'s' * (len(failures) != 1)} did not pass</b> "
                   f'<span style="color:{_DIM}">(click one for what it ran, expected and got)</span></p>')
        out += [_failure(s) for s in failures]
    colour = _PASS if result.all_passed else _FAIL
    footer = f"Score: {one_line(result)}"
    if result.visibility == "public":
        footer += ". Hidden scenarios are graded when you submit."
    out.append(f'<p style="color:{colour};font-weight:bold">{escape(footer)}</p></div>')
    return "\n".join(out)


def _header(result: SubmissionResult, title: str) -> str:
    name = f"{result.assignment}: {title}" if title else result.assignment
    return (f"<p><b>{escape(name)}</b><br/>"
            f'<span style="color:{_DIM}">Checked {escape(result.submission)}, seed {result.seed} '
            f"(rerun it with <code>--seed {result.seed}</code>)</span></p>")


def _table(result: SubmissionResult) -> str:
    rows = []
    for task in result.tasks:
        rows.append(f'<tr style="background:#f6f8fa"><th colspan="3" style="{_CELL}">{escape(task.title)}</th>'
                    f'<th style="{_CELL}">{points(task.score)}/{points(task.max_score)}</th></tr>')
        for scenario in (s for s in result.scenarios if s.task == task.id):
            colour = _PASS if scenario.passed else _FAIL
            rows.append(f'<tr><td style="{_CELL};color:{colour};font-weight:bold">'
                        f"{escape(STATUS_WORDS[scenario.status])}</td>"
                        f'<td style="{_CELL}"><code>{escape(scenario.id)}</code></td>'
                        f'<td style="{_CELL}">{escape(scenario.title)}</td>'
                        f'<td style="{_CELL}">{points(scenario.points)}/{points(scenario.max_points)}</td></tr>')
    return f'<table style="border-collapse:collapse">{"".join(rows)}</table>'


def _failure(scenario: ScenarioResult) -> str:
    summary = f"<code>{escape(scenario.id)}</code>: {escape(scenario.feedback.summary or scenario.title)}"
    return _collapsible(summary, f"<pre>{escape(explain(scenario))}</pre>",
                        open_=False, raw_summary=True)


def _collapsible(summary: str, body: str, *, open_: bool, raw_summary: bool = False) -> str:
    heading = summary if raw_summary else escape(summary)
    return f"<details{' open' if open_ else ''}><summary>{heading}</summary>{body}</details>"
