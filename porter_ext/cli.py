"""``porter run | report | backends``: porter headless, for CI.

``porter run`` executes a notebook through nbclient in a kernel with the extension loaded,
treats every code cell as a ``%%port`` cell (cells that already start with ``%%port`` keep
their own options), and writes the report. Exit status: 0 written and nothing matched
``--fail-on``; 1 written and findings matched; 2 usage error, unreadable notebook or a
kernel that could not start (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FAIL_KINDS = ("non_standard", "device", "mismatch", "replay_error", "any")
#: which summary counter each --fail-on kind looks at
_FAIL_COUNTERS = {
    "non_standard": ("non_standard",),
    "device": ("device_findings",),
    "mismatch": ("mismatches",),
    "replay_error": ("replays_failed",),
    "any": ("non_standard", "device_findings", "mismatches", "replays_failed"),
}
KERNEL_NAME = "porter"


class CliError(Exception):
    """A failure that ends the command with exit status 2 and a one-line reason."""


def _fail_kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in kinds if k not in FAIL_KINDS]
    if bad:
        raise argparse.ArgumentTypeError(
            f"unknown kind {bad[0]!r}; choose from {', '.join(FAIL_KINDS)}"
        )
    return kinds


def _specs(text: str) -> list[str]:
    from porter_ext.backends import SpecError, parse_specs

    try:
        return [str(s) for s in parse_specs(text)]
    except SpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="porter", description="porter: port array code to the Python array API standard"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run", help="execute a notebook with every cell recorded; write the report"
    )
    run.add_argument("notebook", type=Path)
    run.add_argument(
        "-b",
        "--backends",
        type=_specs,
        default=[],
        metavar="SPECS",
        help="replay every cell on these specs: LIB[:DEVICE],... (numpy, torch, jax, cupy, strict)",
    )
    run.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="report path (default: NOTEBOOK.porter.FORMAT)",
    )
    run.add_argument(
        "--format",
        choices=("html", "md", "json"),
        default=None,
        help="default: from the suffix of -o, else json",
    )
    run.add_argument(
        "--timeout", type=_positive, default=600.0, help="seconds per cell (default 600)"
    )
    run.add_argument(
        "--fail-on",
        type=_fail_kinds,
        default=[],
        metavar="KINDS",
        help=f"comma-separated: {', '.join(FAIL_KINDS)}",
    )

    report = sub.add_parser("report", help="convert a JSON report to HTML or Markdown")
    report.add_argument("report", type=Path)
    report.add_argument("-o", "--output", type=Path, default=None)
    report.add_argument("--format", choices=("html", "md"), default=None)

    backends = sub.add_parser("backends", help="list every backend spec porter can see")
    backends.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


# --- porter run ----------------------------------------------------------------------


def _read_notebook(path: Path) -> Any:
    import nbformat

    if not path.exists():
        raise CliError(f"cannot read {path}: no such file")
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CliError(f"cannot read {path}: not a valid notebook ({reason})") from None
    return nb


def port_source(source: str) -> str:
    """The source a cell runs under ``porter run``: a ``%%port`` cell keeps its options."""
    if source.lstrip().startswith("%%port"):
        return source.lstrip()
    return "%%port --quiet\n" + source


def _kernel_manager() -> Any:
    """A manager for the ``porter`` kernelspec, or an equivalent one built here when the
    kernelspec is not installed (a source checkout)."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager, NoSuchKernel
    from jupyter_client.manager import KernelManager

    try:
        KernelSpecManager().get_kernel_spec(KERNEL_NAME)
        return KernelManager(kernel_name=KERNEL_NAME)
    except NoSuchKernel:
        spec_file = Path(__file__).resolve().parent.parent / "kernels" / KERNEL_NAME / "kernel.json"
        if spec_file.exists():
            data = json.loads(spec_file.read_text())
        else:
            data = {
                "argv": [
                    "python",
                    "-m",
                    "ipykernel_launcher",
                    "-f",
                    "{connection_file}",
                    "--ext=porter_ext",
                ],
                "display_name": "Python 3 (porter)",
                "language": "python",
            }
        km = KernelManager(kernel_name=KERNEL_NAME)
        km._kernel_spec = KernelSpec(resource_dir=str(spec_file.parent), **data)
        return km


_REPORT_CODE = """\
import porter_ext.session as _porter_session
_porter_report = _porter_session.get_session(get_ipython()).report(notebook={name!r})
with open({path!r}, "w", encoding="utf-8") as _f:
    _f.write(_porter_report.to_json())
del _porter_session, _porter_report, _f
"""


class _Progress:
    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.done = total, enabled, 0

    def cell(self, index: int, seconds: float, status: str) -> None:
        self.done += 1
        if self.enabled:
            print(
                f"\r[{self.done}/{self.total}] cell {index}: {status} ({seconds:.1f}s)\x1b[K",
                end="",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.enabled and self.done:
            print(file=sys.stderr)


def execute_notebook(
    path: Path, *, timeout: float, progress: bool, backends: list[str] | None = None
) -> dict[str, Any]:
    """Run every code cell of the notebook recorded; return the report as a dict."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError

    nb = _read_notebook(path)
    code_cells = [
        (i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()
    ]
    for _, cell in code_cells:
        cell.source = port_source(cell.source)
    env_dir = str(path.resolve().parent)
    client = NotebookClient(
        nb,
        km=_kernel_manager(),
        timeout=timeout,
        allow_errors=True,
        record_timing=False,
        resources={"metadata": {"path": env_dir}},
    )
    bar = _Progress(len(code_cells), progress)
    count_to_index: dict[int, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        report_path = os.path.join(tmp, "report.json")
        try:
            with client.setup_kernel():
                if backends:
                    setup = nbformat.v4.new_code_cell(
                        f"get_ipython().run_line_magic('port', 'backends {','.join(backends)}')"
                    )
                    nb.cells.append(setup)
                    client.execute_cell(setup, len(nb.cells) - 1)
                    nb.cells.pop()
                for index, cell in code_cells:
                    start = time.perf_counter()
                    try:
                        client.execute_cell(cell, index)
                        failed = any(
                            o.get("output_type") == "error" for o in cell.get("outputs", [])
                        )
                        status = "raised" if failed else "ok"
                    except CellTimeoutError:
                        status = "timeout"
                    if cell.get("execution_count") is not None:
                        count_to_index[cell.execution_count] = index
                    bar.cell(index, time.perf_counter() - start, status)
                final = nbformat.v4.new_code_cell(
                    _REPORT_CODE.format(name=path.name, path=report_path)
                )
                nb.cells.append(final)
                client.execute_cell(final, len(nb.cells) - 1)
        except CliError:
            raise
        except Exception as exc:
            bar.close()
            if not client.kc:
                raise CliError(f"the kernel could not start: {exc}") from None
            raise CliError(f"running {path.name} failed: {type(exc).__name__}: {exc}") from exc
        bar.close()
        errors = [o for o in final.get("outputs", []) if o.get("output_type") == "error"]
        if errors or not os.path.exists(report_path):
            detail = errors[0].get("evalue", "") if errors else "no report was produced"
            raise CliError(f"could not collect the report from the kernel: {detail}")
        with open(report_path, encoding="utf-8") as f:
            data = json.load(f)
    for entry in data["cells"]:
        entry["index"] = count_to_index.get(entry.get("execution_count"))
    return data


def _output_path(args: argparse.Namespace, fmt: str) -> Path:
    if args.output is not None:
        return args.output
    suffix = {"json": ".json", "html": ".html", "md": ".md"}[fmt]
    return args.notebook.with_suffix(f".porter{suffix}")


def _format_of(output: Path | None, explicit: str | None, default: str) -> str:
    if explicit:
        return explicit
    if output is not None:
        suffix = output.suffix.lower().lstrip(".")
        return (
            {"htm": "html", "markdown": "md"}.get(suffix, suffix)
            if suffix in ("json", "html", "htm", "md", "markdown")
            else default
        )
    return default


def summary_line(summary: dict[str, int]) -> str:
    return (
        f"{summary['cells']} cells, {summary['calls']} array calls, "
        f"{summary['non_standard']} outside the standard, {summary['device_findings']} device findings, "
        f"replays {summary['replays_ok']} ok / {summary['replays_failed']} failed, "
        f"{summary['mismatches']} mismatches"
    )


def cmd_run(args: argparse.Namespace) -> int:
    from porter_ext.report import Report, validate, write_report

    fmt = _format_of(args.output, args.format, "json")
    progress = sys.stderr.isatty()
    data = execute_notebook(
        args.notebook, timeout=args.timeout, progress=progress, backends=args.backends
    )
    validate(data)
    report = Report.from_dict(data)
    out = write_report(report, _output_path(args, fmt), fmt)
    summary = data["summary"]
    print(f"porter: {args.notebook.name}: {summary_line(summary)}")
    print(f"porter: report written to {out}")
    matched = [k for k in args.fail_on if any(summary[c] for c in _FAIL_COUNTERS[k])]
    if matched:
        print(f"porter: failing on {', '.join(matched)}", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from porter_ext.report import ReportError, load_report, write_report

    fmt = _format_of(args.output, args.format, "html")
    if fmt not in ("html", "md"):
        raise CliError(f"porter report writes html or md, not {fmt}")
    try:
        report = load_report(args.report)
    except OSError as exc:
        raise CliError(f"cannot read {args.report}: {exc.strerror or exc}") from None
    except ReportError as exc:
        raise CliError(str(exc)) from None
    output = args.output or args.report.with_suffix(".html" if fmt == "html" else ".md")
    out = write_report(report, output, fmt)
    print(f"porter: report written to {out}")
    return 0


def cmd_backends(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from porter_ext.backends import list_backends

    infos = list_backends()
    if args.json:
        print(json.dumps([asdict(b) for b in infos], indent=1))
        return 0
    width = max((len(b.spec) for b in infos), default=4)
    for b in infos:
        if b.available:
            devices = ", ".join(b.devices)
            print(f"{b.spec:<{width}}  {b.version or '':<10}  {devices}")
        else:
            print(f"{b.spec:<{width}}  unavailable: {b.reason}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # usage errors exit 2
    handlers = {"run": cmd_run, "report": cmd_report, "backends": cmd_backends}
    try:
        return handlers[args.command](args)
    except CliError as exc:
        print(f"porter: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("porter: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
