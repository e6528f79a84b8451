"""The ``grader`` command. Thin: each command parses options, calls the library, renders, exits.

Library errors (:class:`~grader.errors.GraderError`) become one ``Error: ...`` line per problem
and exit code 2; a bug of ours becomes exit code 3 (with the traceback under ``--debug``).
Each command imports the library it needs inside its body: ``grader check`` must not pay for
importing what ``grade`` needs (or the other way round) on its way to the sandbox's first job.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from grader.version import __version__
from grader.visibility import DEFAULT_HIDDEN_SHOWN_TO, ShownTo

if TYPE_CHECKING:
    from grader.report.lms_gradebooks import Gradebook, LmsFormat
    from grader.sandbox.launcher import Sandbox


class ExitCode(IntEnum):
    """The public contract of ``grader``'s exit status (documented in the README)."""

    OK = 0           # every scenario that ran passed
    FAILED = 1       # some scenario did not pass, or the submission could not be graded
    USAGE = 2        # a bad command line, a missing file or folder, or an invalid assignment spec
    INTERNAL = 3     # a bug in the grader itself (rerun with --debug for the traceback)
    INTERRUPTED = 130  # Ctrl-C


@dataclass
class Session:
    """What one ``grader`` invocation hands its command: ``--debug``, and the sandbox the console
    script started before the CLI was imported (see :mod:`grader.entry`), for ``check`` to take."""

    debug: bool = False
    early_sandbox: Sandbox | None = None
    collector_paused: bool = False  # the console script turned the cyclic garbage collector off for a check

    def resume_collector(self) -> None:
        """Turn the cyclic garbage collector back on, for a command that lives on after its first
        check (--watch). What start-up made stays: it is frozen out of the collector's passes."""
        if self.collector_paused:
            import gc
            gc.freeze()
            gc.enable()
            self.collector_paused = False

    def take_sandbox(self) -> Sandbox:
        """The early sandbox (once), else a new one, for one student's check."""
        from grader.sandbox.launcher import Sandbox
        sandbox, self.early_sandbox = self.early_sandbox, None
        return sandbox if sandbox is not None else Sandbox.for_a_check()

    def close_unused(self) -> None:
        """Close the early sandbox when no command took it (a usage error, say)."""
        if self.early_sandbox is not None:
            from grader.sandbox.launcher import End
            self.take_sandbox().end(End.CLOSE)


class SeveralValuesCommand(click.Command):
    """A command whose repeatable choice options (``--format``) also take several values after one
    flag: ``--format canvas moodle lti`` is ``--format canvas --format moodle --format lti``. The
    values that follow a flag are taken while they are among its choices (so a following argument,
    an output folder, is left alone); ``--`` ends them."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        several = {name: option.type.choices for option in self.params
                   if isinstance(option, click.Option) and option.multiple and isinstance(option.type, click.Choice)
                   for name in option.opts}
        spread: list[str] = []
        flag, own_value = None, False   # the flag whose values follow; whether the next arg is its own
        for at, arg in enumerate(args):
            if arg == "--":
                return super().parse_args(ctx, spread + args[at:])
            if own_value:
                own_value = False
            elif flag is not None and arg in several[flag]:
                spread.append(flag)
            else:
                name, equals, _ = arg.partition("=")
                flag = name if name in several else None
                own_value = flag is not None and not equals
            spread.append(arg)
        return super().parse_args(ctx, spread)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="autodiff-grader")
@click.option("--debug", is_flag=True, help="Show the grader's own traceback on an internal error.")
@click.pass_context
def main(context: click.Context, debug: bool) -> None:
    """Grade automatic-differentiation exercises safely: student code runs only in a sandbox."""
    context.ensure_object(Session).debug = debug


HIDDEN_VISIBILITIES = click.Choice([level.value for level in ShownTo])
GRADEBOOK_FORMATS = ("gradescope", "canvas", "moodle", "moodle-worksheet", "lti")
LEFT_OUT_SHOWN = 10


def _gradebook_options(command):
    """The options of the LMS gradebooks, shared by grade and report."""
    command = click.option("--moodle-identity", type=click.Choice(["email", "idnumber", "username"]),
                           default="email", show_default=True,
                           help="With --format moodle: the user field Moodle's CSV import matches on "
                                "(its 'Map to').")(command)
    command = click.option("--roster", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                           help="An LMS export that maps students to the ids its import needs: Canvas's gradebook "
                                "export, or Moodle's grading worksheet (which --format moodle-worksheet fills "
                                "in).")(command)
    command = click.option("--canvas-column",
                           help="With --format canvas: the assignment's column, 'Title (assignment id)'. "
                                "Default: the assignment's title.")(command)
    return command
_FORMAT_HELP = ("console (default), json (our schema), gradescope (results.json), or github-classroom (the console "
                "report, and the result for GitHub Classroom's autograding reporter appended to $GITHUB_OUTPUT).")


@main.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--assignment", "assignment_dir", type=click.Path(file_okay=False, path_type=Path),
              help="The assignment folder (holding assignment.yaml). Default: the folder of FILE, "
                   "or the current folder.")
@click.option("--format", "output_format", type=click.Choice(["console", "json", "gradescope", "github-classroom"]),
              default="console", help=f"How to print the result: {_FORMAT_HELP}")
@click.option("--json", "as_json", is_flag=True, help="Short for --format json.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), help="Reproduce a run: the seed it printed.")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), help="Also write JUnit XML to this file.")
@click.option("-v", "--verbose", is_flag=True, help="Also show the isolation achieved and the timings.")
@click.option("--watch", is_flag=True, help="Check again every time FILE (or the assignment) is saved, in a warm "
                                            "sandbox, until Ctrl-C.")
@click.option("--task", metavar="ID", help="Check only this task's public scenarios (and the provided engine's "
                                           "checks): a task id of assignment.yaml.")
@click.pass_context
def check(context: click.Context, file: Path | None, assignment_dir: Path | None, output_format: str,
          as_json: bool, seed: int | None, junit: Path | None, verbose: bool, watch: bool, task: str | None) -> None:
    """Check FILE (default: the assignment's submission file here) on the public scenarios.

    Exit status: 0 all passed, 1 some did not, 2 usage or spec error, 3 grader bug, 130 Ctrl-C
    (how --watch ends).
    """
    # The sandbox's interpreter loads numpy while we load the assignment.
    with _errors_to_exit_codes(context), _session(context).take_sandbox() as sandbox:
        from grader.checking import run_check

        if junit is not None:
            _writable(junit, "--junit")
        classroom_output = _github_output() if output_format == "github-classroom" and not as_json else None
        if watch:
            _session(context).resume_collector()
            _watch(file, assignment_dir, seed, output_format, as_json, junit, verbose, sandbox, task)
        checked = run_check(file, assignment_dir, seed=seed, sandbox=sandbox, task=task)
        result, assignment = checked.result, checked.assignment
        output_format = "json" if as_json else output_format
        if output_format == "json":
            from grader.report import json_report
            click.echo(json_report.dumps(result), nl=False)
        elif output_format == "gradescope":
            from grader.report import gradescope
            click.echo(gradescope.dumps(result), nl=False)
        else:
            from grader.report.console import render
            terminal = sys.stdout.isatty()
            colours = terminal and not os.environ.get("NO_COLOR")  # https://no-color.org
            width = shutil.get_terminal_size((80, 24)).columns if terminal else 80
            click.echo(render(result, title=assignment.title, colours=colours, verbose=verbose, width=width),
                       nl=False, color=colours)
            if task is not None:
                click.echo(f"Only task {task} was checked (with the provided engine's checks); grader check "
                           "without --task checks every task.")
        if classroom_output is not None:
            from grader.report import github_classroom
            with open(classroom_output, "a", encoding="utf-8") as stream:
                stream.write(github_classroom.output_line(github_classroom.encoded(result, assignment)))
        if junit is not None:
            _write_junit(junit, [(checked.submission.stem, result)])
        context.exit(ExitCode.OK if result.all_passed else ExitCode.FAILED)


@main.command(cls=SeveralValuesCommand)
@click.argument("submissions", type=click.Path(exists=True, path_type=Path))
@click.option("--assignment", "assignment_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The assignment folder (holding assignment.yaml).")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The output folder: results/, gradebook.csv, summary.json.")
@click.option("--solutions", type=click.Path(file_okay=False, path_type=Path),
              help="The instructor-only folder with hidden.yaml. Default: solutions/<assignment id> "
                   "beside the assignment's exercises folder.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), help="Submissions graded at once. Default: the CPUs.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1),
              help="The seed of every scenario's inputs. Default: the seed OUT already used, else a random one.")
@click.option("--force", is_flag=True, help="Regrade every submission, even those with a result for the same content.")
@click.option("--only", "only", metavar="ID", multiple=True,
              help="Grade only this student (repeatable; with --force, again, else when its result is not of its "
                   "submission); every other result is taken as stored, and every output is made again.")
@click.option("--format", "output_formats", type=click.Choice(["native", *GRADEBOOK_FORMATS]), multiple=True,
              help="Also write (several after one --format, or repeated): gradescope: gradescope/<id>.json "
                   "(results.json format); "
                   "canvas, moodle, lti: OUT/canvas.csv, OUT/moodle.csv, OUT/lti-scores.jsonl, gradebooks those "
                   "import as they are; moodle-worksheet: OUT/moodle-worksheet.csv, the grading worksheet given as "
                   "--roster, filled in. native (the default): results/<id>.json only.")
@click.option("--hidden-visibility", type=HIDDEN_VISIBILITIES, default=DEFAULT_HIDDEN_SHOWN_TO.value, show_default=True,
              help="Gradescope visibility of hidden scenarios.")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), help="Also write JUnit XML to this file.")
@click.option("--scheduler", metavar="ADDRESS",
              help="Grade on the workers of this Dask scheduler (tcp://HOST:8786 or tls://...) instead of "
                   "this machine; needs the [dask] extra (docs/cluster.md).")
@click.option("--require-isolation", metavar="LEVEL",
              help="Refuse to grade where a sandbox reaches less than LEVEL (such as uid-drop,landlock-v6): "
                   "a class is never graded under mixed protection.")
@click.option("--shard", metavar="I/N",
              help="Grade only shard I of N (1 to N, by a hash of the student id: the same slice on every "
                   "machine and rerun); needs --seed. grader merge puts the shards' folders together.")
@click.option("--deadline", metavar="WHEN",
              help="Mark late the submissions handed in after WHEN (2026-03-01T23:59, this machine's time zone, "
                   "or with an offset), by the --roster worksheet's submission times or the files' own, where "
                   "the names carry no late mark (Canvas's do).")
@click.option("--late-penalty", type=click.FloatRange(0, 100), metavar="P",
              help="Take P% off a late submission's score in the gradebooks (gradebook.csv keeps the score, the "
                   "penalty and the final score; the LMS files get the final one). Default: none, as LMSes apply "
                   "their own late policies.")
@click.option("--overrides", type=click.Path(exists=True, dir_okay=False, path_type=Path), metavar="FILE",
              help="A CSV of student_id,points,comment[,scenario]: set a student's score (or one scenario's "
                   "points) in the gradebooks, the summary and the report; the stored results are not changed.")
@click.option("--missing", type=click.Choice(["leave", "zero"]), default="leave", show_default=True,
              help="The --roster's students who submitted nothing: leave their LMS grade alone, or give them 0 "
                   "('no submission') in the LMS gradebooks, listed in the summary and the report.")
@_gradebook_options
@click.pass_context
def grade(context: click.Context, submissions: Path, assignment_dir: Path, out: Path, solutions: Path | None,
          jobs: int | None, seed: int | None, force: bool, output_formats: tuple[str, ...], hidden_visibility: str,
          junit: Path | None, scheduler: str | None, require_isolation: str | None, shard: str | None,
          canvas_column: str | None, roster: Path | None, moodle_identity: str, only: tuple[str, ...],
          deadline: str | None, late_penalty: float | None, overrides: Path | None, missing: str) -> None:
    """Grade every submission in SUBMISSIONS on all scenarios, public and hidden.

    SUBMISSIONS: a folder of <student-id>.py files, of <student-id>/ folders, a Canvas bulk
    download, or a .zip of one of these. Results land in OUT as each submission finishes; a rerun
    resumes. Exit status: 0 every submission graded, 1 some could not be graded, 2 usage or spec
    error, 3 grader bug, 130 interrupted (rerun to resume).
    """
    with _errors_to_exit_codes(context):
        from grader.grading import GradeRequest, OutputOptions, grade_class
        from grader.isolation_level import Requirement
        from grader.lateness import lateness_of, parse_deadline
        from grader.report.gradebook import render_summary
        from grader.report.lms_files import gradebook_options
        from grader.report.progress import ProgressDisplay
        from grader.shard import Shard

        books = gradebook_options(canvas_column, roster, moodle_identity)
        request = GradeRequest(
            submissions, assignment_dir, out, solutions, jobs=jobs, seed=seed, force=force,
            outputs=OutputOptions(gradescope="gradescope" in output_formats,
                                  hidden_visibility=ShownTo(hidden_visibility), lms=_lms_formats(output_formats),
                                  gradebook=books, junit=junit, overrides=overrides, late_penalty=late_penalty,
                                  missing_zero=missing == "zero"),
            scheduler=scheduler, require_isolation=Requirement.parse(require_isolation) if require_isolation else None,
            shard=Shard.parse(shard) if shard is not None else None, only=only,
            lateness=lateness_of(parse_deadline(deadline), books.roster) if deadline is not None else None)
        graded = grade_class(request, also=[ProgressDisplay(sys.stderr, live=sys.stderr.isatty())])
        batch = graded.batch
        if batch.interrupted:
            click.echo(f"Interrupted: {_count(batch.graded, 'result')} of this run "
                       f"{'are' if batch.graded != 1 else 'is'} saved in {out}"
                       + (f" ({batch.reused} from before)" if batch.reused else "")
                       + f"; {_count(batch.left, 'submission')} not graded yet. "
                       "Rerun the same command to grade the rest.", err=True)
            context.exit(ExitCode.INTERRUPTED)
        click.echo(f"Graded {_count(batch.graded, 'submission')} ({batch.reused} unchanged since the last run) "
                   f"with seed {batch.seed} into {out}" + (f" (shard {request.shard})" if request.shard else "") + "\n")
        click.echo(render_summary(graded.summary, "by the LMS or after --deadline" if deadline else "by the LMS"),
                   nl=False)
        assert graded.report is not None
        click.echo(f"\nReport: {graded.report.html}")
        _show_gradebooks(graded.gradebooks)
        context.exit(ExitCode.FAILED if graded.summary.ungradable else ExitCode.OK)


@main.command(cls=SeveralValuesCommand)
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the HTML report. Default: OUT/report.html.")
@click.option("--with-students", is_flag=True,
              help="Also write each student's feedback page, OUT/students/<id>.html, and a table linking to them.")
@click.option("--format", "output_formats", type=click.Choice(GRADEBOOK_FORMATS[1:]), multiple=True,
              help="Also write LMS gradebooks (several after one --format, or repeated): canvas, moodle, "
                   "moodle-worksheet, lti, as grader grade does.")
@_gradebook_options
@click.pass_context
def report(context: click.Context, out: Path, html_path: Path | None, with_students: bool,
           output_formats: tuple[str, ...], canvas_column: str | None, roster: Path | None,
           moodle_identity: str) -> None:
    """Write the class report of OUT (a grader grade output folder) from its stored results.

    One self-contained HTML file (plots, statistics, misconceptions; readable offline), every table
    as CSV in OUT/report/, and on request the students' pages. Nothing is regraded; the overrides,
    late penalty and --missing the last grader grade was given apply here too.
    """
    with _errors_to_exit_codes(context):
        from grader.grading import report_class
        from grader.report.lms_files import gradebook_options

        files, gradebooks = report_class(out, html_path=html_path, with_students=with_students,
                                         lms=_lms_formats(output_formats),
                                         gradebook=gradebook_options(canvas_column, roster, moodle_identity))
        click.echo(f"Report: {files.html}\nTables: {files.tables}/*.csv"
                   + (f"\nStudents' pages: {files.students}/" if files.students else ""))
        _show_gradebooks(gradebooks)


@main.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The merged output folder: results/, gradebook.csv, summary.json, as one batch writes them.")
@click.pass_context
def merge(context: click.Context, folders: tuple[Path, ...], out: Path) -> None:
    """Merge the output folders of several batches (the shards of a class) into one, from their results.

    Rebuilds the gradebook, the summary and the class report without regrading. Refuses batches of
    different assignment digests, seeds or grader versions, a student in two folders with different
    results, an unfinished batch, and a missing shard. Exit status: 0 every student graded, 1 some
    could not be graded, 2 usage error, 3 grader bug.
    """
    with _errors_to_exit_codes(context):
        from grader.merge import merge_outputs
        from grader.report.gradebook import render_summary

        _writable(out, "--out", folder=True)
        merged = merge_outputs(folders, out)
        click.echo(f"Merged {_count(len(folders), 'folder')} ({_count(len(merged.rows), 'student')}, seed "
                   f"{merged.manifest.seed}) into {out}" + (f"; class report: {merged.report}" if merged.report else "")
                   + "\n")
        click.echo(render_summary(merged.summary), nl=False)
        context.exit(ExitCode.FAILED if merged.summary.ungradable else ExitCode.OK)


@main.command("gradescope-package")
@click.option("--assignment", "assignment_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The assignment folder (holding assignment.yaml).")
@click.option("--solutions", type=click.Path(file_okay=False, path_type=Path),
              help="The instructor-only folder with hidden.yaml. Default: solutions/<assignment id>.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The zip to write.")
@click.option("--hidden-visibility", type=HIDDEN_VISIBILITIES, default=DEFAULT_HIDDEN_SHOWN_TO.value, show_default=True,
              help="Gradescope visibility of hidden scenarios.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1),
              help="The seed of every run on Gradescope. Default: one derived from the assignment's digest.")
@click.pass_context
def gradescope_package(context: click.Context, assignment_dir: Path, solutions: Path | None, out: Path,
                       hidden_visibility: str, seed: int | None) -> None:
    """Build the autograder zip to upload to Gradescope (setup.sh, run_autograder, the grader wheel)."""
    with _errors_to_exit_codes(context):
        from grader.gradescope_package import build_package, memory_notes
        from grader.loading import find_solutions, load_assignment

        assignment = load_assignment(assignment_dir, hidden=solutions or find_solutions(assignment_dir))
        _writable(out, "--out")
        build_package(assignment, out, hidden_visibility, seed=seed)
        click.echo(f"Wrote {out}: upload it as the autograder of a Gradescope programming assignment "
                   f"(base image with Python >= 3.11).")
        for note in memory_notes(assignment):
            click.echo(f"Note: {note}")


@main.command("gradescope-run")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path),
              help="The autograder root. Default: $GRADER_AUTOGRADER_ROOT, else /autograder.")
@click.option("--hidden-visibility", type=HIDDEN_VISIBILITIES, default=DEFAULT_HIDDEN_SHOWN_TO.value, show_default=True,
              help="Gradescope visibility of hidden scenarios.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1),
              help="The seed of the scenarios' inputs. Default: one derived from the assignment's digest.")
@click.pass_context
def gradescope_run(context: click.Context, root: Path | None, hidden_visibility: str, seed: int | None) -> None:
    """Inside Gradescope: grade ROOT/submission into ROOT/results/results.json (run_autograder calls it).

    Whatever fails, results.json is written (score 0, saying why; the details in the log) and the
    exit status is 0: Gradescope shows the student nothing without it.
    """
    with _errors_to_exit_codes(context):
        from grader.gradescope_package import default_root, run_in_gradescope

        document = run_in_gradescope(root or default_root(), hidden_visibility, seed=seed, log=click.echo)
        click.echo(f"Score: {document['score']:g}")


def _lms_formats(output_formats: tuple[str, ...]) -> tuple[LmsFormat, ...]:
    from grader.report.lms_gradebooks import LmsFormat
    return tuple(LmsFormat(name) for name in dict.fromkeys(output_formats) if name in GRADEBOOK_FORMATS[1:])


def _show_gradebooks(written: list[tuple[Path, Gradebook]]) -> None:
    """Say where each LMS gradebook asked for was written, what it leaves out and why."""
    for path, book in written:
        if not book.written:
            click.echo(f"{book.format.label}: not written, no student could be put in it ({book.why_empty})")
            continue
        click.echo(f"{book.format.label}: {path} ({_count(book.rows, 'student')})")
        for note in book.notes:
            click.echo(f"  Note: {note}")
        if book.left_out:
            click.echo(f"  Left out ({len(book.left_out)}; their LMS grade is not changed):")
            for student, why in book.left_out[:LEFT_OUT_SHOWN]:
                click.echo(f"    {student}: {why}")
            if len(book.left_out) > LEFT_OUT_SHOWN:
                click.echo(f"    ... and {len(book.left_out) - LEFT_OUT_SHOWN} more")


def _watch(file: Path | None, assignment_dir: Path | None, seed: int | None, output_format: str, as_json: bool,
           junit: Path | None, verbose: bool, sandbox: Sandbox, task: str | None) -> None:
    """``check --watch``: until Ctrl-C (a KeyboardInterrupt, exit status 130)."""
    from grader.errors import UsageError
    from grader.runner import new_seed
    from grader.watch import console_view, watch

    if as_json or output_format != "console" or junit is not None:
        raise UsageError("--watch shows the console report: leave out --json, --format and --junit")
    colours = sys.stdout.isatty()
    watch(file, assignment_dir, seed=new_seed() if seed is None else seed, sandbox=sandbox,
          show=lambda text: click.echo(text, nl=False, color=colours),
          render=console_view(colours=colours, verbose=verbose), clear=colours, task=task)


def _github_output() -> Path:
    """The file a GitHub Actions step appends its outputs to (``$GITHUB_OUTPUT``), refused before the
    check runs when it is not set or cannot be written."""
    from grader.errors import UsageError
    where = os.environ.get("GITHUB_OUTPUT")
    if not where:
        raise UsageError("--format github-classroom appends the result to $GITHUB_OUTPUT, which GitHub Actions sets "
                         "in a workflow step; it is not set here (the console report alone: leave out --format)")
    path = Path(where)
    if not path.parent.is_dir() or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"--format github-classroom: $GITHUB_OUTPUT ({where}) cannot be written")
    return path


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _writable(path: Path, option: str, folder: bool = False) -> None:
    """Refuse a path that cannot be written before any work starts (a usage error, not a crash)."""
    import grader.atomic as atomic
    from grader.errors import UsageError
    problem = atomic.refusal(path, option, folder=folder)
    if problem is not None:
        raise UsageError(problem)


def _write_junit(path: Path, results) -> None:
    import grader.atomic as atomic
    from grader.report.junit import write_junit_xml
    with atomic.replacing(path) as stream:
        write_junit_xml(results, stream)


class _errors_to_exit_codes:
    """Turn library errors into ``Error:`` lines and exit codes; let click's own exits through."""

    def __init__(self, context: click.Context):
        self.context = context

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, tb) -> Literal[False]:
        from grader.errors import GraderError

        if error is None or isinstance(error, (click.exceptions.Exit, click.ClickException, click.Abort)):
            return False
        if isinstance(error, BrokenPipeError):  # `grader ... | head`: the reader left, nothing to report
            sys.stderr.close()
            self.context.exit(ExitCode.OK)
        if isinstance(error, KeyboardInterrupt):
            click.echo("Interrupted.", err=True)
            self.context.exit(ExitCode.INTERRUPTED)
        if isinstance(error, GraderError):
            for line in str(error).splitlines():
                click.echo(f"Error: {line}" if not line.startswith(" ") else line, err=True)
            self.context.exit(ExitCode.USAGE)
        if _session(self.context).debug:
            return False
        click.echo(f"Error: internal error in the grader: {kind.__name__}: {error} "
                   f"(rerun with --debug for the traceback, and please report it)", err=True)
        self.context.exit(ExitCode.INTERNAL)


def _session(context: click.Context) -> Session:
    return context.ensure_object(Session)


# --------------------------------------------------------------------------- instructors: audit, release

@main.command()
@click.option("--assignment", "assignment_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              help="The assignment folder (holding assignment.yaml). Default: the current folder.")
@click.option("--solutions", type=click.Path(file_okay=False, path_type=Path),
              help="The instructor-only folder with hidden.yaml, the reference and mutants.yaml. "
                   "Default: solutions/<assignment id> beside the assignment's exercises folder.")
@click.option("--mutants", "mutants_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The named mutants. Default: mutants.yaml in the solutions folder, when there is one.")
@click.option("--seeds", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="How many seeds the reference is graded with (flakiness, time margins).")
@click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=0, show_default=True,
              help="The first seed; the handout and the mutants are graded with it.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), help="Submissions graded at once. Default: the CPUs.")
@click.option("--min-score", type=click.FloatRange(0, 100),
              help="Fail when a task's automatic mutation score (percent) is below this.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the audit as JSON (grader/schema/audit.schema.json) to this file.")
@click.option("--stryker", "stryker_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a mutation-testing report in Stryker's format to this file.")
@click.option("--no-matrix", is_flag=True, help="Leave the kill matrix out of the console report.")
@click.pass_context
def audit(context: click.Context, assignment_dir: Path, solutions: Path | None, mutants_path: Path | None,
          seeds: int, seed: int, jobs: int | None, min_score: float | None, json_path: Path | None,
          stryker_path: Path | None, no_matrix: bool) -> None:
    """Prove a rubric: grade the reference on many seeds, the handout, and mutants of the reference.

    Reports flaky scenarios, tight time limits, free points, the kill matrix, the mutation score per
    task, surviving mutants, cross-task charges and wrong diagnoses, and what to fix. Exit status: 0
    every guarantee holds, 1 some does not, 2 usage or spec error (a mutant whose edit no longer
    applies included), 3 grader bug.
    """
    with _errors_to_exit_codes(context):
        import os

        import grader.atomic as atomic
        from grader.audit import console, json_report, stryker
        from grader.audit.progress import progress_bar
        from grader.audit.run import AuditOptions, run_audit

        options = AuditOptions(assignment_dir, solutions, mutants_path, seeds, seed, jobs or os.cpu_count() or 1,
                               None if min_score is None else min_score / 100)
        report = run_audit(options, progress_bar(sys.stderr, live=sys.stderr.isatty()).update)
        colours = sys.stdout.isatty()
        style = (lambda text, role: click.style(text, fg={"pass": "green", "fail": "red", "warn": "yellow",
                                                          "dim": "bright_black"}.get(role),
                                                bold=role in ("bold", "fail"))) if colours else console.plain
        click.echo(console.render(report, style, matrix=not no_matrix), nl=False, color=colours)
        if json_path is not None:
            atomic.write_text(json_path, json_report.dumps(report))
        if stryker_path is not None:
            atomic.write_text(stryker_path, stryker.dumps(report, str(Path.cwd())))
        context.exit(ExitCode.OK if report.passed else ExitCode.FAILED)


@main.command()
@click.option("--assignment", "assignment_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              help="The assignment folder (holding assignment.yaml). Default: the current folder.")
@click.option("--solutions", type=click.Path(file_okay=False, path_type=Path),
              help="The instructor-only folder. Default: solutions/<assignment id>.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The zip to write.")
@click.option("--seeds", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="How many seeds the reference must earn every point on.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), help="Submissions graded at once. Default: the CPUs.")
@click.option("--github-classroom", is_flag=True,
              help="Also put GitHub Classroom's workflow in the handout (.github/workflows/classroom.yml): every "
                   "push runs grader check and reports the points.")
@click.pass_context
def release(context: click.Context, assignment_dir: Path, solutions: Path | None, out: Path, seeds: int,
            jobs: int | None, github_classroom: bool) -> None:
    """Build the student handout zip, refusing when it would leak or the rubric is unsound.

    The zip holds the exercise folder. Nothing is written when a file holds a hidden scenario's id,
    title or code, a file of the solutions folder or a task body of the reference, or when the
    reference is not full or the handout earns points. Exit status: 0 written, 1 refused (one line
    per problem), 2 usage or spec error, 3 grader bug.
    """
    with _errors_to_exit_codes(context):
        import os

        from grader.audit.progress import progress_bar
        from grader.release import ReleaseRefused
        from grader.release import release as build

        try:
            done = build(assignment_dir, out, solutions_dir=solutions, seeds=seeds, jobs=jobs or os.cpu_count() or 1,
                         on_progress=progress_bar(sys.stderr, live=sys.stderr.isatty()).update,
                         github_classroom=github_classroom)
        except ReleaseRefused as refused:
            click.echo(f"Refused: {out} was not written.", err=True)
            for problem in refused.problems:
                click.echo(f"  {problem}", err=True)
            context.exit(ExitCode.FAILED)
        click.echo(f"Wrote {done.out}: {len(done.files)} files ({', '.join(done.files)}); no leak found, the "
                   f"reference is full on {done.seeds} seeds and the handout earns nothing.")
