"""The GitHub Classroom workflow of a handout (``grader release --github-classroom``): the
``.github/workflows/classroom.yml`` that grades each push of a student's repository with the grader
in the handout's wheel and reports the points to GitHub Classroom. Pure: text from names.

What it follows, from GitHub Classroom's own workflows and the reporter's code
(:mod:`grader.report.github_classroom` says more):

* the job is ``run-autograding-tests``: the reporter posts the points on the check run of that name;
  it skips the commit GitHub Classroom's bot makes when it creates the repository;
* ``checks: write`` lets the reporter update that check run with the job's token;
* the grading step has an ``id`` (the assignment's id), writes its ``result`` output
  (``grader check FILE --format github-classroom``) and does not stop the job when scenarios fail
  (``continue-on-error``: the reporter's step fails then, with the points said);
* the reporter gets each runner's result in ``<ID in upper case>_RESULTS`` and the ids in ``runners``.
"""

from __future__ import annotations

WORKFLOW_PATH = ".github/workflows/classroom.yml"
REPORTER = "education/autograding-grading-reporter@v1"
PYTHON = "3.12"   # any Python >= 3.11 the grader runs on


def classroom_workflow(step_id: str, submission: str, wheel_name: str) -> str:
    """The workflow: check out, set up Python, install the grader from ``wheel_name`` (in the
    repository's root, as the handout ships it), check ``submission`` on the public scenarios as
    step ``step_id``, and report."""
    variable = f"{step_id.upper()}_RESULTS"
    return f"""# GitHub Classroom's autograding, written by `grader release --github-classroom`: on every push,
# `grader check` (the grader is {wheel_name}, beside this repository's other files) grades
# {submission} on the public scenarios, and the reporter sends the points to GitHub Classroom.
# The hidden scenarios are graded when the instructor runs `grader grade` on the submissions.
name: Autograding Tests
"on":
  - push
  - repository_dispatch
  - workflow_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Set up Python
        uses: actions/setup-python@v5
        with:
          python-version: "{PYTHON}"
      - name: Install the grader
        run: python -m pip install "./{wheel_name}[notebook]"
      - name: Check {submission}
        id: {step_id}
        continue-on-error: true
        run: grader check {submission} --format github-classroom
      - name: Autograding Reporter
        uses: {REPORTER}
        env:
          {variable}: "${{{{ steps.{step_id}.outputs.result }}}}"
        with:
          runners: {step_id}
"""
