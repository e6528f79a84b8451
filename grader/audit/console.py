"""The audit on the console: summary, scores, kill matrix, diagnoses, survivors, then what to fix. Pure."""

from __future__ import annotations

from collections.abc import Callable

from grader.audit.mutant import Kind, diff
from grader.audit.report import AuditReport
from grader.audit.verdicts import GUARANTEES, Cell, MutantStatus, Severity, Verdict

Style = Callable[[str, str], str]   # (text, role) -> text; roles: pass, fail, warn, dim, bold

CELL_MARKS = {Cell.PASSED: ".", Cell.FAILED: "F", Cell.ERROR: "E", Cell.TIMEOUT: "T"}
NAME_WIDTH = 44
WIDTH = 100      # findings wrap here


def plain(text: str, role: str) -> str:
    return text


def render(report: AuditReport, style: Style = plain, matrix: bool = True) -> str:
    out = _summary(report, style)
    out += ["", *_scores(report, style)]
    if matrix and report.analysis.outcomes:
        out += ["", *_matrix(report, style)]
    named = [o for o in report.analysis.outcomes if o.mutant.kind is Kind.NAMED]
    if named:
        out += ["", *_diagnoses(named, style)]
    judged = [o for o in report.analysis.outcomes
              if o.diagnosis is not None and o.diagnosis.verdict is Verdict.TO_JUDGE]
    if judged:
        out += ["", *_to_judge(judged, report, style)]
    equivalent = [o for o in report.analysis.outcomes if o.status is MutantStatus.EQUIVALENT]
    if equivalent:
        out += ["", style(f"Equivalent mutants ({len(equivalent)}, declared in mutants.yaml, not run)", "bold")]
        for outcome in equivalent:
            out += _wrapped(f"{outcome.mutant.id}: {outcome.mutant.equivalent}", "  ", "      ")
    survivors = [o for o in report.analysis.outcomes if o.status is MutantStatus.SURVIVED]
    if survivors:
        out += ["", style(f"Surviving mutants ({len(survivors)})", "bold")]
        for outcome in survivors:
            mutant = outcome.mutant
            out += [f"  {mutant.id} ({mutant.kind.value}, {mutant.task}): {mutant.description}"]
            changes = diff(report.reference_source, mutant.source, report.submission)
            out += ["    " + line for line in changes.splitlines()]
    out += ["", *_findings(report, style), "", *_verdict(report, style)]
    return "\n".join(out) + "\n"


def _summary(report: AuditReport, style: Style) -> list[str]:
    analysis = report.analysis
    public = sum(s.visibility == "public" for s in report.scenarios)
    named = sum(o.mutant.kind is Kind.NAMED for o in analysis.outcomes)
    automatic = len(analysis.outcomes) - named
    seeds = report.seeds
    seed_text = f"seeds {seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}"
    what = (f"{len(report.scenarios)} scenarios ({public} public, {len(report.scenarios) - public} hidden) in "
            f"{len(report.tasks)} tasks; the reference on {seed_text}; the handout and {named} named and "
            f"{automatic} automatic mutants on seed {report.mutant_seed} ({report.timings['total']:.1f} s)")
    lines = [style(f"Audit of {report.assignment}: {report.title}", "bold"), what, ""]
    failing = [row for row in analysis.reference if row.failed]
    text = (f"full on all {len(seeds)} seeds" if not failing else
            f"{len(failing)} scenario{'s' * (len(failing) != 1)} not passed on some seed")
    lines.append(f"  Reference  {style(text, 'fail' if failing else 'pass')}")
    rows = [row for row in analysis.reference if row.slowest > 0]
    if rows:
        tight = min(rows, key=lambda row: row.margin)
        lines.append(f"  Timing     smallest margin {tight.margin:.1f}x: {tight.id} took {tight.slowest:.3g} s "
                     f"of {tight.time_limit:g} s")
    free = sum(points for _, points in analysis.free_points)
    score = f"{analysis.handout_score:g} point{'s' * (analysis.handout_score != 1)}"
    lines.append(f"  Handout    {style(score, 'fail' if free else 'pass')}"
                 + (f" ({', '.join(sid for sid, _ in analysis.free_points)})" if free else ""))
    return lines


def _scores(report: AuditReport, style: Style) -> list[str]:
    lines = [style("Mutation score per task     named killed   automatic killed", "bold")]
    for score in report.analysis.tasks:
        named = f"{score.named_killed}/{score.named_total}" if score.named_total else "-"
        automatic = "-"
        if score.automatic_total:
            automatic = f"{score.automatic_killed}/{score.automatic_total} ({score.score:.0%})"
            if score.automatic_equivalent:
                automatic += f", {score.automatic_equivalent} equivalent excluded"
        lines.append(f"  {score.task:<26}{named:<15}{automatic}")
    return lines


def _matrix(report: AuditReport, style: Style) -> list[str]:
    scenarios = sorted(report.scenarios, key=lambda s: s.visibility != "public")
    public = sum(s.visibility == "public" for s in scenarios)

    def row(cells: list[str]) -> str:
        return "".join(cells[:public]) + " " + "".join(cells[public:])

    baseline = report.analysis.baseline
    indent = " " * (NAME_WIDTH + 3)
    numbers = [str(i + 1) for i in range(len(scenarios))]
    unused = "  - the reference fails it too" if len(baseline) < len(scenarios) else ""
    lines = [style(f"Kill matrix  (. passed  F a check failed  E error  T timeout{unused}; a column per "
                   "scenario, numbered below; then the points each task lost, how many of a provided-code "
                   "mutant's failed task scenarios say the change may be the cause, and the misconceptions "
                   "named)", "bold"),
             indent + row([n[-2] if len(n) > 1 and n[-1] == "0" else " " for n in numbers]),
             indent + row([n[-1] for n in numbers])]
    for outcome in report.analysis.outcomes:
        name = _fit(outcome.mutant.id, NAME_WIDTH)
        if outcome.status is MutantStatus.EQUIVALENT:
            lines.append(f"  {name:<{NAME_WIDTH}} " + style("(equivalent: not run)", "dim"))
            continue
        marks = row([CELL_MARKS[outcome.cells.get(s.id, Cell.ERROR)] if s.id in baseline else "-" for s in scenarios])
        flag = style(" survives", "fail") if outcome.status is MutantStatus.SURVIVED else _what_it_did(outcome, report)
        lines.append(f"  {name:<{NAME_WIDTH}} {marks}{flag}")
    lines.append("  Scenarios: " + "  ".join(f"{i + 1} {s.id}" + ("" if s.visibility == "public" else " (hidden)")
                                             for i, s in enumerate(scenarios)))
    return _wrap_last(lines)


def _what_it_did(outcome, report: AuditReport) -> str:
    """A killed mutant's row end: the tasks it cost points in, the provided-code note, what was named."""
    parts = ["costs " + ", ".join(f"{c.task} {c.points:g}" for c in outcome.costs) if outcome.costs else "costs 0"]
    if outcome.noted is not None and (outcome.noted or outcome.unnoted):
        parts.append(f"note {len(outcome.noted)}/{len(outcome.noted) + len(outcome.unnoted)}")
    if outcome.diagnosis is not None and outcome.diagnosis.named:
        names = sorted({_label(m, report) for _, m in outcome.diagnosis.named})
        parts.append(_fit(", ".join(names), 60))
    return "  " + "; ".join(parts)


def _label(sentence: str, report: AuditReport) -> str:
    return report.misconception_keys.get(sentence) or _fit(sentence, 30)


def _to_judge(judged, report: AuditReport, style: Style) -> list[str]:
    lines = [style(f"Automatic mutants whose feedback names a misconception ({len(judged)}): judge whether each "
                   "is right", "bold")]
    for outcome in judged:
        diagnosis = outcome.diagnosis
        named = sorted({(_label(m, report), sid) for sid, m in diagnosis.named if sid not in diagnosis.controls})
        text = ", ".join(f"{label} ({sid})" for label, sid in named[:3]) + (" ..." if len(named) > 3 else "")
        lines += _wrapped(f"{outcome.mutant.id} [{outcome.mutant.description}]: {text}", "  ", "      ")
    return lines


def _wrap_last(lines: list[str], width: int = WIDTH) -> list[str]:
    """Wrap the legend line (the last) at two spaces before ``width``."""
    import textwrap
    legend = lines.pop()
    return lines + textwrap.wrap(legend, width, subsequent_indent="    ", break_on_hyphens=False)


def _diagnoses(named, style: Style) -> list[str]:
    lines = [style("Diagnosis of the named mutants (the misconceptions their feedback names)", "bold")]
    for outcome in named:
        mutant = outcome.mutant
        if outcome.status is not MutantStatus.KILLED:
            lines.append(f"  {style('SURVIVES', 'fail')}  {mutant.id}")
            continue
        diagnosis = outcome.diagnosis
        word = {Verdict.NAMED: style("right   ", "pass"), Verdict.WRONG: style("WRONG   ", "fail"),
                Verdict.NONE: style("none    ", "dim")}[diagnosis.verdict]
        named_ids = sorted({sid for sid, _ in diagnosis.named})
        detail = f"named in {_some(named_ids)}" if named_ids else f"caught by {_some(outcome.killed_by)}"
        if diagnosis.verdict is Verdict.WRONG:
            wrong = next(text for _, text in diagnosis.named if text not in mutant.misconceptions)
            detail = f"wrongly: {_fit(wrong, 70)}"
        lines.append(f"  {word}  {mutant.id}: {detail}")
    return lines


def _findings(report: AuditReport, style: Style) -> list[str]:
    findings = report.analysis.findings
    if not findings:
        return [style("Nothing to fix.", "pass")]
    fails = sum(f.severity is Severity.FAIL for f in findings)
    lines = [style(f"What to fix ({fails} failing, {len(findings) - fails} warnings)", "bold")]
    previous_fix = None
    for finding in findings:
        word = style("FAIL", "fail") if finding.severity is Severity.FAIL else style("warn", "warn")
        lines += _wrapped(f"{finding.kind.value}: {finding.message}", f"  {word} ", "       ")
        if finding.fix != previous_fix:
            lines += [style(line, "dim") for line in _wrapped(finding.fix, "       fix: ", "            ")]
        previous_fix = finding.fix
    return lines


def _verdict(report: AuditReport, style: Style) -> list[str]:
    holds = report.analysis.guarantees()
    lines = [style("Guarantees", "bold")]
    for name, (_, description) in GUARANTEES.items():
        mark = style("ok  ", "pass") if holds[name] else style("FAIL", "fail")
        lines.append(f"  {mark} {name}: {description}")
    failed = [name for name, ok in holds.items() if not ok]
    if failed:
        lines.append(style(f"Audit FAILED: {len(failed)} of {len(holds)} guarantees do not hold "
                           f"({', '.join(failed)}).", "fail"))
    else:
        lines.append(style("Audit passed: every guarantee holds.", "pass"))
    return lines + _wrapped(_closing(report), "", "")


def _closing(report: AuditReport) -> str:
    """The counts, the score per task and the time, in one sentence."""
    outcomes = report.analysis.outcomes
    automatic = [o.mutant for o in outcomes if o.mutant.kind is Kind.AUTOMATIC]
    operators = len({m.operator for m in automatic if m.operator})
    provided = sum(m.task == report.provided_task for m in automatic)
    scores = ", ".join(f"{s.task} {s.score:.0%}" for s in report.analysis.tasks if s.score is not None)
    minutes, seconds = divmod(report.timings["total"], 60)
    named = len(outcomes) - len(automatic)
    return (f"{operators} operator{'s' * (operators != 1)} made {len(automatic)} automatic mutants ({provided} of the "
            f"provided code), beside {named} named one{'s' * (named != 1)}; mutation score per task: "
            f"{scores or 'none'}; {int(minutes)} min {seconds:.0f} s.")


def _wrapped(text: str, first: str, rest: str) -> list[str]:
    """``text`` wrapped at WIDTH columns; ``first`` may hold colour codes, so it is added after."""
    import textwrap
    visible = len(rest)
    lines = textwrap.wrap(text, WIDTH - visible, break_on_hyphens=False, break_long_words=False) or [""]
    return [first + lines[0]] + [rest + line for line in lines[1:]]


def _some(items, shown: int = 3) -> str:
    items = list(items)
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
