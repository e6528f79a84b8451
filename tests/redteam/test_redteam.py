"""Every attack in attacks.py, graded for real: it earns nothing, and it harms nothing.

Per attack: score 0 with no task scenario passed (library, all scenarios; CLI, public ones), in
bounded time, with a valid result file, and no secret in what came back. Across the suite: the
canary, the output folder, the grader's package and the temp folder are untouched, nothing
connected to the listener, and no sandbox process survives.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time

import jsonschema
import pytest

from .attacks import ATTACKS, ROOT
from .conftest import (
    ASSIGNMENT,
    CANARY_TEXT,
    CLI_SECONDS,
    GRADER,
    LIBRARY_SECONDS,
    SECRET_MARKERS,
    UID_BASE,
    sandbox_processes,
)
from .traces import ipc_objects

SCHEMA = json.loads((ROOT / "grader" / "schema" / "result.schema.json").read_text())
TASKS = ("detach", "tape")
LEAKS = ("ADOPTED-", "SHADOW-LOADED", "EXFILTRATED", *SECRET_MARKERS)


def _no_task_scenario_passed(scenarios) -> list[str]:
    return [s["id"] for s in scenarios if s["task"] in TASKS and s["status"] == "passed"]


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.id)
def test_attack_earns_nothing_through_the_library(graded, arena, attack):
    run = graded[attack.id]
    data = run.library.to_dict()
    assert data["score"] == 0, f"{attack.id} earned {data['score']}"
    assert not _no_task_scenario_passed(data["scenarios"])
    assert run.library_seconds < LIBRARY_SECONDS
    assert "uid-drop" in data["isolation"] and any(level.startswith("landlock-v") for level in data["isolation"])
    text = json.dumps(data)
    for leak in (*LEAKS, arena.secret):
        assert leak not in text, f"{attack.id}: {leak!r} came back in the result"


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.id)
def test_hidden_programs_never_reach_a_public_scenarios_feedback(graded, attack):
    # Students see public feedback; a hidden program printed there would give the hidden tests away.
    scenarios = graded[attack.id].library.scenarios
    hidden = [s.id for s in scenarios if s.visibility == "hidden"]
    for scenario in scenarios:
        if scenario.visibility == "public":
            shown = scenario.feedback.stdout + scenario.feedback.stderr + (scenario.feedback.traceback or "")
            assert not [h for h in hidden if f"def {h}(" in shown or f"'{h}'" in shown], scenario.id


def test_the_queued_command_reader_did_read_the_queue(graded):
    # Guards the test above for read_the_queued_command: the attack must really have fired in the
    # last public scenario (else a hidden program waiting there would go unnoticed).
    scenarios = {s.id: s for s in graded["read_the_queued_command"].library.scenarios}
    assert "PEEKED" in scenarios["engine_d2l_control_flow"].feedback.stdout
    last_public = [s.id for s in graded["read_the_queued_command"].library.scenarios if s.visibility == "public"][-1]
    assert last_public == "engine_d2l_control_flow", "the attack must fire in the last public scenario to run"


def test_a_scenario_process_ends_even_when_its_own_error_report_fails(graded):
    # sabotaged_run_record empties the record the sandbox keeps of the run, then raises: reporting that
    # error fails in turn. The process must end there, not fall back into the sandbox's loop it was
    # forked from (whose code would then run, and print its traceback, in the student's process).
    scenario = {s.id: s for s in graded["sabotaged_run_record"].library.scenarios}["d2l_detach_dz_dx"]
    assert scenario.status == "crashed" and "(code 1)" in scenario.feedback.summary, scenario.feedback.summary
    assert "child.py" not in scenario.feedback.stderr + scenario.feedback.stdout


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.id)
def test_attack_earns_nothing_through_grader_check(graded, arena, attack):
    run = graded[attack.id]
    assert run.cli_code == 1, run.cli_stderr   # "some scenario did not pass", not a crash of ours
    assert run.cli_seconds < CLI_SECONDS
    data = json.loads(run.cli_result.read_text())   # the file the CLI wrote, whole and unforged
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 0 and data["visibility"] == "public"
    assert not _no_task_scenario_passed(data["scenarios"])
    for leak in (*LEAKS, arena.secret):
        assert leak not in json.dumps(data)


def test_student_text_cannot_paint_over_the_console_report(graded, arena):
    # ESC sequences and carriage returns in output and exception messages would let a submission
    # clear the screen and print a fake score line; the report shows them escaped instead.
    folder = arena.base / "submissions" / "terminal_escapes"
    done = subprocess.run([GRADER, "check", "autodiff.py", "--assignment", str(ASSIGNMENT), "--seed", "1"],
                          cwd=folder, capture_output=True, env={**os.environ, "GRADER_SANDBOX_UID_BASE": "62290"})
    assert done.returncode == 1
    for stream in (done.stdout, done.stderr):
        assert b"\x1b" not in stream and b"\r" not in stream
    assert b"\\x1b[2J" in done.stdout   # shown, escaped


def test_the_canary_outside_the_job_folder_is_untouched(graded, arena):
    assert arena.canary.read_text() == CANARY_TEXT
    assert os.listdir(arena.canary.parent) == ["canary.txt"]


def test_the_output_folder_holds_only_the_graders_files(graded, arena):
    assert sorted(os.listdir(arena.out)) == sorted(f"{attack.id}.json" for attack in ATTACKS)


def test_nothing_was_written_beside_the_job_folders_or_into_the_grader(graded):
    assert not [name for name in os.listdir(tempfile.gettempdir()) if name.startswith("forged-")]
    assert not list((ROOT / "grader").glob("redteam_probe_*"))
    assert [path.name for path in (ROOT / "exercises" / "autodiff").glob("*.json")] in ([], ["provided.json"])


def test_no_network_connection_got_out(graded, arena):
    assert arena.connections == []


def test_no_sandbox_process_survives(graded):
    deadline = time.monotonic() + 2
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.05)   # SIGKILLed processes may take a moment to be reaped
    assert sandbox_processes() == []


def test_no_ipc_object_of_the_suite_survives(graded):
    assert ipc_objects(range(UID_BASE, UID_BASE + 300)) == frozenset()


def test_every_bullet_of_the_issue_is_covered():
    bullets = {attack.bullet for attack in ATTACKS}
    assert bullets == {"forged results", "lying values", "control flow", "resources", "snooping",
                       "attacks on the grader", "containers", "kernel objects"}
    assert len(ATTACKS) >= 35


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.id)
def test_what_an_attack_sends_is_bounded_and_writable(graded, attack):
    # Floods of forged frames with 4 MB messages once made a result file of 218 MB; a lone
    # surrogate in a message crashed every writer. Every result stays small and valid UTF-8.
    data = graded[attack.id].cli_result.read_bytes()
    assert len(data) < 2_000_000, f"{attack.id}: a result file of {len(data):,} bytes"
    data.decode("utf-8")   # strict
    json.dumps(graded[attack.id].library.to_dict(), ensure_ascii=False).encode("utf-8")   # strict too
