"""The manifest of a finished batch (``OUT/manifest.json``): what its gradebook and summary were made of.

The students (each with its result in ``results/`` or the reason it has none), the ignored files,
the scenario columns and maximum score, and what the results must agree on (assignment digest,
seed, grader version), with the shard the batch graded. Written with the gradebook, so it always
describes it; ``grader merge`` rebuilds a gradebook and summary from manifests and results alone
(:func:`grader.summary.class_summary` composes both summaries).
"""

from __future__ import annotations

from typing import Any

from grader.errors import UsageError
from grader.records import record
from grader.scoring import Column
from grader.shard import Shard

MANIFEST_VERSION = 1


@record
class Manifest:
    assignment: str
    assignment_digest: str
    seed: int
    grader_version: str
    max_score: float                             # as the assignment gives it (an int when its points are)
    columns: tuple[Column, ...]                  # the assignment's scenarios, in its order
    students: dict[str, str | None]              # id -> None (its result is results/<id>.json) or why it has none
    ignored: tuple[tuple[str, str], ...] = ()    # (path inside SUBMISSIONS, why), in path order
    shard: Shard | None = None
    title: str = ""                              # the assignment's title, for the summary and the report

    def agreement(self) -> tuple[str, str, int, str]:
        """What every result of the batch shares: assignment, its digest, the seed, the grader version."""
        return self.assignment, self.assignment_digest, self.seed, self.grader_version

    def to_dict(self) -> dict:
        return {"manifest_version": MANIFEST_VERSION, "assignment": self.assignment,
                "assignment_digest": self.assignment_digest, "seed": self.seed,
                "grader_version": self.grader_version, "shard": None if self.shard is None else str(self.shard),
                "max_score": self.max_score, "title": self.title,
                "columns": [{"id": c.id, "title": c.title, "task": c.task, "points": c.points} for c in self.columns],
                "students": [{"id": student, "problem": problem} for student, problem in self.students.items()],
                "ignored": [{"path": path, "why": why} for path, why in self.ignored]}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Manifest:
        """A manifest read back; anything malformed is a :class:`UsageError` naming ``where``."""
        try:
            if data["manifest_version"] != MANIFEST_VERSION:
                raise UsageError(f"{where}: manifest version {data['manifest_version']!r}, this grader reads "
                                 f"{MANIFEST_VERSION}; merge with the grader version that wrote it")
            students: dict[str, str | None] = {}
            for entry in data["students"]:
                student, problem = entry["id"], entry["problem"]
                if not isinstance(student, str) or not (problem is None or isinstance(problem, str)):
                    raise TypeError("a student is an id and a problem (or null)")
                students[student] = problem
            manifest = cls(
                assignment=_typed(data["assignment"], str), assignment_digest=_typed(data["assignment_digest"], str),
                seed=_typed(data["seed"], int), grader_version=_typed(data["grader_version"], str),
                max_score=_typed(data["max_score"], (int, float)),  # as written: 100 stays 100, not 100.0
                columns=tuple(Column(_typed(c["id"], str), _typed(c["title"], str), _typed(c["task"], str),
                                     float(_typed(c["points"], (int, float))))
                              for c in data["columns"]),
                students=students,
                ignored=tuple((_typed(i["path"], str), _typed(i["why"], str)) for i in data["ignored"]),
                shard=None if data["shard"] is None else Shard.parse(_typed(data["shard"], str)),
                title=_typed(data["title"], str))
        except UsageError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise UsageError(f"{where} is not a manifest this grader wrote ({type(error).__name__}: {error}); "
                             "rerun that batch's grader grade command to write it again") from None
        return manifest


def _typed(value: Any, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"unexpected {type(value).__name__} {value!r}")
    return value
