"""The class report's tables as data: each one is a table of the HTML report and a CSV file
(``OUT/report/<name>.csv``). Pure functions over the report's view
(:class:`~grader.report.class_view.ClassView`).

A cell holds a plain value (text, a number, or None for "none"); the kind of its column says how
to show it: in CSV every number with at most six decimals and None as an empty cell, in HTML
rates as percentages, seconds in milliseconds, correlations with two decimals, None as a dash.
"""

from __future__ import annotations

from enum import Enum

from grader.records import record
from grader.report.class_view import ClassView
from grader.report.gradebook import spreadsheet_safe
from grader.results import Status

Cell = str | int | float | None

# Status mix columns, in the order the report shows them (passed first, then how it failed).
STATUSES = (Status.PASSED, Status.FAILED, Status.ERROR, Status.TIMEOUT, Status.MEMORY, Status.CRASHED,
            Status.NOT_RUN)


class Kind(str, Enum):
    TEXT = "text"
    COUNT = "count"
    NUMBER = "number"
    RATE = "rate"         # a fraction, shown as a percentage
    SECONDS = "seconds"
    CORRELATION = "correlation"


@record
class Table:
    name: str                               # the CSV file's name, without .csv
    caption: str
    columns: tuple[tuple[str, Kind], ...]
    rows: list[tuple[Cell, ...]]

    @property
    def header(self) -> list[str]:
        return [name for name, _ in self.columns]

    def csv_rows(self) -> list[list[str]]:
        return [[_csv_cell(value, kind) for value, (_, kind) in zip(row, self.columns)] for row in self.rows]


def report_tables(view: ClassView) -> dict[str, Table]:
    """Every table of the report, by name (the table of students when the view has them)."""
    scores = view.statistics["scores"]
    tables = [
        Table("scores", "Scores of the graded submissions", (("statistic", Kind.TEXT), ("value", Kind.NUMBER)), [
            ("submissions", view.submissions), ("graded", scores["n"]),
            ("ungradable", view.submissions - scores["n"]), ("max_score", view.max_score),
            ("mean", scores["mean"]), ("sd", scores["sd"]), ("median", scores["median"]), ("min", scores["min"]),
            ("max", scores["max"]), ("at_zero", scores["at_zero"]), ("at_full_marks", scores["at_full"]),
            ("cronbach_alpha", view.statistics["alpha"])]),
        Table("histogram", "How many graded submissions scored in each range (the last includes full marks)",
              (("from", Kind.NUMBER), ("to", Kind.NUMBER), ("submissions", Kind.COUNT)),
              [(b.low, b.high, b.count) for b in view.histogram]),
        Table("ungradable", "Submissions that could not be graded (0 points each)",
              (("student_id", Kind.TEXT), ("reason", Kind.TEXT)),
              [(u.student_id, u.reason) for u in view.ungradable]),
        _tasks(view),
        _scenarios(view),
        Table("runtime", "Wall-clock time of each scenario's runs in graded submissions",
              (("scenario", Kind.TEXT), ("runs", Kind.COUNT), ("median_s", Kind.SECONDS), ("p90_s", Kind.SECONDS),
               ("max_s", Kind.SECONDS)),
              [(r.scenario, r.runs, r.median, r.p90, r.max) for r in view.runtimes]),
        Table("misconceptions", "Misconceptions the failures named: how many submissions showed each, and where",
              (("misconception", Kind.TEXT), ("submissions", Kind.COUNT), ("scenarios", Kind.TEXT)),
              [(m.text, m.students, "; ".join(f"{sid} ({n})" for sid, n in m.scenarios))
               for m in view.misconceptions]),
        _provided(view),
        Table("isolation", "The isolation the sandbox reported, per result",
              (("isolation", Kind.TEXT), ("results", Kind.COUNT)),
              [(", ".join(levels) or "none reported", count) for levels, count in view.isolation]),
        Table("ignored", "Files in SUBMISSIONS that were not graded, by rule",
              (("path", Kind.TEXT), ("why", Kind.TEXT)), list(view.ignored)),
    ]
    tables += _adjustments(view)
    if view.students is not None:
        tables.append(_students(view))
    return {table.name: table for table in tables}


def _adjustments(view: ClassView) -> list[Table]:
    """The tables of what was adjusted, each only when the run was asked for it."""
    notes = view.notes
    if notes is None:
        return []
    tables = []
    if notes.overrides is not None:
        tables.append(Table("overrides", "Overrides: who, what, from what, to what, and why", (
            ("student_id", Kind.TEXT), ("scenario", Kind.TEXT), ("from", Kind.NUMBER), ("to", Kind.NUMBER),
            ("comment", Kind.TEXT)),
            [(c.student_id, c.scenario or "(the score)", c.before, c.after, c.comment) for c in notes.overrides]))
    if notes.late_penalty is not None:
        tables.append(Table("late_penalty", f"Late submissions: {notes.late_penalty:g}% off", (
            ("student_id", Kind.TEXT), ("score", Kind.NUMBER), ("penalty", Kind.NUMBER), ("final_score", Kind.NUMBER)),
            [(p.student_id, p.before, p.penalty, p.after) for p in notes.penalised]))
    if notes.missing is not None:
        tables.append(Table("no_submission", "Students of the roster without a submission: 0 in the LMS gradebooks",
                            (("id", Kind.TEXT), ("name", Kind.TEXT)), [(m.key, m.name) for m in notes.missing]))
    return tables


def _tasks(view: ClassView) -> Table:
    by_id = {task["id"]: task for task in view.statistics["tasks"]}
    rows: list[tuple[Cell, ...]] = []
    for task in view.tasks:
        entry = by_id.get(task.id, {})
        d = entry.get("scores", {})
        rows.append((task.id, task.title, task.max_score, d.get("n"), d.get("mean"), d.get("sd"), d.get("median"),
                     d.get("min"), d.get("max"), d.get("at_zero"), d.get("at_full"), entry.get("items"),
                     entry.get("alpha")))
    return Table("tasks", "Scores per task", (
        ("task", Kind.TEXT), ("title", Kind.TEXT), ("max_score", Kind.NUMBER), ("n", Kind.COUNT),
        ("mean", Kind.NUMBER), ("sd", Kind.NUMBER), ("median", Kind.NUMBER), ("min", Kind.NUMBER),
        ("max", Kind.NUMBER), ("at_zero", Kind.COUNT), ("at_full_marks", Kind.COUNT), ("scenarios", Kind.COUNT),
        ("cronbach_alpha", Kind.NUMBER)), rows)


def _scenarios(view: ClassView) -> Table:
    items = {item["id"]: item for item in view.statistics["scenarios"]}
    rows: list[tuple[Cell, ...]] = []
    for scenario, counts in zip(view.scenarios, view.status_mix):
        item = items.get(scenario.id, {})
        runs = sum(counts.values())
        rows.append((scenario.id, scenario.title, scenario.task, scenario.visibility, scenario.max_points, runs,
                     *(counts.get(status, 0) for status in STATUSES), item.get("difficulty"),
                     item.get("item_rest"), ", ".join(item.get("flags", ()))))
    return Table("scenarios", "Per scenario: how the graded submissions ended, difficulty and discrimination", (
        ("scenario", Kind.TEXT), ("title", Kind.TEXT), ("task", Kind.TEXT), ("visibility", Kind.TEXT),
        ("points", Kind.NUMBER), ("runs", Kind.COUNT), *((status.value, Kind.COUNT) for status in STATUSES),
        ("difficulty", Kind.RATE), ("item_rest", Kind.CORRELATION), ("flags", Kind.TEXT)), rows)


NOT_RECORDED = "Changes to the provided engine: not recorded (results before schema version 2 do not record them)"


def _provided(view: ClassView) -> Table:
    caption = "Submissions that changed the provided engine, and what" if view.provided_recorded else NOT_RECORDED
    rows: list[tuple[Cell, ...]] = [(student, change.name, change.kind, change.first_line, change.last_line)
                                    for student, changes in view.provided_changes for change in changes]
    return Table("provided_changes", caption, (("student_id", Kind.TEXT), ("part", Kind.TEXT), ("kind", Kind.TEXT),
                                               ("first_line", Kind.COUNT), ("last_line", Kind.COUNT)), rows)


def _students(view: ClassView) -> Table:
    rows: list[tuple[Cell, ...]] = [
        (line.student_id, line.name, line.score, line.max_score, line.status, "yes" if line.late else "",
         line.scenarios_passed, line.misconceptions) for line in view.students or ()]
    return Table("students", "Students (late: as the LMS marked the submission)", (
        ("student_id", Kind.TEXT), ("name", Kind.TEXT), ("score", Kind.NUMBER), ("max_score", Kind.NUMBER),
        ("status", Kind.TEXT), ("late", Kind.TEXT), ("scenarios_passed", Kind.COUNT), ("misconceptions", Kind.COUNT)),
        rows)


def _csv_cell(value: Cell, kind: Kind) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{round(value, 6):.6f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return str(value)
    return spreadsheet_safe(value) if kind is Kind.TEXT else value


def html_cell(value: Cell, kind: Kind) -> str:
    """A cell as a person reads it (not escaped)."""
    if value is None or value == "":
        return "–"
    if isinstance(value, str):
        return value
    if kind is Kind.RATE:
        return f"{value:.0%}"
    if kind is Kind.SECONDS:
        return f"{value * 1000:.1f} ms"
    if kind is Kind.CORRELATION:
        return f"{value:.2f}"
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return str(value)
