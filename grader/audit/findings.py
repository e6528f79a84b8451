"""What the mutants' outcomes tell an author to fix: one finding per problem, with its fix. Pure.

Per mutant: points given to nothing or to a lie, undeclared costs in other tasks, a mutant of the
provided code whose task failures do not say so (or blame the task), survivors, wrong or missing
diagnoses. Across mutants: a misconception that named mutants of different ideas (each one's first
declared misconception) are told as their mistake, which a student told it could not tell apart.
"""

from __future__ import annotations

from grader.audit.mutant import Kind, Mutant
from grader.audit.operators import LIES, NOTHING
from grader.audit.verdicts import Finding, FindingKind, MutantOutcome, MutantStatus, ScenarioInfo, Verdict


def mutant_findings(outcomes: tuple[MutantOutcome, ...], by_id: dict[str, ScenarioInfo], used: frozenset[str],
                    free: set[str], provided_task: str | None) -> list[Finding]:
    owners = _owners(outcomes)
    found = []
    for outcome in outcomes:
        found += _one(outcome, by_id, used, free, provided_task, owners)
    return found + _ambiguous(outcomes)


def _one(outcome: MutantOutcome, by_id: dict[str, ScenarioInfo], used: frozenset[str], free: set[str],
         provided_task: str | None, owners: dict[str, set[str]]) -> list[Finding]:
    mutant, found = outcome.mutant, []
    what = describe(mutant)
    if outcome.status is not MutantStatus.EQUIVALENT and (mutant.operator in NOTHING | LIES or mutant.lie):
        lie = mutant.lie or mutant.operator in LIES
        for sid, cell in outcome.cells.items():
            scenario = by_id[sid]
            if cell.value == "passed" and scenario.task == mutant.task and scenario.points > 0 and sid not in free:
                found.append(Finding(FindingKind.POINTS_FOR_LIES if lie else FindingKind.POINTS_FOR_NOTHING, sid,
                                     f"scenario {sid} gives its {points_text(scenario.points)} when "
                                     f"{mutant.description}" + ("" if mutant.operator else f" ({what})"),
                                     "check the task's result itself: its exact type (type(r) is T, which no "
                                     "__class__ can claim), its values compared with values read in the same "
                                     "run, for inputs other than the examples', not only what it leaves unchanged"))
    for sentence in mutant.misconceptions:
        if sentence not in used:
            found.append(Finding(FindingKind.UNUSED_MISCONCEPTION, mutant.id, f"{what}: no scenario can name its "
                                 f"misconception {quote(sentence)}", "add it to the wrong= of the scenario "
                                 "that should recognise this mistake"))
    if outcome.status is MutantStatus.SURVIVED:
        kind = FindingKind.NAMED_SURVIVES if mutant.kind is Kind.NAMED else FindingKind.AUTOMATIC_SURVIVES
        fix = ("add a scenario (or a check) that this mistake fails; its diff is below" if mutant.kind is Kind.NAMED
               else "add a check this change fails (diff below), or list it under equivalent: in mutants.yaml "
                    "with the reason it behaves exactly as the reference")
        found.append(Finding(kind, mutant.id, f"{what} survives every scenario: {mutant.description}", fix))
        return found
    if outcome.status is not MutantStatus.KILLED:
        return found
    for charge in outcome.charges:
        provided = mutant.task == provided_task
        found.append(Finding(FindingKind.CROSS_TASK, mutant.id, f"{what} costs {points_text(charge.points)} in task "
                             f"{charge.task} ({', '.join(charge.scenarios)})",
                             (f"those scenarios of {charge.task} depend on the provided code without a control: "
                              "run the program with the provided code alone first (expect(..., control=True)), "
                              "so a failure there says the provided code is the cause" if provided else
                              f"those scenarios of {charge.task} depend on {mutant.task}'s code: give them "
                              f"their own version of what they need from {mutant.task}")
                             + (" (or declare may_cost, for an edit every task depends on)"
                                if mutant.kind is Kind.NAMED else "")))
    if outcome.unnoted:
        found.append(Finding(FindingKind.NO_PROVIDED_NOTE, mutant.id, f"{what} changes the provided code, but "
                             f"{', '.join(outcome.unnoted)} fail{'s' * (len(outcome.unnoted) == 1)} without saying "
                             "the change may be the cause", "the submission's changes to the provided code are not "
                             "seen (provided.json out of date? a part the fingerprint does not cover?)"))
    if mutant.task == provided_task and outcome.diagnosis is not None:
        blamed = [(sid, sentence) for sid, sentence in outcome.diagnosis.named
                  if by_id[sid].task != mutant.task and owners.get(sentence) and provided_task not in owners[sentence]]
        for sid, sentence in blamed[:1]:
            found.append(Finding(FindingKind.TASK_BLAMED, mutant.id, f"{what} changes the provided code, but {sid} "
                                 f"names {quote(sentence)}, a mistake of task {', '.join(sorted(owners[sentence]))}",
                                 f"give {sid} a control (its program with the provided code alone) asked first, so "
                                 "that a wrong answer there is said to come from the provided code"))
    hidden = all(by_id[sid].visibility == "hidden" for sid in outcome.killed_by)
    if hidden and (mutant.kind is Kind.NAMED or mutant.task != provided_task):
        found.append(Finding(FindingKind.HIDDEN_ONLY, mutant.id, f"{what} is caught only by hidden scenarios "
                             f"({', '.join(outcome.killed_by)})", "grader check cannot show students this "
                             "mistake: add a public scenario that catches it, if it should be seen before hand-in"))
    if outcome.points_lost == 0 and any(s.points > 0 for s in by_id.values() if s.task == mutant.task):
        found.append(Finding(FindingKind.NO_POINTS_LOST, mutant.id, f"{what} fails only 0-point scenarios "
                             f"({', '.join(outcome.killed_by)}): it costs no points",
                             f"add a check to one of {mutant.task}'s scenarios that this mistake fails"))
    found += _diagnosis_findings(outcome, what)
    return found


def _diagnosis_findings(outcome: MutantOutcome, what: str) -> list[Finding]:
    mutant, diagnosis = outcome.mutant, outcome.diagnosis
    if diagnosis is not None and diagnosis.verdict is Verdict.WRONG:
        sid, sentence = next((sid, m) for sid, m in diagnosis.named if m not in mutant.misconceptions)
        expected = (f"its own ({quote(mutant.misconceptions[0])})" if mutant.misconceptions
                    else "none (the mutant declares no misconception)")
        return [Finding(FindingKind.WRONG_DIAGNOSIS, mutant.id, f"{what} is diagnosed as {quote(sentence)} in {sid}, "
                        f"but the right diagnosis is {expected}",
                        f"make {sid}'s check tell the two apart (a control observation first), or name "
                        "this misconception in the mutant if it is right too")]
    if diagnosis is not None and diagnosis.verdict is Verdict.NONE and mutant.misconceptions:
        first = outcome.killed_by[0]
        return [Finding(FindingKind.NO_DIAGNOSIS, mutant.id, f"{what} is caught ({', '.join(outcome.killed_by)}) "
                        f"but no feedback names its misconception {quote(mutant.misconceptions[0])}",
                        f"add the wrong answer it produces to the wrong= of {first}'s check")]
    return []


def _owners(outcomes: tuple[MutantOutcome, ...]) -> dict[str, set[str]]:
    """Each misconception the named mutants declare: the tasks of the mutants that declare it."""
    owners: dict[str, set[str]] = {}
    for outcome in outcomes:
        if outcome.mutant.kind is Kind.NAMED:
            for sentence in outcome.mutant.misconceptions:
                owners.setdefault(sentence, set()).add(outcome.mutant.task)
    return owners


def _ambiguous(outcomes: tuple[MutantOutcome, ...]) -> list[Finding]:
    """A misconception that named mutants of different ideas are each told as their mistake. A named
    mutant's idea is its first misconception; what it is told as its mistake is that idea when some
    failed scenario names it (the others, true of it too, come beside it), else everything named
    outside controls. A student told that sentence alone cannot tell which mistake is theirs."""
    told: dict[str, dict[str, list[str]]] = {}   # sentence -> idea -> mutants
    for outcome in outcomes:
        mutant, diagnosis = outcome.mutant, outcome.diagnosis
        if mutant.kind is not Kind.NAMED or diagnosis is None or not mutant.misconceptions:
            continue
        idea = mutant.misconceptions[0]
        named = {sentence for sid, sentence in diagnosis.named if sid not in diagnosis.controls}
        for sentence in ({idea} if idea in named else named):
            told.setdefault(sentence, {}).setdefault(idea, []).append(mutant.id)
    found = []
    for sentence, ideas in told.items():
        if len(ideas) > 1:
            mutants = sorted({m for ids in ideas.values() for m in ids})
            found.append(Finding(FindingKind.AMBIGUOUS_DIAGNOSIS, mutants[0], f"{quote(sentence)} is the diagnosis of "
                                 f"named mutants of {len(ideas)} different ideas ({', '.join(mutants[:4])}"
                                 f"{' ...' if len(mutants) > 4 else ''})",
                                 "make the checks that name it tell those mistakes apart (a control observation "
                                 "first), or give each its own sentence"))
    return found


def describe(mutant: Mutant) -> str:
    return f"{'named' if mutant.kind is Kind.NAMED else 'automatic'} mutant {mutant.id} ({mutant.task})"


def points_text(value: float) -> str:
    return f"{value:g} point{'s' * (value != 1)}"


def quote(sentence: str) -> str:
    return f'"{sentence}"' if len(sentence) <= 70 else f'"{sentence[:67]}..."'
