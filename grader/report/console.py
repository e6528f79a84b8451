"""The console report of ``grader check``: a table per task, then each failure explained.

Renders a :class:`~grader.results.SubmissionResult` to a string; the CLI decides where it goes
and whether colours are on (a TTY only).
"""

from __future__ import annotations

import click

from grader.report.text import (
    STATUS_WORDS,
    Style,
    engine_may_be_the_cause,
    explain,
    import_output,
    one_line,
    plain,
    points,
    provided_notice,
)
from grader.results import SubmissionResult

WIDTH = 78
_COLOURS = {"pass": "green", "fail": "red", "dim": "bright_black", "bold": None}


def colour(text: str, role: str) -> str:
    return click.style(text, fg=_COLOURS.get(role), bold=role in ("bold", "fail"))


def render(result: SubmissionResult, *, title: str = "", colours: bool = False, verbose: bool = False) -> str:
    style: Style = colour if colours else plain
    out = [_header(result, title)]
    if verbose:
        out.append(f"Isolation: {', '.join(result.isolation) or 'none reported'}; "
                   f"timings: " + ", ".join(f"{k} {v:.3f} s" for k, v in result.timings.items()))
    if result.error:
        out += ["", style("This submission could not be graded:", "fail"), _indent(result.error)]
    notice = provided_notice(result)
    if notice:
        out += ["", style(notice, "bold")]
    printed = import_output(result)
    if printed:
        out += ["", printed]
    out += ["", *_tables(result, style)]
    failures = [s for s in result.scenarios if not s.passed]
    if failures and not result.error:
        out += ["", style(f"{len(failures)} scenario{'s' * (len(failures) != 1)} did not pass", "bold"), ""]
        for scenario in failures:
            task = next((t.title for t in result.tasks if t.id == scenario.task), scenario.task)
            out.append(style(f"-- {scenario.id}: {scenario.title}", "fail"))
            out.append(style(f"   ({task}; {points(scenario.max_points)} points)", "dim"))
            out.append(_indent(explain(scenario, style, engine_changed=engine_may_be_the_cause(result, scenario))))
            out.append("")
    out.append(_footer(result, style))
    return "\n".join(out) + "\n"


def _header(result: SubmissionResult, title: str) -> str:
    which = "public scenarios" if result.visibility == "public" else "all scenarios (public and hidden)"
    name = f"{result.assignment}: {title}" if title else result.assignment
    return (f"{name}\nChecking {result.submission} against the {which}, "
            f"seed {result.seed} (rerun it with --seed {result.seed})")


def _tables(result: SubmissionResult, style: Style) -> list[str]:
    lines = []
    for task in result.tasks:
        score = f"{points(task.score)}/{points(task.max_score)}"
        lines.append(style(f"{task.title:<{WIDTH - len(score) - 1}} {score}", "bold"))
        for scenario in (s for s in result.scenarios if s.task == task.id):
            word = STATUS_WORDS[scenario.status]
            mark = style(f"{word:<8}", "pass" if scenario.passed else "fail")
            score = f"{points(scenario.points)}/{points(scenario.max_points)}"
            name = _fit(f"{scenario.id}  {scenario.title}", WIDTH - 14 - len(score))
            lines.append(f"  {mark} {name:<{WIDTH - 14 - len(score)}} {score:>{len(score) + 2}}")
        lines.append("")
    return lines[:-1]


def _footer(result: SubmissionResult, style: Style) -> str:
    line = f"Score: {one_line(result)}"
    if result.visibility == "public":
        line += ". Hidden scenarios are graded when you submit."
    return style(line, "pass" if result.all_passed else "bold")


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 3, 0)] + "..."


def _indent(text: str) -> str:
    return "\n".join(("   " + line) if line else line for line in text.splitlines())
