"""``%port`` and ``%%port``: parse arguments, call the session, display. Nothing else."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from porter_ext.backends import LIBRARIES
from porter_ext.session import PortOptions, drop_session, get_session
from porter_ext.session import validation as check
from porter_ext.session.validation import OptionError
from porter_ext.spec.standard import VERSIONS

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

LINE_USAGE = """\
%port on | off | status | clear
%port backends SPECS          (comma-separated LIB[:DEVICE]; "none" to stop replaying)
%port version V               (the array API standard version checked against)
%port paths [add DIR | remove DIR | clear]   (folders whose .py files are your code)
%port report [-o PATH] [--format html|md|json] [--force]"""


def _checked(check_one: Any, value: Any, *args: Any, **kw: Any) -> Any:
    """A value through the validation layer; a bad one is the magic's usage message."""
    if value is None:
        return None
    try:
        return check_one(value, *args, **kw)
    except OptionError as exc:
        raise UsageError(str(exc)) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise UsageError(f"{message}\nusage:\n{LINE_USAGE}")


def _report_parser() -> _Parser:
    parser = _Parser(prog="%port report", add_help=False)
    parser.add_argument("-o", "--output", default=None)
    parser.add_argument("--format", default=None)
    parser.add_argument("--force", action="store_true")
    return parser


def _port_options(magic: Any, line: str) -> PortOptions:
    """The options of a ``%%port`` line, every value checked before the cell runs."""
    words = _checked(check.split_words, line, "%%port")
    args = magic.parser.parse_args(words)  # its errors are UsageErrors
    policy = None
    if args.policy is not None:
        from porter_ext.compare.tolerance import POLICIES

        policy = _checked(check.choice, args.policy, "--policy", POLICIES)
    return PortOptions(
        strict=args.strict,
        quiet=args.quiet,
        backends=_checked(check.backend_specs, args.backends, "-b/--backends"),
        no_replay=args.no_replay,
        rtol=_checked(check.tolerance, args.rtol, "--rtol"),
        atol=_checked(check.tolerance, args.atol, "--atol"),
        policy=policy,
        timeout=_checked(check.seconds, args.timeout, "--timeout"),
        in_process=args.in_process,
        no_control=args.no_control,
        allow_network=args.allow_network,
        fix=args.fix,
        version=_checked(check.choice, args.version, "--version", VERSIONS),
        paths=_checked(check.folders, args.paths, "--paths") or [],
    )


@magics_class
class PortMagics(Magics):
    @property
    def session(self):
        return get_session(self.shell)

    @magic_arguments()
    @argument(
        "-b",
        "--backends",
        default=None,
        help=f"replay on these specs: LIB[:DEVICE],... ({', '.join(LIBRARIES)})",
    )
    @argument("--rtol", default=None, help="relative tolerance (overrides the policy)")
    @argument("--atol", default=None, help="absolute tolerance (overrides the policy)")
    @argument("--policy", default=None, help="tolerance policy: porter, torch, scipy, numpy")
    @argument("--no-replay", action="store_true", help="record only, even with %%port backends set")
    @argument("--timeout", default=None, help="seconds each replay may run")
    @argument(
        "--in-process",
        action="store_true",
        help="replay in this kernel (faster; porter cannot protect your session)",
    )
    @argument(
        "--allow-network",
        action="store_true",
        help="let the replays reach the network (local workers have none otherwise)",
    )
    @argument(
        "--no-control",
        action="store_true",
        help="skip the control replay on the original backend (no determinism check)",
    )
    @argument(
        "--strict",
        action="store_true",
        help="raise NonStandardError on any call outside the standard",
    )
    @argument(
        "--quiet", action="store_true", help="record and keep the result in _port, show nothing"
    )
    @argument(
        "--version",
        default=None,
        help=f"the array API standard version to check against ({', '.join(VERSIONS)})",
    )
    @argument(
        "--paths",
        action="append",
        default=None,
        metavar="DIR",
        help="a folder whose Python files are your code too, for this cell (repeatable)",
    )
    @argument(
        "--fix",
        action="store_true",
        help="propose a rewrite into the standard, verified by replays (the diff; _port.rewrite)",
    )
    @cell_magic
    def port(self, line: str, cell: str) -> None:
        """Run the cell once while recording every array call, and show what is outside
        the array API standard, with the standard spelling to use instead; replay it on
        other backends and devices and compare numbers and device placement."""
        options = _port_options(self.port, line)
        try:
            result, run = self.session.port_cell(cell, options)
        except KeyboardInterrupt:
            # the person stopped the cell: theirs to see, without porter's frames (IPython
            # shows the frame an exception is raised in, and formatting porter's frames
            # took seconds)
            interrupt = KeyboardInterrupt()
            self.shell.showtraceback((KeyboardInterrupt, interrupt, None))
            self._failed(interrupt)
            return None
        except SyntaxError as exc:  # the session kept the cell with its error
            self.shell.showsyntaxerror()
            self._failed(exc)
            return None
        self.session.display_value(run)
        if not options.quiet:
            display(result)
        for warning in result.warnings:
            print(warning)
        if run.exception is not None:
            __tracebackhide__ = True  # noqa: F841 (read by IPython's traceback formatter)
            raise run.exception
        return None

    def _failed(self, exc: BaseException) -> None:
        """The cell failed, as it does without porter: the running cell's result says so
        (the kernel then replies with an error, and `porter run` sees one)."""
        running = getattr(self.shell.displayhook, "exec_result", None)
        if running is not None:
            running.error_in_exec = exc

    @line_magic("port")
    def port_line(self, line: str) -> Any:
        """%port on | off | status | clear | report [-o PATH] [--format html|md|json]"""
        words = _checked(check.split_words, line, "%port")
        if not words:
            raise UsageError(f"%port needs a command\nusage:\n{LINE_USAGE}")
        command, rest = words[0], words[1:]
        session = self.session
        if command in ("on", "off", "status", "clear") and rest:
            raise UsageError(f"%port {command} takes no arguments\nusage:\n{LINE_USAGE}")
        if command == "on":
            session.start_recording()
            print("porter: recording every cell")
        elif command == "off" and session.headless:
            session.note("%port off was ignored: a headless run records every cell")
            print("porter: %port off ignored: a headless run records every cell")
        elif command == "off":
            session.stop_recording()
            print("porter: recording stopped")
        elif command == "status":
            print(session.status())
        elif command == "clear":
            session.clear()
            if session.headless:
                print("porter: %port clear ignored: a headless run keeps every cell")
            else:
                print("porter: cell results cleared")
        elif command == "backends":
            if len(rest) != 1:
                raise UsageError(f"%port backends takes one SPECS argument\nusage:\n{LINE_USAGE}")
            session.config.backends = (
                [] if rest[0] == "none" else _checked(check.backend_specs, rest[0], "SPECS")
            )
            shown = ", ".join(str(s) for s in session.config.backends) or "none"
            print(f"porter: replaying recorded cells on: {shown}")
        elif command == "version":
            if len(rest) != 1:
                raise UsageError(f"%port version takes one version\nusage:\n{LINE_USAGE}")
            session.config.version = _checked(check.choice, rest[0], "version", VERSIONS)
            print(f"porter: checking against the array API standard {session.config.version}")
        elif command == "paths":
            self._paths(rest)
        elif command == "report":
            args = _report_parser().parse_args(rest)
            return self._report(args.output, args.format, args.force)
        else:
            raise UsageError(f"unknown %port command {command!r}\nusage:\n{LINE_USAGE}")
        return None

    def _paths(self, rest: list[str]) -> None:
        """``%port paths``: list, add to or clear the folders the person added."""
        from porter_ext.record import person_code

        action, dirs = (rest[0], rest[1:]) if rest else ("list", [])
        added = list(person_code.added())
        if action == "add" and dirs:
            added += _checked(check.folders, dirs, "%port paths add")
        elif action == "remove" and dirs:
            gone = {os.path.realpath(os.path.expanduser(d)) for d in dirs}
            added = [p for p in added if p not in gone]
        elif action == "clear" and not dirs:
            added = []
        elif action != "list" or dirs:
            raise UsageError(
                f"%port paths {' '.join(rest)}: not a paths command\nusage:\n{LINE_USAGE}"
            )
        person_code.configure(extra=added)
        shown = ", ".join(person_code.folders())
        print(f"porter: your code is the Python files under: {shown}")

    def _report(self, output: str | None, fmt: str | None, force: bool = False) -> Any:
        from porter_ext.guard import internal_error
        from porter_ext.report.validation import ReportError
        from porter_ext.report.write import OverwriteError, write_report

        try:
            choice = check.report_output(output, fmt, default="html")
        except OptionError as exc:
            raise UsageError(str(exc)) from None
        if output is None:
            from porter_ext.ui.report import report_bundle

            display(report_bundle(self.session.report(), fmt and choice.format), raw=True)
            return None
        if choice.note:
            print(f"porter: {choice.note}")
        try:
            path = write_report(self.session.report(), choice.path, choice.format, force=force)
        except OverwriteError as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"cannot write {choice.path}: {exc.strerror or exc}") from None
        except ReportError as exc:  # porter built a report its own schema rejects
            internal_error("writing the report", exc)
            return None
        print(f"porter: report written to {path}")
        return None


def load(ipython: InteractiveShell) -> None:
    get_session(ipython)
    ipython.register_magics(PortMagics)


#: what the ``porter`` kernel loads at start (``--ext=porter_ext.magics``): under this
#: module's name, so that a notebook's own ``%load_ext porter_ext`` (which keeps it
#: working in any kernel) loads silently instead of printing "already loaded"
load_ipython_extension = load


def unload(ipython: InteractiveShell) -> None:
    session = get_session(ipython)
    if session.headless:  # the report of a headless run keeps every cell
        session.note("%unload_ext porter_ext was ignored: a headless run records every cell")
        print("porter: %unload_ext porter_ext ignored: a headless run records every cell")
        return
    drop_session(ipython)
