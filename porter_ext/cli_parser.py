"""The command line of ``porter``: its subcommands and their options (`build_parser`).

A usage error is one line (`CliError`, exit status 2), and every option value goes
through `porter_ext.session.validation`, as the magics' do; `porter_ext.cli` runs the
commands.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from porter_ext.backends import LIBRARIES
from porter_ext.session import validation as check
from porter_ext.session.validation import FAIL_KINDS, OptionError

#: ``porter lint``'s text and GitHub output: findings of one check on one name shown per
#: file (``--max-repeats``): a file that repeats a call a million times is not a million
#: lines, and the count of the rest is one line
MAX_REPEATS = 50


class CliError(Exception):
    """A failure that ends the command with exit status 2 and a one-line reason."""


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (the CLI's contract) instead of a block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(f"{self.prog}: {message} (see {self.prog} --help)")


def _arg(check_one: Callable[..., Any], *args: Any) -> Callable[[str], Any]:
    """An argparse type from a validation function: its message is argparse's error."""

    def convert(text: str) -> Any:
        try:
            return check_one(text, *args)
        except OptionError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = check_one.__name__
    return convert


def _replay_arguments(parser: argparse.ArgumentParser, backends_help: str) -> None:
    """-b/--backends, --paths and --timeout, as ``porter run`` and ``porter fix`` share them."""
    parser.add_argument(
        "-b",
        "--backends",
        type=_arg(check.backend_specs, "-b/--backends"),
        default=[],
        metavar="SPECS",
        help=backends_help,
    )
    parser.add_argument(
        "--paths",
        type=_arg(check.folder, "--paths"),
        action="append",
        default=[],
        metavar="DIR",
        help="a folder whose Python files are your code too (the notebook's folder always is; "
        "repeatable)",
    )
    parser.add_argument(
        "--timeout",
        type=_arg(check.seconds, "--timeout"),
        default=600.0,
        metavar="S",
        help="seconds each cell's original run, and each of its replays, may take (default 600)",
    )
    parser.add_argument(
        "--allow-network",
        action="store_true",
        help="let replays reach the network (local workers have none; each replay says so)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="porter", description="porter: port array code to the Python array API standard"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run", help="execute a notebook with every cell recorded; write the report"
    )
    run.add_argument("notebook", metavar="NOTEBOOK")
    _replay_arguments(
        run, f"replay every cell on these specs: LIB[:DEVICE],... ({', '.join(LIBRARIES)})"
    )
    run.add_argument(
        "-o", "--output", default=None, help="report path (default: NOTEBOOK.porter.FORMAT)"
    )
    run.add_argument(
        "--format",
        default=None,
        help="html, md or json (default: from the suffix of -o, else json)",
    )
    run.add_argument(
        "--fail-on",
        type=_arg(check.fail_kinds, "--fail-on"),
        default=[],
        metavar="KINDS",
        help=f"exit 1 when findings of these kinds exist: {', '.join(FAIL_KINDS)}",
    )
    run.add_argument("--force", action="store_true", help="replace an -o file porter did not write")

    fix = sub.add_parser("fix", help="rewrite a notebook into the standard where replays verify it")
    fix.add_argument("notebook", metavar="NOTEBOOK")
    fix.add_argument("-o", "--output", required=True, metavar="PORTED", help="the ported notebook")
    fix.add_argument(
        "--report", default=None, metavar="PATH", help="what was applied, refused and why"
    )
    _replay_arguments(fix, "verify every rewrite on these specs too (the original backend always)")
    fix.add_argument("--force", action="store_true", help="replace files porter did not write")
    fix.add_argument(
        "--in-place",
        action="store_true",
        help="write a verified rewrite of your Python files over them (a backup NAME.py.orig "
        "first) instead of beside them as NAME.ported.py",
    )

    report = sub.add_parser("report", help="convert a JSON report to HTML or Markdown")
    report.add_argument("report", metavar="REPORT")
    report.add_argument("-o", "--output", default=None, help="default: REPORT with .html or .md")
    report.add_argument("--format", default=None, help="html or md (default: from -o, else html)")
    report.add_argument(
        "--force", action="store_true", help="replace an -o file porter did not write"
    )

    lint = sub.add_parser("lint", help="check .py files and notebooks statically (no run)")
    lint.add_argument(
        "paths",
        nargs="+",
        type=_arg(check.input_path, "PATH"),
        metavar="PATH",
        help="files or directories",
    )
    lint.add_argument(
        "--format",
        type=_arg(check.choice, "--format", ("text", "json", "sarif", "github")),
        default="text",
        help="text, json, sarif or github (annotations); default text",
    )
    lint.add_argument(
        "--max-repeats",
        type=_arg(check.count, "--max-repeats"),
        default=MAX_REPEATS,
        metavar="N",
        help=f"text and github output: findings of one check on one name shown per file, "
        f"the rest counted in one line (default {MAX_REPEATS}; 0: all). json and sarif "
        "list every finding",
    )
    lint.add_argument(
        "--from-report",
        type=_arg(check.input_file, "--from-report"),
        default=None,
        metavar="REPORT",
        help="a report of porter run: what its recorded cells saw in your .py files (the "
        "library of their functions' arrays) makes the checks see it too",
    )

    backends = sub.add_parser("backends", help="list every backend spec porter can see")
    backends.add_argument("--json", action="store_true", help="machine-readable output")

    kernels = sub.add_parser(
        "install-kernels", help="install the porter kernelspec (and porter-worker, --worker)"
    )
    kernels.add_argument(
        "--worker",
        action="store_true",
        help="also porter-worker, for a gateway's host that runs porter's replays "
        "(it then shows in that host's kernel lists)",
    )
    where = kernels.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user only")
    where.add_argument("--sys-prefix", action="store_true", help="into this Python's prefix")
    where.add_argument(
        "--prefix",
        type=_arg(check.writable_directory, "--prefix"),
        default=None,
        help="under this prefix",
    )
    return parser
