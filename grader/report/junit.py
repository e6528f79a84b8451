"""JUnit XML (``--junit FILE``) for CI systems and GitHub Classroom: a suite per submission.

Layout, in the dialect most CI tools read (pytest's, Jenkins')::

    <testsuites name="autodiff-grader" tests= failures= errors= skipped= time=>
      <testsuite name="<student id>" tests= failures= errors= skipped= time=>
        <testcase classname="<assignment>.<task>" name="<scenario id>" time=>
          <failure message="<summary>">explanation</failure>        failed
          <error type="<status>" message="<summary>">...</error>   error, timeout, memory, crashed
          <skipped message="<summary>"/>                            not_run
          <system-out>/<system-err>                                 the student's captured output
        </testcase>
        <testcase classname="<assignment>" name="submission">       only when it could not be graded
          <error type="ungradable" message="<why>"/>
        <system-out>/<system-err>                                   printed while it was imported
      ...

Student output is arbitrary text: ElementTree escapes markup (``<``, ``&``, ``]]>``), and the
characters XML 1.0 cannot carry at all (NUL, ESC, other C0 controls, lone surrogates) are
replaced by a visible ``\\xNN`` (or ``\\uNNNN``) so the file always parses.
"""

from __future__ import annotations

import io
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TextIO

from grader.report.text import explain
from grader.results import ScenarioResult, Status, SubmissionResult

_ERRORS = {Status.ERROR, Status.TIMEOUT, Status.MEMORY, Status.CRASHED}
# Everything outside XML 1.0's Char production (https://www.w3.org/TR/xml/#charsets).
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def to_junit_xml(results: Iterable[tuple[str, SubmissionResult]]) -> str:
    """JUnit XML for ``(student id, result)`` pairs, one ``<testsuite>`` each, in the given order.

    Returns the document as text with an XML declaration; write it encoded as UTF-8.
    """
    text = io.StringIO()
    write_junit_xml(results, text)
    return text.getvalue()


def write_junit_xml(results: Iterable[tuple[str, SubmissionResult]], stream: TextIO) -> None:
    """Write :func:`to_junit_xml`'s document to ``stream``, holding one suite in memory at a time
    (a batch of thousands streams its results from disk). The root's counts come before the
    suites in the file, so the suites wait in a temporary file until all are counted."""
    counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    seconds = 0.0
    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="") as suites:
        for student, result in results:
            suite = _suite(student, result)
            for attribute in counts:
                counts[attribute] += int(suite.get(attribute, 0))
            seconds += float(suite.get("time", 0))
            ET.indent(suite, level=1)
            suites.write("  " + ET.tostring(suite, encoding="unicode") + "\n")
        root = ET.Element("testsuites", {"name": "autodiff-grader", **{attribute: str(count) for attribute, count
                                                                       in counts.items()}, "time": f"{seconds:.3f}"})
        opening = ET.tostring(root, encoding="unicode", short_empty_elements=False).removesuffix("</testsuites>")
        stream.write('<?xml version="1.0" encoding="UTF-8"?>\n' + opening + "\n")
        suites.seek(0)
        shutil.copyfileobj(suites, stream)
        stream.write("</testsuites>\n")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids replaced by a visible ``\\xNN``/``\\uNNNN`` escape."""
    return _NOT_XML.sub(_escape, text)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"  # as Python would write it


def _suite(student: str, result: SubmissionResult) -> ET.Element:
    suite = ET.Element("testsuite", name=xml_safe(student))
    for scenario in result.scenarios:
        suite.append(_case(result.assignment, scenario))
    if result.error:
        # A suite of skipped cases would read as green in CI; an error case makes it red.
        case = ET.SubElement(suite, "testcase", classname=xml_safe(result.assignment), name="submission",
                             time="0.000")
        ET.SubElement(case, "error", type="ungradable", message=xml_safe(result.error)).text = \
            xml_safe(result.error)
    _count(suite, result.timings.get("total"))
    for tag, text in (("system-out", result.import_stdout), ("system-err", result.import_stderr)):
        if text:  # printed while the submission was imported, before any scenario
            ET.SubElement(suite, tag).text = xml_safe(text)
    return suite


def _case(assignment: str, scenario: ScenarioResult) -> ET.Element:
    case = ET.Element("testcase", classname=xml_safe(f"{assignment}.{scenario.task}"),
                      name=xml_safe(scenario.id), time=f"{scenario.duration:.3f}")
    summary = xml_safe(scenario.feedback.summary)
    detail = xml_safe(explain(scenario, show_program=scenario.visibility == "public"))
    if scenario.status is Status.FAILED:
        ET.SubElement(case, "failure", message=summary).text = detail
    elif scenario.status in _ERRORS:
        ET.SubElement(case, "error", type=scenario.status.value, message=summary).text = detail
    elif scenario.status is Status.NOT_RUN:
        ET.SubElement(case, "skipped", message=summary)
    for tag, text in (("system-out", scenario.feedback.stdout), ("system-err", scenario.feedback.stderr)):
        if text:
            ET.SubElement(case, tag).text = xml_safe(text)
    return case


def _count(suite: ET.Element, time: float | None) -> None:
    """Set tests/failures/errors/skipped/time on a suite, from its cases."""
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    for tag, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(attribute, str(sum(case.find(tag) is not None for case in cases)))
    if time is None:
        time = sum(float(case.get("time", 0)) for case in cases)
    suite.set("time", f"{time:.3f}")
