"""The JUnit XML reporter: parsed back with ElementTree, including hostile student output."""

import dataclasses
import xml.etree.ElementTree as ET

import pytest

from grader.report.junit import to_junit_xml, xml_safe
from grader.results import Feedback, Status


def counts(element):
    return {k: int(element.get(k)) for k in ("tests", "failures", "errors", "skipped")}


def test_output_printed_at_import_is_the_suites_own(correct):
    printed = dataclasses.replace(correct, import_stdout="loaded\n", import_stderr="")
    suite = ET.fromstring(to_junit_xml([("alice", printed)])).find("testsuite")
    assert suite.find("system-out").text == "loaded\n" and suite.find("system-err") is None
    assert ET.fromstring(to_junit_xml([("alice", correct)])).find("testsuite/system-out") is None


def test_suites_and_cases(correct, wrong, ungradable):
    root = ET.fromstring(to_junit_xml([("alice", correct), ("bob", wrong), ("carol", ungradable)]))
    assert root.tag == "testsuites"
    alice, bob, carol = root.findall("testsuite")
    assert [s.get("name") for s in (alice, bob, carol)] == ["alice", "bob", "carol"]
    assert counts(alice) == {"tests": 3, "failures": 0, "errors": 0, "skipped": 0}
    assert counts(bob) == {"tests": 3, "failures": 1, "errors": 0, "skipped": 0}
    assert counts(carol) == {"tests": 4, "failures": 0, "errors": 1, "skipped": 3}
    assert counts(root) == {"tests": 10, "failures": 1, "errors": 1, "skipped": 3}
    assert float(alice.get("time")) == pytest.approx(correct.timings["total"], abs=1e-3)

    cases = alice.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("mini.values", "square_values"), ("mini.grads", "grad_values"), ("mini.values", "fresh_state")]
    assert cases[1].find("system-out").text == "computing the gradient\n"

    failure = bob.find("testcase[@name='square_values']/failure")
    assert failure.get("message") == wrong.scenarios[0].feedback.summary
    assert "returned 2x, the gradient" in failure.text

    error = carol.find("testcase[@name='submission']/error")
    assert error.get("type") == "ungradable" and error.get("message") == ungradable.error
    assert carol.find("testcase[@name='square_values']/skipped") is not None


@pytest.mark.parametrize("status", [Status.ERROR, Status.TIMEOUT, Status.MEMORY, Status.CRASHED])
def test_errors_carry_their_status(correct, status):
    scenario = dataclasses.replace(correct.scenarios[0], status=status, points=0.0,
                                   feedback=Feedback(summary=f"it went {status.value}"))
    result = dataclasses.replace(correct, scenarios=(scenario,))
    error = ET.fromstring(to_junit_xml([("dave", result)])).find("testsuite/testcase/error")
    assert error.get("type") == status.value and error.get("message") == f"it went {status.value}"


def test_hostile_output_stays_well_formed(wrong):
    nasty = "a\x00b\x1b[31mred\x1b[0m ]]> <script>alert(1)</script> & \ud800 \x7f é 😀\n"
    feedback = dataclasses.replace(wrong.scenarios[0].feedback, stdout=nasty, stderr=nasty, summary=nasty,
                                   got=nasty)
    scenario = dataclasses.replace(wrong.scenarios[0], feedback=feedback, id="id<&>\x01")
    result = dataclasses.replace(wrong, scenarios=(scenario,), error=None)
    text = to_junit_xml([("=evil\x00<student>", result)])
    root = ET.fromstring(text.encode("utf-8"))  # parses: no forbidden characters, markup escaped
    assert "<script>" not in text and "\x00" not in text and "\x1b" not in text
    suite = root.find("testsuite")
    assert suite.get("name") == "=evil\\x00<student>"
    case = suite.find("testcase")
    assert case.get("name") == "id<&>\\x01"
    expected = "a\\x00b\\x1b[31mred\\x1b[0m ]]> <script>alert(1)</script> & \\ud800 \x7f é 😀\n"
    assert case.find("system-out").text == expected
    assert case.find("failure").get("message") == expected
    assert expected.rstrip() in case.find("failure").text


def test_xml_safe_keeps_allowed_characters():
    assert xml_safe("tab\tnewline\ncr\r é 😀 \ufffd") == "tab\tnewline\ncr\r é 😀 \ufffd"
    assert xml_safe("\x00\x08\x0b\x0c\x1f\ufffe") == "\\x00\\x08\\x0b\\x0c\\x1f\\ufffe"


def test_no_results_is_an_empty_document():
    root = ET.fromstring(to_junit_xml([]))
    assert counts(root) == {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}


def test_a_stream_of_results_is_written_one_suite_at_a_time(correct, wrong, tmp_path):
    import tracemalloc

    from grader.report.junit import write_junit_xml

    path = tmp_path / "junit.xml"
    correct, wrong = (dataclasses.replace(r, import_stdout="printed at import\n" * 300) for r in (correct, wrong))
    tracemalloc.start()
    try:
        with path.open("w", encoding="utf-8") as stream:
            write_junit_xml(((f"student{n:04d}", correct if n % 2 else wrong) for n in range(2000)), stream)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    assert peak < size / 10, f"peak {peak:,} bytes while writing {size:,}: the suites were held"
    root = ET.parse(path).getroot()
    assert len(root.findall("testsuite")) == 2000
    assert counts(root) == {"tests": 6000, "failures": 1000, "errors": 0, "skipped": 0}
    suites = sum(float(suite.get("time")) for suite in root.findall("testsuite"))  # each to the ms
    assert float(root.get("time")) == pytest.approx(suites, abs=0.001)
