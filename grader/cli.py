"""The ``grader`` command. Thin: each command parses options, calls the library, renders, exits.

Library errors (:class:`~grader.errors.GraderError`) become one ``Error: ...`` line per problem
and exit code 2; a bug of ours becomes exit code 3 (with the traceback under ``--debug``).
Heavy modules are imported inside the commands, after the sandbox has started loading.
"""

from __future__ import annotations

import sys
from enum import IntEnum
from pathlib import Path

import click

from grader import __version__


class ExitCode(IntEnum):
    """The public contract of ``grader``'s exit status (documented in the README)."""

    OK = 0           # every scenario that ran passed
    FAILED = 1       # some scenario did not pass, or the submission could not be graded
    USAGE = 2        # a bad command line, a missing file or folder, or an invalid assignment spec
    INTERNAL = 3     # a bug in the grader itself (rerun with --debug for the traceback)
    INTERRUPTED = 130  # Ctrl-C


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="autodiff-grader")
@click.option("--debug", is_flag=True, help="Show the grader's own traceback on an internal error.")
@click.pass_context
def main(context: click.Context, debug: bool) -> None:
    """Grade automatic-differentiation exercises safely: student code runs only in a sandbox."""
    context.obj = {"debug": debug}


@main.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--assignment", "assignment_dir", type=click.Path(file_okay=False, path_type=Path),
              help="The assignment folder (holding assignment.yaml). Default: the folder of FILE, "
                   "or the current folder.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (schema in the README).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), help="Reproduce a run: the seed it printed.")
@click.option("-v", "--verbose", is_flag=True, help="Also show the isolation achieved and the timings.")
@click.pass_context
def check(context: click.Context, file: Path | None, assignment_dir: Path | None, as_json: bool,
          seed: int | None, verbose: bool) -> None:
    """Check FILE (default: the assignment's submission file here) on the public scenarios.

    Exit status: 0 all passed, 1 some did not, 2 usage or spec error, 3 grader bug.
    """
    from grader.sandbox.launcher import Sandbox

    with _errors_to_exit_codes(context), Sandbox() as sandbox:  # the sandbox loads numpy meanwhile
        from grader.checking import locate, run_check

        located = locate(file, assignment_dir)
        result, assignment = run_check(located, seed=seed, sandbox=sandbox)
        if as_json:
            from grader.report.json_report import dumps
            click.echo(dumps(result), nl=False)
        else:
            from grader.report.console import render
            colours = sys.stdout.isatty()
            click.echo(render(result, title=assignment.title, colours=colours, verbose=verbose), nl=False,
                       color=colours)
        context.exit(ExitCode.OK if result.all_passed else ExitCode.FAILED)


class _errors_to_exit_codes:
    """Turn library errors into ``Error:`` lines and exit codes; let click's own exits through."""

    def __init__(self, context: click.Context):
        self.context = context

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, tb) -> bool:
        from grader.errors import GraderError

        if error is None or isinstance(error, (click.exceptions.Exit, click.ClickException, click.Abort)):
            return False
        if isinstance(error, KeyboardInterrupt):
            click.echo("Interrupted.", err=True)
            self.context.exit(ExitCode.INTERRUPTED)
        if isinstance(error, GraderError):
            for line in str(error).splitlines():
                click.echo(f"Error: {line}" if not line.startswith(" ") else line, err=True)
            self.context.exit(ExitCode.USAGE)
        if self.context.obj.get("debug"):
            return False
        click.echo(f"Error: internal error in the grader: {kind.__name__}: {error} "
                   f"(rerun with --debug for the traceback, and please report it)", err=True)
        self.context.exit(ExitCode.INTERNAL)
