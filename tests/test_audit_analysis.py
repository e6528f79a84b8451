"""From results to findings (grader.audit.analysis), on results written by hand. Pure."""

from __future__ import annotations

from grader.audit.analysis import analyse
from grader.audit.mutant import Kind, Mutant
from grader.audit.verdicts import Cell, FindingKind, MutantStatus, ScenarioInfo, Severity, Verdict
from grader.results import Feedback, ScenarioResult, Status, SubmissionResult
from grader.visibility import Scope, Visibility

SCENARIOS = [ScenarioInfo("a1", "A one", "a", 2, "public", 1.0), ScenarioInfo("a0", "A engine", "a", 0, "public", 1.0),
             ScenarioInfo("b1", "B one", "b", 3, "public", 1.0), ScenarioInfo("b2", "B hidden", "b", 1, "hidden", 1.0)]
INFO = {s.id: s for s in SCENARIOS}
WRONG = "a() forgot the sign"


def result(outcomes: dict[str, Status | tuple] | None = None, durations: dict | None = None,
           error: str | None = None, note: str | None = None) -> SubmissionResult:
    """Every scenario passes unless ``outcomes`` says otherwise (a status, or a status and a misconception, and
    whether a control failed); ``note``: the provided-code note every failed scenario of points carries."""
    scenarios = []
    for s in SCENARIOS:
        given = (outcomes or {}).get(s.id, Status.PASSED)
        status, misconception, control = (given + (False,))[:3] if isinstance(given, tuple) else (given, None, False)
        noted = note if status is not Status.PASSED and s.points > 0 else None
        scenarios.append(ScenarioResult(s.id, s.title, s.task, s.points if status is Status.PASSED else 0.0, s.points,
                                        status, Feedback("x", misconception=misconception, provided_note=noted,
                                                         control_failed=control),
                                        (durations or {}).get(s.id, 0.01), Visibility(s.visibility)))
    return SubmissionResult("t", "d", "sub.py", "", 0, Scope.ALL, sum(s.points for s in scenarios),
                            sum(s.max_points for s in scenarios), (), tuple(scenarios), "0", (), error=error)


OTHER = "b() forgot to add"
ENGINE = "the provided code gets it wrong on its own"


def run(mutants=(), results=None, reference=None, handout=None, **options):
    reference = reference or {seed: result() for seed in range(3)}
    handout = handout or result({s.id: Status.ERROR for s in SCENARIOS})
    return analyse(SCENARIOS, ["a", "b"], reference, handout, list(mutants), results or {},
                   frozenset({WRONG, OTHER, ENGINE}), {"a": ("fa",), "b": ("fb",)}, 0, **options)


def mutant(id_, task="a", kind=Kind.NAMED, misconceptions=(), operator=None, may_cost=(), lie=False):
    return Mutant(id_, kind, task, "source", f"{id_} does it wrong", misconceptions, operator=operator,
                  may_cost=may_cost, lie=lie)


def kinds(analysis):
    return [(f.kind, f.subject) for f in analysis.findings]


def test_a_sound_run_holds_every_guarantee():
    analysis = run([mutant("m", misconceptions=(WRONG,))], {"m": result({"a1": (Status.FAILED, WRONG)})})
    assert analysis.passed and all(analysis.guarantees().values())
    outcome, = analysis.outcomes
    assert outcome.status is MutantStatus.KILLED and outcome.cells["a1"] is Cell.FAILED
    assert outcome.diagnosis.verdict is Verdict.NAMED
    assert (FindingKind.KILLS_NOTHING, "b1") in kinds(analysis)   # a warning: nothing failed b1


def test_the_reference_failing_on_some_seeds_is_flaky_on_all_is_failing():
    reference = {0: result(), 1: result({"a1": Status.FAILED, "b1": Status.TIMEOUT}), 2: result({"b1": Status.ERROR})}
    analysis = run(reference=reference)
    assert (FindingKind.FLAKY, "a1") in kinds(analysis)
    everywhere = run(reference={seed: result({"b1": Status.FAILED}) for seed in range(3)})
    assert (FindingKind.REFERENCE_FAILS, "b1") in kinds(everywhere) and not everywhere.passed
    row = next(r for r in analysis.reference if r.id == "b1")
    assert row.passed_seeds == (0,) and [cell for _, cell, _ in row.failed] == ["timeout", "error"]


def test_a_time_limit_under_five_times_the_slowest_run_is_flagged_but_does_not_fail():
    reference = {0: result(durations={"a1": 0.3}), 1: result(durations={"a1": 0.1})}
    analysis = run(reference=reference)
    finding = next(f for f in analysis.findings if f.kind is FindingKind.TIGHT_TIME)
    assert finding.subject == "a1" and "0.3 s of its 1 s limit (3.3x" in finding.message
    assert "at least 1.5 s" in finding.fix and finding.severity is Severity.WARN and analysis.passed


def test_points_the_handout_earns_are_free_points():
    analysis = run(handout=result({"a1": Status.ERROR, "a0": Status.ERROR, "b2": Status.ERROR}))
    assert analysis.free_points == (("b1", 3),)
    assert (FindingKind.FREE_POINTS, "b1") in kinds(analysis) and not analysis.passed


def test_a_mutant_losing_points_in_another_task_is_a_cross_task_charge_unless_declared():
    failing = result({"a1": Status.FAILED, "b1": Status.FAILED, "b2": Status.ERROR})
    analysis = run([mutant("m")], {"m": failing})
    charge, = analysis.outcomes[0].charges
    assert (charge.task, charge.points, charge.scenarios) == ("b", 4, ("b1", "b2"))
    assert (FindingKind.CROSS_TASK, "m") in kinds(analysis) and not analysis.guarantees()["no_cross_task"]
    declared = run([mutant("m", may_cost=("b",))], {"m": failing})
    assert declared.outcomes[0].charges == ()


def test_a_scenario_the_reference_fails_on_the_mutants_seed_kills_nothing():
    reference = {0: result({"b1": Status.FAILED}), 1: result()}
    analysis = run([mutant("m")], {"m": result({"b1": Status.FAILED})}, reference=reference)
    outcome, = analysis.outcomes
    assert outcome.status is MutantStatus.SURVIVED and outcome.charges == ()
    assert "b1" not in analysis.baseline and (FindingKind.NAMED_SURVIVES, "m") in kinds(analysis)


def test_diagnoses_right_wrong_and_none():
    named = run([mutant("m", misconceptions=(WRONG,))], {"m": result({"a1": (Status.FAILED, "b() is slow")})})
    assert named.outcomes[0].diagnosis.verdict is Verdict.WRONG
    finding = next(f for f in named.findings if f.kind is FindingKind.WRONG_DIAGNOSIS)
    assert 'diagnosed as "b() is slow" in a1' in finding.message and "make a1's check tell the two apart" in finding.fix
    none = run([mutant("m", misconceptions=(WRONG,))], {"m": result({"a1": Status.FAILED})})
    assert none.outcomes[0].diagnosis.verdict is Verdict.NONE and none.passed
    assert (FindingKind.NO_DIAGNOSIS, "m") in kinds(none)
    undeclared = run([mutant("m")], {"m": result({"a1": (Status.FAILED, WRONG)})})
    assert undeclared.outcomes[0].diagnosis.verdict is Verdict.WRONG and not undeclared.passed


def test_a_misconception_no_scenario_names_is_reported():
    analysis = run([mutant("m", misconceptions=("unheard of",))], {"m": result({"a1": Status.FAILED})})
    assert (FindingKind.UNUSED_MISCONCEPTION, "m") in kinds(analysis)


def test_hidden_only_and_zero_point_kills_are_warnings():
    analysis = run([mutant("h", task="b"), mutant("z")],
                   {"h": result({"b2": Status.FAILED}), "z": result({"a0": Status.FAILED})})
    assert (FindingKind.HIDDEN_ONLY, "h") in kinds(analysis) and (FindingKind.NO_POINTS_LOST, "z") in kinds(analysis)
    assert analysis.passed


def test_automatic_survivors_count_in_the_score_and_fail_only_below_min_score():
    mutants = [mutant(f"a{i}", kind=Kind.AUTOMATIC) for i in range(4)]
    mutants.append(Mutant("eq", Kind.AUTOMATIC, "a", "s", "same", equivalent="it is the same"))
    results = {"a0": result({"a1": Status.FAILED}), "a1": result({"a1": Status.ERROR}),
               "a2": result({"a1": Status.TIMEOUT}), "a3": result()}
    analysis = run(mutants, results)
    score = next(s for s in analysis.tasks if s.task == "a")
    assert (score.automatic_killed, score.automatic_total, score.automatic_equivalent) == (3, 4, 1)
    assert analysis.outcomes[-1].status is MutantStatus.EQUIVALENT and analysis.passed
    assert (FindingKind.AUTOMATIC_SURVIVES, "a3") in kinds(analysis)
    strict = run(mutants, results, min_score=0.8)
    assert (FindingKind.LOW_SCORE, "a") in kinds(strict) and not strict.passed


def test_a_degenerate_mutant_passing_a_scenario_of_its_task_is_points_for_nothing():
    analysis = run([mutant("a/task_returns_none", kind=Kind.AUTOMATIC, operator="task_returns_none")],
                   {"a/task_returns_none": result({"b1": Status.FAILED})})
    assert (FindingKind.POINTS_FOR_NOTHING, "a1") in kinds(analysis)
    assert (FindingKind.POINTS_FOR_NOTHING, "a0") not in kinds(analysis)   # 0 points: nothing given
    assert not analysis.guarantees()["no_points_for_nothing"]


def test_failures_come_first():
    analysis = run([mutant("m")], {"m": result({"b1": Status.FAILED, "b2": Status.FAILED})})
    severities = [f.severity for f in analysis.findings]
    assert severities == sorted(severities, key=lambda s: s is not Severity.FAIL)


def test_lies_earn_no_points_of_their_task():
    impostor = run([mutant("a/task_returns_impostor", kind=Kind.AUTOMATIC, operator="task_returns_impostor")],
                   {"a/task_returns_impostor": result({"b1": Status.FAILED})})
    assert (FindingKind.POINTS_FOR_LIES, "a1") in kinds(impostor) and not impostor.guarantees()["no_points_for_lies"]
    assert impostor.guarantees()["no_points_for_nothing"]
    named = run([mutant("hard_coded", lie=True)], {"hard_coded": result({"b1": Status.FAILED})})
    assert (FindingKind.POINTS_FOR_LIES, "a1") in kinds(named)
    caught = run([mutant("hard_coded", lie=True)], {"hard_coded": result({"a1": Status.FAILED})})
    assert caught.guarantees()["no_points_for_lies"]


def provided(id_="p/slip", kind=Kind.AUTOMATIC, **given):
    return mutant(id_, task="p", kind=kind, operator=None if kind is Kind.NAMED else "swap_operands", **given)


def run_provided(mutants, results):
    return analyse(SCENARIOS, ["a", "b"], {seed: result() for seed in range(3)},
                   result({s.id: Status.ERROR for s in SCENARIOS}), mutants, results, frozenset({WRONG, OTHER, ENGINE}),
                   {"a": ("fa",), "b": ("fb",)}, 0, provided_task="p")


def test_a_mutant_of_the_provided_code_may_cost_a_task_only_where_a_control_says_so():
    said = run_provided([provided()], {"p/slip": result({"a1": (Status.FAILED, ENGINE, True)}, note="you changed it")})
    assert said.outcomes[0].charges == () and said.guarantees()["no_cross_task"]
    assert [(c.task, c.points) for c in said.outcomes[0].costs] == [("a", 2)]
    unsaid = run_provided([provided()], {"p/slip": result({"a1": Status.FAILED}, note="you changed it")})
    assert (FindingKind.CROSS_TASK, "p/slip") in kinds(unsaid)
    assert "without a control" in next(f.fix for f in unsaid.findings if f.kind is FindingKind.CROSS_TASK)
    assert any(score.task == "p" for score in said.tasks)   # the provided code has its own mutation score


def test_a_mutant_of_the_provided_code_is_said_to_be_the_cause_in_every_failed_task_scenario():
    analysis = run_provided([provided()], {"p/slip": result({"a1": (Status.FAILED, ENGINE, True)})})
    assert analysis.outcomes[0].noted == () and analysis.outcomes[0].unnoted == ("a1",)
    assert (FindingKind.NO_PROVIDED_NOTE, "p/slip") in kinds(analysis)
    assert not analysis.guarantees()["engine_edits_said"]


def test_a_mutant_of_the_provided_code_diagnosed_as_a_task_s_mistake_is_a_finding():
    task_slip = mutant("a_slip", misconceptions=(WRONG,))
    results = {"a_slip": result({"a1": (Status.FAILED, WRONG)}),
               "p/slip": result({"a1": (Status.FAILED, WRONG)}, note="you changed it")}
    analysis = run_provided([task_slip, provided()], results)
    assert (FindingKind.TASK_BLAMED, "p/slip") in kinds(analysis) and not analysis.guarantees()["engine_edits_said"]
    assert analysis.outcomes[1].diagnosis.verdict is Verdict.TO_JUDGE   # listed for the author
    engine_own = mutant("p_named", task="p", misconceptions=(ENGINE,))
    fine = run_provided([task_slip, engine_own, provided()],
                        {**results, "p_named": result({"a1": (Status.FAILED, ENGINE, True)}, note="n"),
                         "p/slip": result({"a1": (Status.FAILED, ENGINE, True)}, note="n")})
    assert fine.guarantees()["engine_edits_said"] and fine.outcomes[2].diagnosis.verdict is Verdict.NONE


def test_a_misconception_told_to_mutants_of_different_ideas_is_ambiguous():
    both = (WRONG, OTHER)
    first = mutant("first", misconceptions=both)
    second = mutant("second", task="b", misconceptions=(OTHER, WRONG))
    results = {"first": result({"a1": (Status.FAILED, OTHER)}), "second": result({"b1": (Status.FAILED, OTHER)})}
    analysis = run([first, second], results)
    assert (FindingKind.AMBIGUOUS_DIAGNOSIS, "first") in kinds(analysis)
    assert not analysis.guarantees()["no_ambiguous_diagnosis"]
    # told its own idea too: the other sentence is beside it, and a student hears which mistake is theirs
    told_own = {**results, "first": result({"a1": (Status.FAILED, OTHER), "a0": (Status.FAILED, WRONG)})}
    assert run([first, second], told_own).guarantees()["no_ambiguous_diagnosis"]
    # a control's sentence says the provided code is the cause, not which idea: never ambiguous
    controls = {"first": result({"a1": (Status.FAILED, OTHER, True)}), "second": result({"b1": (Status.FAILED, OTHER)})}
    assert run([first, second], controls).guarantees()["no_ambiguous_diagnosis"]
