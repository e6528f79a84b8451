"""A sandbox's life is one state machine: the table of moves (pure), then a real sandbox walked
through it, its state said after every move, and every move the table lacks refused before
anything is done."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from grader import commands, load_assignment
from grader.sandbox import proctree
from grader.sandbox.launcher import End, Sandbox, State, StateError
from grader.sandbox.scheduler import RunRequest
from grader.sandbox.states import BEGIN, MOVES, PRESTART, after

MINI = Path(__file__).parent / "fixtures" / "mini"
LIVE = (State.WARM, State.READY, State.RUNNING, State.STOPPING)


def test_every_end_has_an_outcome_from_every_state_and_only_close_leaves_an_abort():
    for how in End:
        assert set(MOVES[how]) == set(State), how
    assert after(State.ABORTED, End.SUBMISSION) is after(State.ABORTED, End.KILL) is State.ABORTED
    assert after(State.ABORTED, End.CLOSE) is State.CLOSED
    assert all(after(state, End.CLOSE) is State.CLOSED for state in State)
    assert all(after(State.CLOSED, how) is State.CLOSED for how in End)


def test_only_a_live_sandbox_begins_and_only_a_warm_one_prestarts():
    assert [state for state in State if state in MOVES[BEGIN]] == list(LIVE)
    assert all(after(state, BEGIN) is State.RUNNING for state in LIVE)
    assert list(MOVES[PRESTART]) == [State.WARM]
    for state, said in ((State.ABORTED, "an aborted"), (State.CLOSED, "a closed")):
        with pytest.raises(StateError, match=f"{said} sandbox cannot begin"):
            after(state, BEGIN)
    with pytest.raises(StateError, match="a running sandbox cannot prestart"):
        after(State.RUNNING, PRESTART)


@pytest.fixture(scope="module")
def mini():
    return load_assignment(MINI)


def _begin(box: Sandbox, mini) -> None:
    box.begin(MINI / "squares.py", "squares", commands.job(mini), source=(MINI / "squares.py").read_bytes())


def test_a_sandbox_says_where_it_is_after_every_move(mini):
    index, program = next((at, s) for at, s in enumerate(mini.select("public")) if s.id == "fresh_state")
    run = RunRequest(index, 5.0, commands.run(index, program, {}))
    with Sandbox() as box:
        assert box.state is State.WARM
        box.prestart(commands.job(mini))
        assert box.state is State.READY and box.job_dir is not None
        with pytest.raises(StateError):
            box.prestart(commands.job(mini))   # one waits already: refused, and it still waits
        assert box.state is State.READY
        _begin(box, mini)
        assert box.state is State.RUNNING and box.runs.wait_ready(mini.limits.import_time).ok
        assert box.runs.run(run.index, run.seconds, run.scenario).has_result
        box.end(End.KILL)
        assert box.state is State.STOPPING
        _begin(box, mini)   # the same submission again, in a fresh zygote
        assert box.state is State.RUNNING and box.runs.wait_ready(mini.limits.import_time).ok
        box.end(End.SUBMISSION)
        assert box.state is State.WARM and box.zygote is None and box.job_dir is None
        box.end(End.KILL)   # nothing to kill
        assert box.state is State.WARM
        warden = box.process.pid
        box.end(End.ABORT)
        assert box.state is State.ABORTED
        with pytest.raises(StateError, match="an aborted sandbox cannot begin"):
            _begin(box, mini)
        box.end(End.SUBMISSION)   # what its driving thread does next: the abort holds
        assert box.state is State.ABORTED
    assert box.state is State.CLOSED
    assert not proctree.running(warden)
    box.end(End.CLOSE)   # idempotent
    assert box.state is State.CLOSED


def test_an_abort_from_another_thread_holds_whatever_the_driving_thread_does(mini):
    with Sandbox() as box:
        _begin(box, mini)
        assert box.runs.wait_ready(mini.limits.import_time).ok
        aborting = threading.Thread(target=box.end, args=(End.ABORT,))
        aborting.start()
        aborting.join()
        box.end(End.SUBMISSION)
        assert box.state is State.ABORTED
        with pytest.raises(StateError):
            box.prestart(commands.job(mini))


def test_a_public_run_after_a_hidden_one_is_refused(mini):
    index, program = next((at, s) for at, s in enumerate(mini.select("public")) if s.id == "fresh_state")
    with Sandbox() as box:
        _begin(box, mini)
        assert box.runs.wait_ready(mini.limits.import_time).ok
        runs = [RunRequest(index, 5.0, commands.run(index, program, {}), hidden=True),
                RunRequest(index + 1, 5.0, commands.run(index, program, {}))]
        with pytest.raises(ValueError, match=f"run {index + 1} is public but comes after a hidden one"):
            list(box.runs.run_all(runs))
