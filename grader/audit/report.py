"""What an audit produced, as one frozen record: what the console, JSON and Stryker renderers read."""

from __future__ import annotations

from dataclasses import field

from grader.audit.verdicts import Analysis, ScenarioInfo
from grader.records import record


@record
class AuditReport:
    assignment: str
    title: str
    assignment_digest: str
    submission: str                   # the submission file's name, e.g. autodiff.py
    reference_path: str               # as given, for people and for the Stryker report's file key
    reference_source: str
    tasks: tuple[tuple[str, str], ...]   # (id, title)
    scenarios: tuple[ScenarioInfo, ...]
    seeds: tuple[int, ...]            # the reference's seeds
    mutant_seed: int                  # the seed the handout and the mutants were graded with
    mutants_file: str | None
    analysis: Analysis
    timings: dict                     # seconds: reference, mutants, total
    grader_version: str
    misconception_keys: dict = field(default_factory=dict)   # sentence -> the constant naming it (for display)
    provided_task: str | None = None  # the task of the provided code's mutants

    @property
    def passed(self) -> bool:
        return self.analysis.passed
