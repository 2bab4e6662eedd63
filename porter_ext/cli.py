"""``porter run | report | backends``: porter headless, for CI.

``porter run`` executes a notebook in a kernel with the extension loaded, treats every
code cell as a ``%%port`` cell (cells that already start with ``%%port`` keep their own
options), and writes the report (`porter_ext.headless`). Exit status: 0 written and
nothing matched ``--fail-on``; 1 written and findings matched; 2 a usage error, an
unreadable notebook, a kernel that could not start or died, with one line on stderr.
The command line itself (subcommands, options, their checks) is
`porter_ext.cli_parser`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from porter_ext.cli_parser import CliError, build_parser
from porter_ext.session import validation as check
from porter_ext.session.options import NETWORK_VARIABLE
from porter_ext.session.validation import OptionError

if TYPE_CHECKING:
    from typing import TextIO

    from nbformat import NotebookNode

    from porter_ext.model.report import Report

#: which summary counter each --fail-on kind looks at
_FAIL_COUNTERS = {
    "non_standard": ("non_standard",),
    "device": ("device_findings",),
    "mismatch": ("mismatches",),
    "replay_error": ("replays_failed",),
    "any": ("non_standard", "device_findings", "mismatches", "replays_failed"),
}
_SUFFIX = {"json": ".json", "html": ".html", "md": ".md"}


def _read_notebook(path: Path) -> NotebookNode:
    """The notebook, its cells checked (`porter_ext.fix.notebook_input`) before and after
    nbformat converts an older format."""
    import warnings

    import nbformat

    from porter_ext.fix.notebook_input import NotebookError, check_cells, load_json

    try:
        text = path.read_text(encoding="utf-8")
        check_cells(load_json(text, path), path)
        with warnings.catch_warnings():  # nbformat's advice on old notebooks is not porter's
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
        check_cells(nb, path)
        return nb
    except NotebookError as exc:
        raise CliError(str(exc)) from None
    except Exception as exc:  # nbformat raises many kinds for a file that is no notebook
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise CliError(f"cannot read {path}: not a valid notebook ({reason})") from None


#: plan items ``porter run`` prints; the report has them all
MAX_PLAN_LINES = 10


def print_plan(plan: list, file: TextIO | None = None) -> None:
    """The port plan, first, on stderr: what to change first, and what porter fixes."""
    from porter_ext.model.plan import plan_line

    file = file or sys.stderr
    if not plan:
        print("porter: port plan: nothing to change", file=file)
        return
    print(f"porter: port plan ({len(plan)} distinct fix(es)):", file=file)
    for number, item in enumerate(plan[:MAX_PLAN_LINES], start=1):
        print(f"  {number}. {plan_line(item)}", file=file)
    if len(plan) > MAX_PLAN_LINES:
        print(f"  ... and {len(plan) - MAX_PLAN_LINES} more in the report", file=file)


def _destination(
    args: argparse.Namespace, source: Path, formats: tuple[str, ...], default: str, infix: str
) -> tuple[Path, str]:
    """The checked output path and format; refuses the input and foreign files early."""
    from porter_ext.report.write import OverwriteError, check_overwrite

    choice = check.report_output(
        args.output, args.format, formats=formats, default=default, source=source
    )
    if choice.note:
        print(f"porter: note: {choice.note}")
    path = choice.path
    if path is None:
        stem = source.with_suffix("")
        suffix = _SUFFIX[choice.format]
        path = check.output_path(
            stem.with_name(stem.name + infix + suffix),
            "the default output",
            source=source,
        )
    try:
        check_overwrite(path, source=source, force=args.force)
    except OverwriteError as exc:
        raise CliError(str(exc)) from None
    return path, choice.format


def _write(report: Report, path: Path, fmt: str, args: argparse.Namespace, source: Path) -> Path:
    from porter_ext.report import ReportError
    from porter_ext.report.write import write_report

    try:
        return write_report(report, path, fmt, force=args.force, source=source)  # type: ignore[arg-type]
    except ReportError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


def cmd_run(args: argparse.Namespace) -> int:
    from porter_ext.fix.notebook_input import shown_name
    from porter_ext.headless import RunError, run_notebook

    source = check.input_file(args.notebook, "NOTEBOOK")
    path, fmt = _destination(args, source, check.REPORT_FORMATS, "json", ".porter")
    nb = _read_notebook(source)
    backends = [str(s) for s in args.backends]
    try:
        report = run_notebook(
            source,
            nb,
            timeout=args.timeout,
            backends=backends,
            progress=sys.stderr.isatty(),
            paths=args.paths,
        )
    except RunError as exc:
        if exc.report is None:
            raise CliError(str(exc)) from None
        out = _write(exc.report, path, fmt, args, source)
        raise CliError(f"{exc}; the report so far is in {out}") from None
    out = _write(report, path, fmt, args, source)
    summary = asdict(report.summary)
    print_plan(report.plan)
    print(f"porter: {shown_name(source)}: {report.summary.text}")
    print(f"porter: report written to {out}")
    matched = [k for k in args.fail_on if any(summary[c] for c in _FAIL_COUNTERS[k])]
    if matched:
        print(f"porter: failing on {', '.join(matched)}", file=sys.stderr)
        return 1
    return 0


def cmd_fix(args: argparse.Namespace) -> int:
    """Exit 0 when the ported notebook (and the report) were written, 2 when not."""
    import nbformat

    from porter_ext.fix.files import write_ported
    from porter_ext.fix.fresh_run import FreshRunRefused, compared, fresh_check
    from porter_ext.fix.notebook import fix_sources, is_ported_notebook
    from porter_ext.fix.notebook_input import shown_name
    from porter_ext.headless import RunError, run_fresh, run_notebook
    from porter_ext.report.write import same_file, write_text_atomic

    source = check.input_file(args.notebook, "NOTEBOOK")
    out = check.notebook_output(args.output, "-o", source=source)
    if out.is_file() and not args.force and not is_ported_notebook(out):
        raise CliError(f"{out} exists and is not a notebook porter ported; pass --force")
    report_path, fmt = None, "json"
    if args.report is not None:
        choice = check.report_output(args.report, None, option="--report", source=source)
        report_path, fmt = choice.path, choice.format
        if same_file(report_path, out) or report_path.resolve() == out.resolve():
            raise CliError("--report and -o name the same file")
    nb = _read_notebook(source)
    backends = [str(s) for s in args.backends]
    work = fix_sources(nb, args.timeout)
    try:
        report = run_notebook(
            source,
            work,
            timeout=args.timeout,
            backends=backends,
            progress=sys.stderr.isatty(),
            paths=args.paths,
        )
    except RunError as exc:
        raise CliError(f"{exc}; nothing was written") from None

    def fresh(ported: NotebookNode, files: dict[str, str]) -> dict:
        return run_fresh(
            source,
            ported,
            timeout=args.timeout,
            progress=sys.stderr.isatty(),
            paths=args.paths,
            ported_files=files,
        )

    folder = source.resolve().parent
    try:
        ported, outcome, report, files, course = fresh_check(
            nb,
            report,
            shown_name(source),
            compared(work, report),
            fresh,
            lambda file: os.path.realpath(folder / file),
        )
    except FreshRunRefused as exc:
        raise CliError(str(exc)) from None
    except RunError as exc:
        raise CliError(
            f"the fresh run of the ported notebook: {exc}; nothing was written"
        ) from None
    try:
        write_ported(
            files,
            report.cells,
            folder,
            write_text_atomic,
            in_place=args.in_place,
        )
    except OSError as exc:
        raise CliError(f"cannot write a ported file: {exc.strerror or exc}") from None
    if report_path is not None:
        _write(report, report_path, fmt, args, source)
    try:
        write_text_atomic(out, nbformat.writes(ported))
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}") from None
    for line in [*course.lines, course.summary()]:  # once written: an error is one line
        print(f"porter: {line}", file=sys.stderr)
    print_plan(report.plan)
    for line in outcome.lines():
        print(f"porter: {line}")
    for file in files:
        print(f"porter: {file.line()}")
    print(
        f"porter: {len(outcome.applied)} cell(s) rewritten, {len(outcome.refused)} refused, "
        f"{outcome.unchanged} with nothing to rewrite; ported notebook written to {out}"
    )
    if report_path is not None:
        print(f"porter: report written to {report_path}")
    return 0


def _load_report(source: Path) -> Report:
    """A report written by porter, or the one line that says why it is not one."""
    from porter_ext.report import ReportError, load_report

    try:
        return load_report(source)
    except ReportError as exc:
        raise CliError(" ".join(str(exc).split())[:300]) from None
    except RecursionError:
        raise CliError(f"{source}: not a porter report (nested too deeply to read)") from None


def cmd_report(args: argparse.Namespace) -> int:

    source = check.input_file(args.report, "REPORT")
    path, fmt = _destination(args, source, ("html", "md"), "html", "")
    report = _load_report(source)
    out = _write(report, path, fmt, args, source)
    print(f"porter: report written to {out}")
    return 0


def cmd_backends(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from porter_ext.backends import list_backends
    from porter_ext.replay.confine import confinement, describe_isolation
    from porter_ext.replay.workers import worker_only_specs

    infos = list_backends()
    extra = worker_only_specs(infos)
    infos += extra
    sealed = confinement()
    if args.json:
        found = [{**asdict(b), "worker": b in extra, "isolation": sealed.isolation} for b in infos]
        print(json.dumps(found, indent=1))
        return 0
    width = max((len(b.spec) for b in infos), default=4)
    for b in infos:
        if b.available:
            devices = ", ".join(b.devices)
            source = f"  ({b.reason})" if b in extra else ""
            print(f"{b.spec:<{width}}  {b.version or '':<10}  {devices}{source}")
        else:
            print(f"{b.spec:<{width}}  unavailable: {b.reason}")
    print(f"replays: {describe_isolation(sealed)}")
    return 0


def cmd_install_kernels(args: argparse.Namespace) -> int:
    from porter_ext.kernelspecs import install_kernels

    prefix = sys.prefix if args.sys_prefix else args.prefix
    try:
        paths = install_kernels(user=args.user, prefix=prefix, worker=args.worker)
    except (OSError, FileNotFoundError) as exc:
        raise CliError(f"cannot install the kernelspecs: {exc}") from None
    for path in paths:
        print(f"porter: installed {path}")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    """Exit 1 on findings (notes that need a run do not count), 2 on a path it cannot read
    (a FIFO or device named on the command line is one: only regular files are read).
    Findings are printed as they are made: a big file's are never held."""
    from porter_ext.fix.formats import write
    from porter_ext.fix.lint import LintError, LintRun

    recorded = None
    if args.from_report is not None:
        from porter_ext.fix.lint_recorded import Recorded

        recorded = Recorded(_load_report(args.from_report))
    try:
        run = LintRun(args.paths, recorded=recorded)
        for reason in run.skipped:  # a FIFO or device found in a directory: never read
            print(f"porter: skipped {reason}", file=sys.stderr)
        write(run, args.format, sys.stdout, max_repeats=args.max_repeats)
    except LintError as exc:
        raise CliError(str(exc)) from None
    return 1 if run.failed else 0


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "lint": cmd_lint,
    "run": cmd_run,
    "fix": cmd_fix,
    "report": cmd_report,
    "backends": cmd_backends,
    "install-kernels": cmd_install_kernels,
}


def main(argv: list[str] | None = None) -> int:
    from porter_ext.guard import internal_error

    # jsonschema (imported by nbformat) imports rfc3987_syntax when it is installed, which
    # compiles an IRI grammar for some two seconds on every start; nothing porter reads
    # is checked for the "iri" format, so porter's own process goes without it.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

    for stream in (sys.stdout, sys.stderr):  # text that is not valid Unicode (a lone
        with contextlib.suppress(AttributeError, ValueError):  # surrogate) is escaped
            stream.reconfigure(errors="backslashreplace")
    try:
        args = build_parser().parse_args(argv)
        if getattr(args, "allow_network", False):  # the headless kernel inherits it
            os.environ[NETWORK_VARIABLE] = "1"
        return HANDLERS[args.command](args)
    except (CliError, OptionError) as exc:
        print(f"porter: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("porter: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`porter lint . | head`): stop quietly, as a tool killed
        # by SIGPIPE does, and keep Python's final flush from raising again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13  # SIGPIPE
    except Exception as exc:  # a bug in porter: one line, the traceback under PORTER_DEBUG=1
        internal_error("porter " + " ".join((argv or sys.argv[1:])[:1]), exc)
        return 2


if __name__ == "__main__":
    sys.exit(main())
