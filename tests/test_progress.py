"""The batch's progress line (grader.report.progress.describe) over progress made by hand."""

from grader.progress import Progress
from grader.report.progress import describe


def test_a_running_batch_shows_its_rate_and_time_left():
    progress = Progress(total=10)
    assert describe(progress) == "[0/10] ETA --:--"
    for _ in range(4):
        progress.graded_one(below_full=True, ungradable=False)
    line = describe(progress)
    assert line.startswith("[4/10] ") and "/s, ETA " in line and "ETA --:--" not in line
    assert line.endswith("4 below full marks")


def test_a_resumed_batch_ends_done_without_a_rate_nor_an_eta():
    progress = Progress(total=22, done=22, reused=22)    # every result from the last run
    line = describe(progress)
    assert line.startswith("[22/22] done in 0:0") and line.endswith(", 22 reused")
    assert "/s" not in line and "ETA" not in line
    resuming = Progress(total=22, done=20, reused=20)     # nothing graded by this run yet: no rate to tell
    assert describe(resuming) == "[20/22] ETA --:--, 20 reused"
