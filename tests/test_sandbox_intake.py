"""What the grader accepts from a zygote: one slot per message kind, budgets per run and per
submission, every step O(1) (grader/sandbox/intake.py)."""

from __future__ import annotations

import json
import time

from grader.sandbox import intake
from grader.sandbox.framing import HEADER, frame
from grader.sandbox.intake import Budget, Intake


def _raw(text: str) -> bytes:
    body = text.encode()
    return HEADER.pack(len(body)) + body


def test_a_result_counts_on_its_runs_channel_and_an_exit_for_the_run_it_names_while_it_runs():
    taken = Intake(Budget())
    three, four = taken.expect(3), taken.expect(4)
    taken.feed_run(three, frame({"kind": "result", "index": 4, "observations": {"forged": True}}))  # not its own
    taken.feed(frame({"kind": "result", "index": 3, "observations": {"forged": True}}))  # not on its channel
    taken.feed(frame({"kind": "exit", "index": 4, "code": 0}))   # not running yet
    taken.feed_run(three, frame({"kind": "result", "index": 3, "observations": {"y": 1}}))
    taken.feed(frame({"kind": "exit", "index": 3, "code": 0}))
    taken.feed_run(four, frame({"kind": "result", "index": 4, "observations": {"y": 2}}))
    assert taken.result(three)["observations"] == {"y": 1}
    assert taken.exit(three) == {"kind": "exit", "index": 3, "code": 0}
    assert taken.result(four)["observations"] == {"y": 2} and taken.exit(four) is None
    assert taken.problem(three) == "the sandbox sent a result for another scenario than the one running"
    assert taken._problems[three][1:] == ["the sandbox sent a result outside a scenario's channel",
                                          "the sandbox sent an exit for another scenario than the ones running"]


def test_runs_side_by_side_may_end_in_any_order_within_the_window():
    taken = Intake(Budget(), window=2)
    one, two, three = taken.expect(1), taken.expect(2), taken.expect(3)
    taken.feed(frame({"kind": "exit", "index": 3, "code": 0}))   # the third is not running: outside the window
    taken.feed_run(two, frame({"kind": "result", "index": 2, "observations": 2}))
    taken.feed(frame({"kind": "exit", "index": 2, "code": 0}))
    assert taken.exit(two) is not None and taken.exit(one) is None and taken.exit(three) is None
    taken.feed(frame({"kind": "exit", "index": 3, "code": 0}))   # now it may be running
    taken.feed(frame({"kind": "exit", "index": 1, "signal": 9}))
    assert taken.exit(three) is not None and taken.exit(one) == {"kind": "exit", "index": 1, "signal": 9}
    assert taken.result(two)["observations"] == 2 and taken.result(one) is None


def test_the_same_scenario_run_twice_in_a_row_keeps_each_runs_messages_apart():
    taken = Intake(Budget())
    first, second = taken.expect(0), taken.expect(0)
    taken.feed_run(first, frame({"kind": "result", "index": 0, "observations": 1}))
    taken.feed(frame({"kind": "exit", "index": 0, "code": 0}))
    taken.feed_run(second, frame({"kind": "result", "index": 0, "observations": 2}))
    assert taken.result(first)["observations"] == 1 and taken.problem(first) is None
    taken.forget(first)
    assert taken.result(second)["observations"] == 2 and taken.exit(second) is None


def test_a_second_result_is_a_problem_not_an_answer():
    taken = Intake(Budget())
    run = taken.expect(0)
    taken.feed_run(run, frame({"kind": "result", "index": 0, "observations": 1})
                   + frame({"kind": "result", "index": 0, "observations": 2}))
    assert taken.result(run)["observations"] == 1 and taken.problem(run) == "the scenario sent more than one result"


def test_the_first_isolation_and_import_message_are_kept_and_forbidden_names_are_bounded():
    taken = Intake(Budget())
    taken.feed(frame({"kind": "sandbox", "isolation": ["rlimits", "seccomp"]})
               + frame({"kind": "sandbox", "isolation": ["none"]}))
    taken.feed(frame({"kind": "ready"}) + frame({"kind": "import_error", "error": {"__raised__": {
        "type": "E", "message": "", "mro": [], "traceback": ""}}}))
    taken.feed(b"".join(frame({"kind": "forbidden", "module": f"m{n}" + "x" * 300}) for n in range(40)))
    assert taken.isolation == ("rlimits", "seccomp") and taken.imported == {"kind": "ready"}
    assert len(taken.forbidden) == intake.MAX_FORBIDDEN and all(len(name) <= 200 for name in taken.forbidden)


def test_a_flood_of_tiny_messages_is_cut_off_at_once():
    # 390,000 of them once cost the grader 13 minutes (list.pop(0) on the backlog).
    flood = frame({"kind": "forbidden", "module": "torch"}) * 390_000
    taken = Intake(Budget())
    began = time.monotonic()
    for at in range(0, len(flood), 65536):
        taken.feed(flood[at:at + 65536])
    assert time.monotonic() - began < 2.0
    assert taken.exceeded == f"the sandbox sent more than {intake.MAX_RUN_MESSAGES} messages for one scenario"
    assert taken.forbidden == ["torch"]


def test_bytes_are_counted_per_run_and_per_submission():
    huge = _raw(json.dumps({"kind": "forbidden", "module": "x" * 4_000_000}))
    for send in ("own pipe", "run's channel", "forgotten run's channel"):
        taken = Intake(Budget())
        run = taken.expect(0)
        if send == "forgotten run's channel":
            taken.forget(run)
        for _ in range(3):
            taken.feed(huge) if send == "own pipe" else taken.feed_run(run, huge)
        assert taken.exceeded is not None and "for one scenario" in taken.exceeded, send
    budget = Budget(bytes=10_000)
    later = Intake(budget)   # a zygote after a restart: the submission's budget is what is left
    later.feed(frame({"kind": "sandbox", "isolation": []}) + b"x" * 10_000)
    assert later.exceeded is not None and "in all" in later.exceeded


def test_unreadable_messages_are_problems_of_the_run_and_bounded():
    taken = Intake(Budget())
    run = taken.expect(0)
    taken.feed_run(run, b"".join(_raw('{"kind": "result", "index": 0, "observations": NaN}') for _ in range(20)))
    taken.feed(_raw('{"kind": "nonsense"}') + frame({"kind": "exit", "index": 0, "code": 0}))
    assert taken.exit(run) is not None and taken.result(run) is None
    assert taken.problem(run).startswith("the sandbox sent an unreadable message")
    assert len(taken._problems[run]) == intake.MAX_PROBLEMS


def test_a_run_that_timed_out_is_forgotten_and_later_messages_are_not_its():
    taken = Intake(Budget())
    first, second = taken.expect(0), taken.expect(1)
    taken.forget(first)   # killed: no exit will come
    taken.feed_run(first, frame({"kind": "result", "index": 0, "observations": 4}))   # its stray, too late
    taken.feed_run(second, frame({"kind": "result", "index": 1, "observations": 5}))
    taken.feed(frame({"kind": "exit", "index": 1, "code": 0}))
    assert taken.result(second)["observations"] == 5 and taken.exit(second) is not None
    assert taken.result(first) is None and taken.problem(second) is None


def test_where_a_run_was_is_taken_once_on_its_own_channel():
    taken = Intake(Budget())
    three = taken.expect(3)
    taken.feed_run(three, frame({"kind": "where", "index": 4, "stack": "forged"}))     # not its own index
    taken.feed(frame({"kind": "where", "index": 3, "stack": "forged"}))                # not on its channel
    taken.feed_run(three, frame({"kind": "where", "index": 3, "stack": "File \"m.py\", line 2"}))
    taken.feed_run(three, frame({"kind": "where", "index": 3, "stack": "a stray's, later"}))
    assert taken.where(three) == "File \"m.py\", line 2"
    taken.feed_run(three, frame({"kind": "where", "index": 3, "stack": 7}))            # not text: refused
    assert any("a where message needs stack" in problem for problem in taken._problems[three])
    taken.forget(three)
    assert taken.where(three) is None
