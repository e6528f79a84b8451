"""The console report of ``grader check``: the score and the tables on one screen, then each failure explained.

Renders a :class:`~grader.results.SubmissionResult` to a string of lines at most ``width`` wide (prose
is wrapped; code keeps its lines). What a student reads first must fit a screen: a scenario of an
unfinished task is one line of its table, with its program and traceback only under ``verbose``;
a provided-engine section that passes whole is one line; failures that share one cause (an empty or
unrelated file: every scenario raising the same AttributeError) are explained once. The CLI decides
where it goes and whether colours are on.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import click

from grader.report.text import (
    STATUS_WORDS,
    Style,
    holds_no_engine,
    import_output,
    one_line,
    plain,
    points,
    program_heading,
    provided_notice,
)
from grader.results import ScenarioResult, Status, SubmissionResult
from grader.visibility import Scope, Visibility

_COLOURS = {"pass": "green", "fail": "red", "dim": "bright_black", "bold": None}
SHOWN_OUTPUT_LINES = 8   # of a scenario's captured stdout or stderr, without verbose
SHOWN_WARNINGS = 8        # of the lines a notebook left out, without verbose
SAME_CAUSE = 3           # failures with one and the same message, explained once


def colour(text: str, role: str) -> str:
    return click.style(text, fg=_COLOURS.get(role), bold=role in ("bold", "fail"))


def unfinished(scenario: ScenarioResult) -> bool:
    """A scenario that stopped at a task's NotImplementedError: the task is not done yet."""
    return scenario.status is Status.ERROR and scenario.feedback.summary.startswith("not implemented yet")


def render(result: SubmissionResult, *, title: str = "", colours: bool = False, verbose: bool = False,
           width: int = 80) -> str:
    style: Style = colour if colours else plain
    wrap = _Wrapper(width)
    out = [*wrap(_header(result, title))]
    if verbose:
        out += wrap(f"Isolation: {', '.join(result.isolation) or 'none reported'}; timings: "
                    + ", ".join(f"{k} {v:.3f} s" for k, v in result.timings.items()))
    if result.warnings:
        out += ["", *_not_graded(result, wrap, verbose)]
    if result.error:
        out += ["", style("This submission could not be graded:", "fail"), *wrap(result.error, "   ")]
    notice = provided_notice(result)
    if notice:
        out += ["", *(style(line, "bold") for line in wrap(notice))]
    if holds_no_engine(result):  # nothing else to say: one clear line, and the score
        out += ["", *wrap(_footer(result))]
        return "\n".join(out) + "\n"
    printed = import_output(result)
    if printed:
        out += ["", *_capped(wrap.code(printed, ""), verbose)]
    common = None if result.error else _common_cause(result)
    out += ["", *_tables(result, style, width, verbose, collapse=common is not None)]
    todo = _unfinished_line(result)
    if todo and not result.error:
        out += ["", *wrap(todo)]
    if common is not None:
        out += ["", *_explain_common(common, result, style, wrap)]
    elif not result.error:
        shown = [s for s in result.scenarios if not s.passed and (verbose or not unfinished(s))]
        if shown:
            out += ["", style(f"{len(shown)} scenario{'s' * (len(shown) != 1)} to look at", "bold"), ""]
        timed_out: dict[str, str] = {}   # task -> its first timed-out scenario, explained in full
        for scenario in shown:
            first = timed_out.setdefault(scenario.task, scenario.id) if scenario.status is Status.TIMEOUT else None
            if first is not None and first != scenario.id and not verbose:
                out += [*_timed_out_again(scenario, first, style, wrap), ""]
            else:
                out += [*_explained(result, scenario, style, wrap, verbose), ""]
    out += ["", *(style(line, "pass" if result.all_passed else "bold") for line in wrap(_footer(result)))]
    return "\n".join(out) + "\n"


def _header(result: SubmissionResult, title: str) -> str:
    which = "public scenarios" if result.visibility is Scope.PUBLIC else "all scenarios (public and hidden)"
    name = f"{result.assignment}: {title}" if title else result.assignment
    return (f"{name}\nChecking {result.submission} against the {which}, "
            f"seed {result.seed} (rerun it with --seed {result.seed})")


def _tables(result: SubmissionResult, style: Style, width: int, verbose: bool, collapse: bool) -> list[str]:
    lines: list[str] = []
    for task in result.tasks:
        mine = [s for s in result.scenarios if s.task == task.id]
        worthless = task.max_score == 0
        score = "-" if worthless else f"{points(task.score)}/{points(task.max_score)}"
        lines.append(style(_row(task.title, score, width, indent=0), "bold"))
        if worthless and all(s.passed for s in mine) and not verbose:
            lines.append(f"  {style(f'{STATUS_WORDS[Status.PASSED]:<8}', 'pass')} all {len(mine)} checks of the "
                         "provided engine")
        elif not collapse:
            lines += [_scenario_row(s, style, width) for s in mine]
        lines.append("")
    return lines[:-1]


def _scenario_row(scenario: ScenarioResult, style: Style, width: int) -> str:
    word = "TODO" if unfinished(scenario) else STATUS_WORDS[scenario.status]
    mark = style(f"{word:<8}", "pass" if scenario.passed else "fail")
    score = "" if scenario.max_points == 0 else f"{points(scenario.points)}/{points(scenario.max_points)}"
    return f"  {mark} " + _row(f"{scenario.id}  {scenario.title}", score, width, indent=11)


def _row(text: str, right: str, width: int, indent: int) -> str:
    """``text`` cut to fit beside ``right``, which ends at ``width``."""
    room = max(width - indent - len(right) - 2, 10)
    text = text if len(text) <= room else text[: room - 3] + "..."
    return f"{text:<{room}}  {right}".rstrip()


def _unfinished_line(result: SubmissionResult) -> str:
    """One line naming the tasks not done yet (their scenarios stop at NotImplementedError)."""
    counts = {task.id: sum(unfinished(s) for s in result.scenarios if s.task == task.id) for task in result.tasks}
    named = [f"{task.title.split(':')[0]} ({counts[task.id]} scenario{'s' * (counts[task.id] != 1)})"
             for task in result.tasks if counts[task.id]]
    if not named:
        return ""
    return (f"Not implemented yet: {', '.join(named)}. Each such scenario says TODO above; "
            "its checks are explained once the task's functions return (grader check -v shows its program).")


def _explained(result: SubmissionResult, scenario: ScenarioResult, style: Style, wrap: _Wrapper,
               verbose: bool) -> list[str]:
    feedback = scenario.feedback
    task = next((t.title for t in result.tasks if t.id == scenario.task), scenario.task)
    worth = "0 points, a check of the provided engine" if scenario.max_points == 0 else \
        f"{points(scenario.max_points)} points"
    lines = [*(style(line, "fail") for line in wrap(f"-- {scenario.id}: {scenario.title}", "", "   ")),
             *(style(line, "dim") for line in wrap(f"({task}; {worth})", "   ", "    "))]
    word = STATUS_WORDS[scenario.status]
    if feedback.what is not None:  # a value that did not match: said once, in this block
        lines += [f"   {word}",
                  *wrap(f"Checked:   {feedback.what}", "   ", " " * 14),
                  *wrap(f"Expected:  {feedback.expected}", "   ", " " * 14),
                  *wrap(f"Got:       {feedback.got}", "   ", " " * 14)]
    else:
        lines += wrap(f"{word}: {feedback.summary}", "   ", "     ")
    if feedback.misconception:
        hint = f"Likely misconception: {feedback.misconception}"
        lines += [style(line, "bold") for line in wrap(hint, "   ", "     ")]
    if feedback.provided_note:
        lines += wrap(feedback.provided_note, "   ", "     ")
    if scenario.program and (verbose or not unfinished(scenario)):
        lines += [f"   {program_heading(scenario.program)}", *wrap.code(scenario.program)]
    if feedback.traceback:
        lines += ["   Your code's traceback:", *wrap.code(feedback.traceback)]
    for name, text in (("stdout", feedback.stdout), ("stderr", feedback.stderr)):
        if text.strip():
            lines += [f"   Printed on {name}:", *_capped(wrap.code(text), verbose)]
    return lines


def _timed_out_again(scenario: ScenarioResult, first: str, style: Style, wrap: _Wrapper) -> list[str]:
    """A scenario cut after the first timeout of its task: where it was, in one line (-v shows it all)."""
    lines = [*(style(line, "fail") for line in wrap(f"-- {scenario.id}: {scenario.title}", "", "   ")),
             *wrap(f"{STATUS_WORDS[scenario.status]}: {scenario.feedback.summary}", "   ", "     ")]
    frames = [line.strip() for line in (scenario.feedback.traceback or "").splitlines()
              if line.strip().startswith("File")]
    where = f"stopped in {frames[-1]}" if frames else "no word on where it was"
    return lines + wrap(f"Like {first} above, {where} (grader check -v shows it whole).", "   ", "     ")


def _common_cause(result: SubmissionResult) -> list[ScenarioResult] | None:
    """The failures, when (at least SAME_CAUSE of) them all failed with one and the same message."""
    failures = [s for s in result.scenarios if not s.passed]
    if len(failures) < SAME_CAUSE or any(unfinished(s) for s in failures):
        return None
    key = (failures[0].status, failures[0].feedback.summary)
    return failures if all((s.status, s.feedback.summary) == key for s in failures) else None


def _explain_common(failures: list[ScenarioResult], result: SubmissionResult, style: Style,
                    wrap: _Wrapper) -> list[str]:
    first = failures[0].feedback
    lines = [style(f"All {len(failures)} scenarios that did not pass stopped at the same place:", "bold"),
             *wrap(f"{STATUS_WORDS[failures[0].status]}: {first.summary}", "   ", "     ")]
    if first.provided_note:
        lines += wrap(first.provided_note, "   ", "     ")
    if "has no attribute" in first.summary and "module" in first.summary:
        name = result.submission.replace("\\", "/").rsplit("/", 1)[-1]
        lines += wrap(f"{name} does not define what the exercise's scenarios use: is it your copy of the "
                      "exercise's file, with the engine it was handed out with?", "   ")
    if first.traceback:
        lines += ["   Your code's traceback (the first scenario's):", *wrap.code(first.traceback)]
    return lines


def _footer(result: SubmissionResult) -> str:
    line = f"Score: {one_line(result)}"
    if result.visibility is Scope.PUBLIC:
        hidden = any(s.visibility is Visibility.HIDDEN for s in result.scenarios)
        line += "." if hidden else ". Hidden scenarios are graded when you submit."
    return line


def _not_graded(result: SubmissionResult, wrap: _Wrapper, verbose: bool) -> list[str]:
    """The lines the submission's format left out (a notebook's), each wrapped under a heading."""
    count = len(result.warnings)
    lines = wrap(f"{count} part{'s' * (count != 1)} of {_name(result)} {'are' if count != 1 else 'is'} not graded "
                 "(they run in Jupyter only):")
    shown = result.warnings if verbose or count <= SHOWN_WARNINGS else result.warnings[:SHOWN_WARNINGS]
    for warning in shown:
        lines += wrap(warning, "  - ", "      ")
    if len(shown) < count:
        lines.append(f"      ... {count - len(shown)} more (grader check -v shows them all)")
    return lines


def _name(result: SubmissionResult) -> str:
    return result.submission.replace("\\", "/").rsplit("/", 1)[-1]


def _capped(lines: list[str], verbose: bool) -> list[str]:
    if verbose or len(lines) <= SHOWN_OUTPUT_LINES:
        return lines
    return [*lines[:SHOWN_OUTPUT_LINES], f"       ... {len(lines) - SHOWN_OUTPUT_LINES} more lines (grader check -v "
            "shows them all)"]


class _Wrapper:
    """Prose wrapped to the width, first line indented by ``first``, the others by ``rest``."""

    def __init__(self, width: int):
        self.width = max(width, 40)

    def __call__(self, text: str, first: str = "", rest: str | None = None) -> list[str]:
        rest = first if rest is None else rest
        return list(self._lines(text, first, rest))

    def code(self, text: str, indent: str = "       ") -> list[str]:
        """Code or captured output, each line under ``indent``, its own indentation kept; a line too
        long for the width goes on in lines indented four more (nothing of it is lost)."""
        lines = []
        for line in text.rstrip().splitlines():
            if not line.strip():
                lines.append("")
                continue
            if len(indent) + len(line) <= self.width:
                lines.append(indent + line)
                continue
            own = indent + line[:len(line) - len(line.lstrip())]
            lines += textwrap.wrap(line.lstrip(), self.width, initial_indent=own, subsequent_indent=own + "    ",
                                   break_on_hyphens=False, replace_whitespace=False)
        return lines

    def _lines(self, text: str, first: str, rest: str) -> Iterator[str]:
        for index, paragraph in enumerate(text.splitlines() or [""]):
            yield from textwrap.wrap(paragraph, self.width, initial_indent=first if index == 0 else rest,
                                     subsequent_indent=rest, break_on_hyphens=False) or [""]

