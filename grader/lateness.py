"""Which submissions came after the deadline (``grader grade --deadline WHEN``), where their names do
not say: a step between finding the class (:mod:`grader.discovery`) and grading it.

A Canvas download's names say it themselves (``_LATE_``, :mod:`grader.lms_names`): those are taken
as they are. For every other submission (Moodle's names, plain ones) the time it was handed in is
the roster's, where the roster is Moodle's grading worksheet with its ``Last modified
(submission)`` column (as Moodle writes it in English: ``Tuesday, 4 June 2024, 3:05 PM``, in the
time zone of the account that downloaded it), else the file's own time as the download kept it (a
zip's entry time, a folder's modification time: ``unzip`` and a copy with ``cp -p`` keep it, a
plain copy does not). A late one gets ``late`` (and ``late_by: "deadline"``) in its identity, so
every output that shows the late mark shows it, as for Canvas's.

A deadline without a time zone (``2026-03-01T23:59``) is this machine's local time, as are the
worksheet's times; one with an offset (``2026-03-01T23:59+01:00``, ``...Z``) is that instant.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime

from grader.discovery import Discovery
from grader.errors import UsageError
from grader.lms_names import NameSystem
from grader.records import record
from grader.roster import Roster

MOODLE_TIME_FORMATS = ("%A, %d %B %Y, %I:%M %p", "%A, %d %B %Y, %H:%M")   # Moodle's strftimedatetime (English)
NOT_SUBMITTED = ("", "-")


@record
class Lateness:
    """The deadline, and the times the roster says each Moodle participant handed in."""

    deadline: datetime                      # aware
    submitted: tuple[tuple[str, datetime], ...] = ()   # (participant id, when), from a grading worksheet


def parse_deadline(text: str) -> datetime:
    """``--deadline``'s value as an aware time (a :class:`UsageError` saying the form it takes)."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--deadline {text!r} is not a date and time: give it as 2026-03-01T23:59 (this machine's "
                         "time zone) or 2026-03-01T23:59+01:00") from None
    return when.astimezone()   # a naive time is taken as local


def lateness_of(deadline: datetime, roster: Roster | None) -> Lateness:
    """The lateness rule of ``deadline``, with the submission times of ``roster`` when it has them (a
    :class:`UsageError` naming the line of a time it cannot read)."""
    submitted = []
    if roster is not None:
        for entry in roster.entries:
            if entry.participant and entry.submitted.strip() not in NOT_SUBMITTED:
                submitted.append((entry.participant, _moodle_time(entry.submitted, roster)))
    return Lateness(deadline, tuple(submitted))


def marked_late(found: Discovery, lateness: Lateness) -> Discovery:
    """``found`` with ``late`` set on the identities of the submissions handed in after the deadline
    (their names saying nothing: Canvas's say it themselves)."""
    times = dict(lateness.submitted)
    identities = dict(found.identities)
    for item in found.submissions:
        identity = identities.get(item.student_id)
        if identity is None or identity.system is NameSystem.CANVAS:
            continue
        when = times.get(identity.lms_id or "") if identity.system is NameSystem.MOODLE else None
        if when is None:
            when = datetime.fromtimestamp(os.stat(item.path).st_mtime).astimezone()
        if when > lateness.deadline:
            identities[item.student_id] = replace(identity, late=True, late_by="deadline")
    return Discovery(found.submissions, found.problems, found.ignored, identities)


def _moodle_time(text: str, roster: Roster) -> datetime:
    for form in MOODLE_TIME_FORMATS:
        try:
            return datetime.strptime(text.strip(), form).astimezone()
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(text.strip()).astimezone()
    except ValueError:
        raise UsageError(f"--roster {roster.source}: 'Last modified (submission)' {text!r} is not a time this grader "
                         "reads (Moodle's English form, 'Tuesday, 4 June 2024, 3:05 PM'): download the worksheet "
                         "with Moodle's language set to English") from None
