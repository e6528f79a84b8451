"""Plain-text explanations of results, shared by every reporter (console, JSON, Gradescope, JUnit).

Pure functions over result data. A ``style`` callable may decorate headings (the console passes
a colouring one on a TTY); everything else gets plain text.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable

from grader.results import ScenarioResult, Status, SubmissionResult
from grader.scenario_index import module_parameter

Style = Callable[[str, str], str]  # (text, role) -> text; roles: "pass", "fail", "dim", "bold"

STATUS_WORDS = {
    Status.PASSED: "passed", Status.FAILED: "FAILED", Status.ERROR: "ERROR", Status.TIMEOUT: "TIMEOUT",
    Status.MEMORY: "MEMORY", Status.CRASHED: "CRASHED", Status.NOT_RUN: "NOT RUN",
}


def plain(text: str, role: str) -> str:
    return text


def points(value: float) -> str:
    """3.0 -> '3', 2.5 -> '2.5'."""
    return f"{value:g}"


def explain(scenario: ScenarioResult, style: Style = plain, show_program: bool = True) -> str:
    """Everything a student needs about one scenario that did not pass, as indented text."""
    feedback = scenario.feedback
    lines = [f"{STATUS_WORDS[scenario.status]}: {feedback.summary}"]
    if feedback.provided_note:
        lines.append(f"({feedback.provided_note})")
    if show_program and scenario.program:
        lines += ["", program_heading(scenario.program), _indent(scenario.program.rstrip())]
    if feedback.what is not None:
        lines += ["", f"Checked:   {feedback.what}", f"Expected:  {feedback.expected}", f"Got:       {feedback.got}"]
    if feedback.misconception:
        lines += ["", style(f"Likely misconception: {feedback.misconception}", "bold")]
    if feedback.traceback:
        lines += ["", "Traceback (your code and the scenario's lines only):", _indent(feedback.traceback.rstrip())]
    for name, text in (("stdout", feedback.stdout), ("stderr", feedback.stderr)):
        if text.strip():
            lines += ["", f"Captured {name}:", _indent(text.rstrip())]
    return "\n".join(lines)


def program_heading(program: str) -> str:
    """The line above a program shown to a student: ``What the scenario ran (m is your module):``,
    with the name the program itself gives the student's module (its first parameter, which the spec
    checks against the assignment's ``module_alias``)."""
    name = module_parameter(program)
    return f"What the scenario ran ({name} is your module):" if name else "What the scenario ran:"


def import_output(result: SubmissionResult) -> str:
    """What the submission printed while it was imported, as indented text ("" when nothing)."""
    name = result.submission.replace("\\", "/").rsplit("/", 1)[-1]
    lines = []
    for stream, text in (("stdout", result.import_stdout), ("stderr", result.import_stderr)):
        if text.strip():
            lines += [f"Printed on {stream} while importing {name}:", _indent(text.rstrip())]
    return "\n".join(lines)


def holds_no_engine(result: SubmissionResult) -> bool:
    """The file lacks every part of the provided engine: not the exercise's file at all."""
    return result.holds_no_engine


def provided_notice(result: SubmissionResult) -> str:
    """What the submission changed of the provided engine, and what to do ("" when nothing)."""
    if not result.provided_changes:
        return ""
    name = result.submission.replace("\\", "/").rsplit("/", 1)[-1]
    if holds_no_engine(result):
        return (f"{name} holds none of the exercise's provided engine: it is another file. Start from the "
                "handout's file, as you were given it, and fill in the tasks.")
    from grader.provided import named
    return (f"You changed the provided engine: {named(result.provided_changes)}. The tasks are graded with the "
            "engine as shipped in mind; restore it (copy it back from the handout) unless the exercise asks you "
            "to change it.")


def not_graded(result: SubmissionResult) -> str:
    """What the submission's format left out (a notebook's magics, demonstration code), one line
    each under a heading ("" when nothing)."""
    if not result.warnings:
        return ""
    count = len(result.warnings)
    return "\n".join([f"{count} part{'s' * (count != 1)} of the file {'are' if count != 1 else 'is'} not graded "
                      f"(they run in Jupyter only):", *(f"    {warning}" for warning in result.warnings)])


def one_line(result: SubmissionResult) -> str:
    """``12/55 points, 3 of 8 scenarios passed (and 9 of 9 checks worth no points)``."""
    return f"{points(result.score)}/{points(result.max_score)} points, " + \
        passed_words((s.passed, s.max_points) for s in result.scenarios)


def passed_words(outcomes: Iterable[tuple[bool, float]], noun: str = "scenarios") -> str:
    """How many of the scenarios ``(passed, points)`` passed, the ones worth points apart from the
    checks worth none (the provided engine's): a handout whose engine checks all pass has made no
    progress yet, and ``0 of 8`` says so where ``9 of 17`` would not."""
    worth, free = [0, 0], [0, 0]
    for passed, worth_points in outcomes:
        counts = worth if worth_points > 0 else free
        counts[0] += bool(passed)
        counts[1] += 1
    checks = f"{free[0]} of {free[1]} check{'s' * (free[1] != 1)} worth no points"
    if not worth[1]:
        return f"{checks} passed"
    return f"{worth[0]} of {worth[1]}{f' {noun}' if noun else ''} passed" + (f" (and {checks})" if free[1] else "")


def _indent(text: str) -> str:
    return textwrap.indent(text, "    ")
