"""``python -m grader``: the same as the ``grader`` command."""

import os
import sys

# `python -m` puts the current folder first on sys.path. Run from a folder of submissions, a
# student's json.py would then be imported by the grader itself: drop it, unless it is where the
# grader lives (a source checkout run without installing).
_home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.getcwd() != _home:
    del sys.path[0]

from grader.entry import main  # noqa: E402

if __name__ == "__main__":
    main()
