"""``%port`` and ``%%port``: parse arguments, call the session, display. Nothing else."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from porter_ext.session import PortOptions, drop_session, get_session

LINE_USAGE = """\
%port on | off | status | clear
%port backends SPECS          (comma-separated LIB[:DEVICE]; "none" to stop replaying)
%port report [-o PATH] [--format html|md|json]"""


def _specs(text: str) -> list:
    from porter_ext.backends import SpecError, parse_specs

    try:
        return parse_specs(text)
    except SpecError as exc:
        raise UsageError(str(exc)) from None


def _number(text: str | None, what: str) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{what} must be a number, not {text!r}") from None
    if value < 0:
        raise UsageError(f"{what} must not be negative")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise UsageError(f"{message}\nusage:\n{LINE_USAGE}")


def _report_parser() -> _Parser:
    parser = _Parser(prog="%port report", add_help=False)
    parser.add_argument("-o", "--output", default=None)
    parser.add_argument("--format", choices=("html", "md", "json"), default=None)
    return parser


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
        help="replay on these specs: LIB[:DEVICE],... (numpy, torch, jax, cupy, strict)",
    )
    @argument("--rtol", default=None, help="relative tolerance (overrides the policy)")
    @argument("--atol", default=None, help="absolute tolerance (overrides the policy)")
    @argument("--policy", default=None, help="tolerance policy: porter, torch, scipy, numpy")
    @argument("--no-replay", action="store_true", help="record only, even with %%port backends set")
    @argument("--timeout", default=None, help="seconds each replay may run")
    @argument(
        "--strict",
        action="store_true",
        help="raise NonStandardError on any call outside the standard",
    )
    @argument(
        "--quiet", action="store_true", help="record and keep the result in _port, show nothing"
    )
    @cell_magic
    def port(self, line: str, cell: str) -> None:
        """Run the cell once while recording every array call, and show what is outside
        the array API standard, with the standard spelling to use instead; replay it on
        other backends and devices and compare numbers and device placement."""
        args = parse_argstring(self.port, line)
        if args.policy is not None:
            from porter_ext.compare.tolerance import POLICIES

            if args.policy not in POLICIES:
                raise UsageError(
                    f"unknown policy {args.policy!r}; choose from {', '.join(POLICIES)}"
                )
        timeout = _number(args.timeout, "--timeout")
        options = PortOptions(
            strict=args.strict,
            quiet=args.quiet,
            backends=_specs(args.backends) if args.backends is not None else None,
            no_replay=args.no_replay,
            rtol=_number(args.rtol, "--rtol"),
            atol=_number(args.atol, "--atol"),
            policy=args.policy,
            timeout=timeout if timeout else None,
        )
        try:
            result, run = self.session.port_cell(cell, options)
        except SyntaxError:
            self.shell.showsyntaxerror()
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

    @line_magic("port")
    def port_line(self, line: str) -> Any:
        """%port on | off | status | clear | report [-o PATH] [--format html|md|json]"""
        words = shlex.split(line)
        if not words:
            raise UsageError(f"%port needs a command\nusage:\n{LINE_USAGE}")
        command, rest = words[0], words[1:]
        session = self.session
        if command in ("on", "off", "status", "clear") and rest:
            raise UsageError(f"%port {command} takes no arguments\nusage:\n{LINE_USAGE}")
        if command == "on":
            session.start_recording()
            print("porter: recording every cell")
        elif command == "off":
            session.stop_recording()
            print("porter: recording stopped")
        elif command == "status":
            print(session.status())
        elif command == "clear":
            session.clear()
            print("porter: cell results cleared")
        elif command == "backends":
            if len(rest) != 1:
                raise UsageError(f"%port backends takes one SPECS argument\nusage:\n{LINE_USAGE}")
            session.config.backends = [] if rest[0] == "none" else _specs(rest[0])
            shown = ", ".join(str(s) for s in session.config.backends) or "none"
            print(f"porter: replaying recorded cells on: {shown}")
        elif command == "report":
            args = _report_parser().parse_args(rest)
            return self._report(args.output, args.format)
        else:
            raise UsageError(f"unknown %port command {command!r}\nusage:\n{LINE_USAGE}")
        return None

    def _report(self, output: str | None, fmt: str | None) -> Any:
        from porter_ext.report import write_report

        report = self.session.report()
        if output is None:
            from porter_ext.ui.report import report_bundle

            display(report_bundle(report, fmt), raw=True)
            return None
        path = write_report(report, output, fmt)
        print(f"porter: report written to {path}")
        return None


def load(ipython: Any) -> None:
    get_session(ipython)
    ipython.register_magics(PortMagics)


def unload(ipython: Any) -> None:
    drop_session(ipython)
