"""``python -m grader``: the same as the ``grader`` command."""

from grader.entry import main

if __name__ == "__main__":
    main()
