"""The class report (``OUT/report.html``): one self-contained HTML page, a pure function of the
report's view (:class:`~grader.report.class_view.ClassView`: every table and series it shows).

Self-contained and offline: the styles, the plots (inline SVG, :mod:`grader.report.svg`) and a
short script are in the page; it names no other resource, so opening it makes no request. The
script only adds sorting to the table of students: every table reads the same without it. The
same view gives the same bytes, apart from the one line that says when it was made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from grader.class_stats import TOO_EASY, TOO_HARD, WEAK_DISCRIMINATION
from grader.report import svg
from grader.report.class_tables import NOT_RECORDED, STATUSES, Kind, Table, html_cell, report_tables
from grader.report.class_view import ClassView
from grader.results import Status

STATUS_COLOURS = {  # Okabe-Ito
    Status.PASSED: "#009E73", Status.FAILED: "#D55E00", Status.ERROR: "#E69F00", Status.TIMEOUT: "#CC79A7",
    Status.MEMORY: "#56B4E9", Status.CRASHED: "#000000", Status.NOT_RUN: "#BBBBBB",
}
MISCONCEPTIONS_PLOTTED = 30   # the table lists them all

EXPLAIN = {
    "difficulty": "Difficulty (facility): the share of graded submissions that passed the scenario. "
                  f"Flagged too easy at {TOO_EASY:.0%} or more, too hard at {TOO_HARD:.0%} or less.",
    "item_rest": "Item-rest correlation (discrimination): how well passing the scenario goes with doing well on "
                 "the others (the correlation of its points with the rest of the score, the scenario itself left "
                 f"out). Below {WEAK_DISCRIMINATION:.2f} it tells strong and weak submissions apart little or not at "
                 "all; below 0 the weaker submissions pass it more often; none when everyone scored the same on it.",
    "alpha": "Cronbach's alpha: how consistently the scenarios rank the submissions, from 1 (every scenario "
             "agrees) down; around 0.7 or more is usual for a test that measures one skill; low or negative "
             "values mean the scenarios measure different things (expected when tasks are independent).",
}

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;max-width:76rem;margin:0 auto;
padding:1rem 1.5rem;line-height:1.45}p,ul,nav{max-width:60rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:2px solid #ddd;padding-bottom:.2rem}
.generated,.meta{color:#555;margin:.2rem 0}nav ol{columns:2}
table{border-collapse:collapse;margin:.6rem 0 1.2rem;font-size:.85rem}
caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border-bottom:1px solid #ddd;padding:.25rem .4rem;text-align:left;vertical-align:top}
td{overflow-wrap:break-word}td.n{white-space:nowrap}table.sortable td{overflow-wrap:anywhere}
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f3f3}
th button{font:inherit;font-weight:600;background:none;border:0;padding:0;cursor:pointer}
figure{margin:1rem 0}figure svg{max-width:100%;height:auto}figcaption{color:#555;font-size:.9rem}
.explain{background:#f6f8fa;border-left:4px solid #0072B2;padding:.4rem .8rem}
.pair{display:flex;flex-wrap:wrap;gap:0 2.5rem;align-items:flex-start}.pair caption{max-width:16rem}
.csv{font-size:.85rem;color:#555}
.wide{overflow-x:auto}
@media print{nav,.csv{display:none}body{max-width:none;padding:0}h2{break-after:avoid}.wide{overflow:visible}
table{font-size:.68rem}th,td{padding:.1rem .25rem}
figure,tr{break-inside:avoid}*{print-color-adjust:exact;-webkit-print-color-adjust:exact}}
"""

# Progressive enhancement: sort the students' table by a column on a click. Without it the table
# reads the same, in student id order.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, column) {
    var button = document.createElement("button");
    button.type = "button";
    while (th.firstChild) { button.appendChild(th.firstChild); }   // the name, with its <wbr>s
    th.appendChild(button);
    button.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(table.tBodies[0].rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].getAttribute("data-value") || a.cells[column].textContent;
        var y = b.cells[column].getAttribute("data-value") || b.cells[column].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return up ? order : -order;
      });
      rows.forEach(function (row) { table.tBodies[0].appendChild(row); });
    });
  });
});
"""


def render_report(view: ClassView, *, generated: str, students_href: str = "students/", csv_href: str = "report/",
                  tables: dict[str, Table] | None = None) -> str:
    """The report page of ``view`` (with the table of students when the view has them).
    ``generated``: the one line that may differ between two renders of the same view (when it was
    made); ``students_href``, ``csv_href``: where the students' pages and the CSV files are,
    relative to the page; ``tables``: :func:`report_tables` of the same view, when the caller has
    them already."""
    if tables is None:
        tables = report_tables(view)
    title = f"Class report: {view.title or view.assignment}"
    sections = [
        ("scores", "Scores", _scores(view, tables)),
        ("tasks", "Tasks", _tasks(view, tables)),
        ("scenarios", "Scenarios", _scenarios(view, tables)),
        ("reliability", "Reliability", _reliability(view)),
        ("misconceptions", "Misconceptions", _misconceptions(view, tables)),
        ("provided", "Changes to the provided engine", _provided(view, tables["provided_changes"])),
        ("runtime", "Runtime and isolation", _runtime(view, tables)),
    ]
    adjusted = [name for name in ("overrides", "late_penalty", "no_submission") if name in tables]
    if adjusted:   # only when the batch was asked to adjust the grades
        sections.insert(1, ("adjustments", "Adjustments", _adjustments(view, [tables[name] for name in adjusted])))
    if view.students is not None:
        sections.append(("students", "Students", _table(tables["students"], sortable=True,
                                                        link=lambda sid: f"{students_href}{quote(sid)}.html")))
    out = ['<!DOCTYPE html>', '<html lang="en">', '<head>', '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<link rel="icon" href="data:,">',   # no favicon request
           f"<title>{escape(title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
           f"<header><h1>{escape(title)}</h1>",
           f'<p class="meta">Assignment <code>{escape(view.assignment)}</code>'
           + (f", seed {view.seed}" if view.seed is not None else "")
           + f": {view.submissions} submissions, {view.graded} graded, "
             f"out of {_num(view.max_score)} points.</p>",
           f'<p class="generated">{escape(generated)}</p>', "</header>",
           '<nav aria-label="Contents"><ol>'
           + "".join(f'<li><a href="#{sid}">{escape(name)}</a></li>' for sid, name, _ in sections) + "</ol></nav>",
           "<main>"]
    for sid, name, body in sections:
        out.append(f'<section id="{sid}" aria-labelledby="{sid}-h"><h2 id="{sid}-h">{escape(name)}</h2>')
        out.append(body)
        out.append("</section>")
    out.append("</main>")
    out.append('<footer class="csv"><p>Every table as CSV: '
               + ", ".join(f'<a href="{csv_href}{name}.csv">{name}.csv</a>' for name in tables) + ".</p></footer>")
    out.append(f"<script>{SCRIPT}</script>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _scores(view: ClassView, tables: dict[str, Table]) -> str:
    bins = [(float(lo or 0), float(hi or 0), int(count or 0)) for lo, hi, count in tables["histogram"].rows]
    graded = view.graded
    body = svg.histogram(
        "plot-scores", "Score distribution",
        f"Histogram of the total scores of {graded} graded submissions in {len(bins)} ranges of "
        f"{_num(view.max_score / max(len(bins), 1))} points: "
        + "; ".join(f"{_num(lo)} to {_num(hi)}: {count}" for lo, hi, count in bins) + ".",
        [(f"{_num(lo)}–{_num(hi)}", count) for lo, hi, count in bins], "score (points)")
    body += f'<div class="pair">{_table(tables["scores"])}{_table(tables["histogram"])}</div>'
    if tables["ungradable"].rows:
        body += _table(tables["ungradable"])
    if tables["ignored"].rows:
        body += _table(tables["ignored"])
    return body


def _adjustments(view: ClassView, tables: list[Table]) -> str:
    """What the instructor changed of the grades the scenarios gave: the scores above are the final ones."""
    said = ('<p class="explain">The scores above are the final ones: overrides first, then the late penalty. '
            "The scenarios' statistics below are of the grading itself.</p>")
    return said + "".join(_table(table) for table in tables)


def _tasks(view: ClassView, tables: dict[str, Table]) -> str:
    out = []
    for task in view.tasks:
        values = view.task_scores[task.id]
        if task.max_score <= 0:
            out.append(f"<p>Task {escape(task.title)} carries no points: its scenarios appear below.</p>")
            continue
        bins = _bins(values, task.max_score)
        out.append(svg.histogram(
            f"plot-task-{_slug(task.id)}", f"Scores on task {task.title}",
            f"Histogram of the points {len(values)} graded submissions earned on task {task.title} "
            f"(out of {_num(task.max_score)}): " + "; ".join(f"{label}: {count}" for label, count in bins) + ".",
            bins, f"points on {task.id}"))
    # Two views of the tasks table: thirteen columns squeeze the titles to a word a line in a narrow window.
    return ("".join(out) + _table(tables["tasks"], columns=("task", "title", "max_score", "n", "mean", "sd", "median",
                                                             "min", "max"))
            + _table(tables["tasks"], columns=("task", "at_zero", "at_full_marks", "scenarios", "cronbach_alpha"),
                     part="-reliability", caption="Per task: at zero, at full marks, and the consistency of its "
                                                  "scenarios"))


def _scenarios(view: ClassView, tables: dict[str, Table]) -> str:
    mix = view.status_mix
    order = sorted(range(len(view.scenarios)),
                   key=lambda i: (_rate(mix[i]) if _rate(mix[i]) is not None else 2.0, i))
    bars = []
    for i in order:
        counts = mix[i]
        rate = _rate(counts)
        segments = [svg.Segment(s.value, counts.get(s, 0), STATUS_COLOURS[s]) for s in STATUSES]
        bars.append((view.scenarios[i].id, segments, "–" if rate is None else f"{rate:.0%}"))
    legend = [(s.value, STATUS_COLOURS[s]) for s in STATUSES if any(m.get(s) for m in mix)]
    worst = ", ".join(f"{view.scenarios[i].id} {_rate(mix[i]):.0%}" for i in order[:3] if _rate(mix[i]) is not None)
    body = svg.stacked_bars(
        "plot-status", "Pass rate and status mix per scenario",
        f"For each of {len(view.scenarios)} scenarios, lowest pass rate first, the share of graded submissions that "
        f"passed, failed, raised an error, timed out, ran out of memory, crashed or did not run. "
        f"Lowest: {worst or 'none'}. The scenarios table below gives every count.",
        bars, legend, "share of graded submissions")
    # The scenarios table is two views, each beside its plot: sixteen columns fit no narrow window.
    body += _table(tables["scenarios"], columns=("scenario", "runs", *(s.value for s in STATUSES)), part="-status",
                   caption="Per scenario: how the graded submissions ended")
    items = [item for item in view.statistics["scenarios"] if item["difficulty"] is not None]
    points = [(item["difficulty"], item["item_rest"] if item["item_rest"] is not None else 0.0,
               item["id"] + ("" if item["item_rest"] is not None else " (no variance)"), bool(item["flags"]))
              for item in items]
    flagged = [item for item in items if item["flags"]]
    body += svg.scatter(
        "plot-items", "Difficulty against discrimination",
        f"One dot per scenario: its pass rate (x) against its item-rest correlation (y). {len(flagged)} of "
        f"{len(items)} are flagged (hollow dots): "
        + ("; ".join(f"{item['id']}: {', '.join(item['flags'])}" for item in flagged) or "none") + ".",
        points, "difficulty (pass rate)", "item-rest correlation", (0.0, 1.0), (-1.0, 1.0),
        guides=[("y", WEAK_DISCRIMINATION, f"weak below {WEAK_DISCRIMINATION}"), ("y", 0.0, "0"),
                ("x", TOO_EASY, "too easy")])
    body += (f'<p class="explain">{escape(EXPLAIN["difficulty"])}<br>{escape(EXPLAIN["item_rest"])}</p>'
             + _table(tables["scenarios"], columns=("scenario", "title", "task", "visibility", "points", "difficulty",
                                                    "item_rest", "flags"),
                      caption="Per scenario: difficulty and discrimination"))
    return body


def _reliability(view: ClassView) -> str:
    titles = {task.id: task.title for task in view.tasks}
    rows = [("all scenarios", len(view.scenarios), view.statistics["alpha"])]
    rows += [(f"task {titles.get(task['id'], task['id'])}", task["items"], task["alpha"])
             for task in view.statistics["tasks"]]
    lines = "".join(f"<li>{escape(name)} ({count} scenarios): α = {_alpha(value)}</li>" for name, count, value in rows)
    return (f'<p class="explain">{escape(EXPLAIN["alpha"])}</p><ul>{lines}</ul>'
            "<p>Alpha is none with fewer than two scenarios or two graded submissions, or when every graded "
            "submission has the same score.</p>")


def _misconceptions(view: ClassView, tables: dict[str, Table]) -> str:
    found = view.misconceptions
    if not found:
        return "<p>No failure named a misconception.</p>"
    shown = found[:MISCONCEPTIONS_PLOTTED]
    bars = [(m.text, float(m.students), str(m.students)) for m in shown]   # where: in the table below
    graded = view.graded
    body = svg.horizontal_bars(
        "plot-misconceptions", "Misconceptions: how many submissions showed each",
        f"{len(found)} misconceptions named by failing scenarios, most common first, out of {graded} graded "
        "submissions: " + "; ".join(f"{m.text}: {m.students}" for m in shown) + ".",
        bars, "graded submissions showing it", maximum=float(max(graded, 1)), label_above=True,
        caption=(f"The {MISCONCEPTIONS_PLOTTED} most common of {len(found)}; the table lists them all."
                 if len(found) > MISCONCEPTIONS_PLOTTED else ""))
    return body + _table(tables["misconceptions"])


def _provided(view: ClassView, table: Table) -> str:
    if not view.provided_recorded:
        return f"<p>{escape(NOT_RECORDED.split(': ', 1)[1].capitalize())}.</p>"
    return _table(table) if table.rows else "<p>No submission changed the provided engine.</p>"


def _runtime(view: ClassView, tables: dict[str, Table]) -> str:
    times = [r for r in view.runtimes if r.median is not None]
    body = ""
    if times:
        body = svg.horizontal_bars(
            "plot-runtime", "Runtime per scenario",
            "Median wall-clock time of each scenario's runs (milliseconds), with the 90th percentile and the "
            "longest: " + "; ".join(f"{r.scenario}: {_ms(r.median)}" for r in times) + ".",
            [(r.scenario, (r.median or 0) * 1000, _ms(r.median)) for r in times], "median time (ms)",
            caption="The 90th percentile and the longest run of each are in the table.")
    return body + _table(tables["runtime"]) + _table(tables["isolation"])


def _table(table: Table, sortable: bool = False, link=None, columns: Sequence[str] | None = None,
           part: str = "", caption: str | None = None) -> str:
    """``table`` as HTML; ``columns``: only these of its columns (a view of a wide table, ``part``
    naming it, under its own ``caption``), every one by default."""
    if not table.rows:
        return f"<p><b>{escape(caption or table.caption)}</b>: none.</p>"
    shown = set(columns) if columns is not None else {name for name, _ in table.columns}
    # A column's name may break after an underscore (item_<wbr>rest): a narrow window keeps every column.
    head = "".join(f'<th scope="col">{escape(name).replace("_", "_<wbr>")}</th>' for name, _ in table.columns
                   if name in shown)
    body = []
    for row in table.rows:
        cells = []
        for j, (value, (name, kind)) in enumerate(zip(row, table.columns)):
            if name not in shown:
                continue
            text = escape(html_cell(value, kind))
            if kind is Kind.TEXT and not sortable:   # ids break after an underscore before anywhere else
                text = text.replace("_", "_<wbr>")
            if j == 0 and link is not None:
                text = f'<a href="{escape(link(str(value)))}">{text}</a>'
            numeric = kind is not Kind.TEXT
            attributes = ' class="n"' if numeric else ""
            if sortable and numeric and value is not None:
                attributes += f' data-value="{value}"'
            cells.append(f"<td{attributes}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    classes = ' class="sortable"' if sortable else ""
    return (f'<div class="wide"><table id="table-{table.name}{part}"{classes}><caption>'
            f'{escape(caption or table.caption)} <span class="csv">({table.name}.csv)</span></caption>'
            f"<thead><tr>{head}</tr></thead><tbody>" + "\n".join(body) + "</tbody></table></div>")


def _bins(values: Sequence[float], maximum: float, count: int = 10) -> list[tuple[str, int]]:
    width = maximum / count if maximum > 0 else 1.0
    bins = [0] * count
    for value in values:
        bins[min(max(math.floor(value / width + 1e-9), 0), count - 1)] += 1
    return [(f"{_num(i * width)}–{_num((i + 1) * width)}", n) for i, n in enumerate(bins)]


def _rate(counts) -> float | None:
    total = sum(counts.values())
    return counts.get(Status.PASSED, 0) / total if total else None


def _alpha(value: float | None) -> str:
    return "none" if value is None else f"{value:.2f}"


def _ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1000:.1f} ms"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}".rstrip("0").rstrip(".")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text)
