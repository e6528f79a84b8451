"""A student's feedback page (``OUT/students/<id>.html``): what the student reads once grades are
published, and nothing more. Pure: renders a result (or an error row's reason) to a string.

Hidden scenarios are shown as Gradescope shows them then: their outcome, points and explanation
(what was checked, expected and got, the misconception), never their program, which is exactly
what keeping them hidden protects; and not at all when the batch showed them ``hidden`` (allowed
only for scenarios worth no points). Public scenarios are shown whole, program included.
"""

from __future__ import annotations

from html import escape

from grader.report.text import (
    STATUS_WORDS,
    explain,
    import_output,
    passed_words,
    points,
    provided_notice,
)
from grader.results import SubmissionResult, TaskScore
from grader.scoring import StudentRow
from grader.visibility import ShownTo, Visibility

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;max-width:52rem;margin:0 auto;
padding:1rem 1.5rem;line-height:1.45}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border-bottom:1px solid #ddd;padding:.2rem .6rem;
text-align:left}td.n{text-align:right}.passed{color:#006b4f}.notpassed{color:#a40000;font-weight:600}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;white-space:pre-wrap}details{margin:.4rem 0}
summary{cursor:pointer;font-weight:600}@media print{details>*{display:block}}
"""


def render_student_page(student_id: str, result: SubmissionResult | None, *, display_name: str = "",
                        title: str = "", hidden_shown_to: str | None = None, error: str | None = None,
                        late: bool = False, late_by: str = "", adjusted: StudentRow | None = None) -> str:
    """The page of ``student_id``: from their ``result``, or, for a student without one, from the
    ``error`` that kept them from being graded. ``hidden_shown_to``: how the batch showed hidden
    scenarios (a :class:`~grader.visibility.ShownTo` value; None: not recorded, taken as published);
    ``late``: the LMS marked the submission late (``late_by`` ``"deadline"``: it came after the
    batch's ``--deadline``); ``adjusted``: the student's row as overrides and a late penalty made it,
    when they changed it (:mod:`grader.adjustments`)."""
    name = display_name or student_id
    heading = f"{title or (result.assignment if result else 'Assignment')}: feedback for {name}"
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">', '<link rel="icon" href="data:,">',
           f"<title>{escape(heading)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
           f"<h1>{escape(heading)}</h1>"]
    if late and late_by == "deadline":
        out.append('<p class="late"><b>Submitted late</b> (after the deadline).</p>')
    elif late:
        out.append('<p class="late"><b>Submitted late</b> (as the course site marked your submission).</p>')
    if adjusted is not None:
        said = [f"the instructor set {escape(adjusted.override)}" if adjusted.override else "",
                f"{points(adjusted.before_penalty or 0.0)} before the late penalty"
                if adjusted.before_penalty is not None and adjusted.before_penalty != adjusted.score else ""]
        out.append(f'<p class="adjusted"><b>Your grade: {points(adjusted.score)} of '
                   f'{points(adjusted.max_score or 0.0)}</b> ({"; ".join(part for part in said if part)}).</p>')
    if result is None:
        out.append(f"<p><b>Score: 0.</b> Your submission could not be graded: {escape(error or 'not graded')}</p>")
        return "\n".join([*out, "</body></html>"]) + "\n"
    shown = [s for s in result.scenarios
             if s.visibility is Visibility.PUBLIC or hidden_shown_to != ShownTo.HIDDEN.value]
    out.append(f"<p><b>Score: {points(result.score)} of {points(result.max_score)}</b>, "
               f"{passed_words((s.passed, s.max_points) for s in shown)}.</p>")
    if result.error:
        out.append(f"<p class=\"notpassed\">Your submission could not be graded:</p><pre>{escape(result.error)}</pre>")
    notice = provided_notice(result)   # the same line, the same parts, as grader check prints
    if notice:
        out.append(f'<p class="notpassed">{escape(notice)}</p>')
    if result.warnings:
        out.append(f"<details><summary>{len(result.warnings)} part{'s' * (len(result.warnings) != 1)} of your "
                   "submission not graded</summary><ul>"
                   + "".join(f"<li><code>{escape(warning)}</code></li>" for warning in result.warnings)
                   + "</ul></details>")
    printed = import_output(result)
    if printed:
        out.append(f"<details><summary>Printed while importing</summary><pre>{escape(printed)}</pre></details>")
    found: dict[str, list[str]] = {}
    for s in shown:
        if not s.passed and s.feedback.misconception:
            found.setdefault(s.feedback.misconception, []).append(s.title)
    if found and not result.error:
        out.append("<h2>Likely misconceptions</h2><ul>" + "".join(
            f"<li>{escape(text)} <small>(seen in: {escape('; '.join(titles))})</small></li>"
            for text, titles in found.items()) + "</ul>")
    listed = {task.id for task in result.tasks}
    tasks = [*result.tasks, *(TaskScore(task, task, sum(s.points for s in shown if s.task == task),
                                        sum(s.max_points for s in shown if s.task == task))
                              for task in dict.fromkeys(s.task for s in shown) if task not in listed)]
    for task in tasks:
        mine = [s for s in shown if s.task == task.id]
        if not mine:
            continue
        out.append(f"<h2>{escape(task.title)}: {points(task.score)} of {points(task.max_score)}</h2>"
                   '<table><thead><tr><th scope="col">scenario</th><th scope="col">result</th>'
                   '<th scope="col">points</th></tr></thead><tbody>')
        for s in mine:
            status = "passed" if s.passed else "notpassed"
            label = s.title + (" (hidden scenario)" if s.visibility is Visibility.HIDDEN else "")
            out.append(f'<tr><td>{escape(label)}</td><td class="{status}">{escape(STATUS_WORDS[s.status])}</td>'
                       f'<td class="n">{points(s.points)}/{points(s.max_points)}</td></tr>')
        out.append("</tbody></table>")
        for s in mine:
            if not s.passed and not result.error:
                public = s.visibility is Visibility.PUBLIC
                explained = explain(s, show_program=public)
                out.append(f"<details><summary>{escape(s.title)}</summary><pre>{escape(explained)}</pre></details>")
    if any(s.visibility is Visibility.HIDDEN for s in shown):
        out.append("<p><small>Hidden scenarios show their outcome and explanation, not their program.</small></p>")
    out.append(f"<p><small>Graded with seed {result.seed}; {escape(result.submission_sha256[:12])} is the "
               "fingerprint of the file graded.</small></p>")
    return "\n".join([*out, "</body></html>"]) + "\n"
