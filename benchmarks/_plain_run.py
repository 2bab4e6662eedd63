"""A notebook run as a person runs it without porter, and what it printed.

The benchmark asks two things of a plain run: how long it takes (porter's runs are
measured against it) and what each code cell printed (a ported notebook must print what
the original prints). Both come from one nbclient execution in a plain ``python3``
kernel, in the notebook's own folder, going on past errors as porter run does.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

#: what differs between two runs of the same code and says nothing about porting
_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0x…"),  # object addresses in reprs
    (re.compile(r"/tmp/ipykernel_\d+/\d+\.py"), "<cell>"),  # where a warning was raised
    # a warning's line number and the source line it quotes: a rewrite changes both (its
    # category and message are still compared)
    (
        re.compile(r"^(<cell>):\d+:( \w*Warning: (?:.*\n)*?)  \S.*$", re.MULTILINE),
        r"\1:N:\2  <the line>",
    ),
    # %timeit's report: the numbers are timings
    (re.compile(r"^.*(?:per loop|loops? each).*$", re.MULTILINE), "<timeit>"),
    # a tensor's autograd node names the operation that made it, which a rewrite changes
    # (porter's fresh run leaves it out too: porter_ext/fix/shown.py)
    (re.compile(r"grad_fn=<\w+>"), "grad_fn=<…>"),
    (re.compile(r"^(?:CPU times|Wall time):.*$", re.MULTILINE), "<time>"),
]


@dataclass
class PlainRun:
    seconds: float
    #: per code cell, in order: its text outputs (streams, plain-text results, errors)
    printed: list[str] = field(default_factory=list)
    failure: str | None = None  # the run itself could not finish


def _text(outputs: list[dict]) -> str:
    parts = []
    for o in outputs:
        kind = o.get("output_type")
        if kind == "stream":
            parts.append(o.get("text", ""))
        elif kind == "error":
            parts.append(f"<{o.get('ename')}: {o.get('evalue')}>")
        elif kind in ("execute_result", "display_data"):
            parts.append(o.get("data", {}).get("text/plain", ""))
    text = "".join(parts).strip()
    for pattern, stand_in in _VOLATILE:
        text = pattern.sub(stand_in, text)
    return text


def run_plain(notebook: Path, cwd: Path, timeout: int = 600) -> PlainRun:
    """Execute ``notebook`` in a plain ``python3`` kernel with ``cwd`` as its folder."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=timeout,
        allow_errors=True,
        resources={"metadata": {"path": str(cwd)}},
    )
    start = time.perf_counter()
    failure = None
    try:
        client.execute()
    except Exception as exc:  # a cell past the timeout, a kernel that died
        failure = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"
    seconds = time.perf_counter() - start
    printed = [_text(c.get("outputs", [])) for c in nb.cells if c.cell_type == "code"]
    return PlainRun(seconds, printed, failure)


def differing_cells(original: PlainRun, again: PlainRun, ported: PlainRun) -> list[int]:
    """Code cells (0-based among code cells) whose ported output differs from the
    original's, leaving out cells that print differently in two plain runs of the
    original itself (unseeded draws, timings): porting cannot be judged there."""
    steady = [a == b for a, b in zip(original.printed, again.printed, strict=False)]
    return [
        i
        for i, (a, b) in enumerate(zip(original.printed, ported.printed, strict=False))
        if i < len(steady) and steady[i] and a != b
    ] + list(range(len(ported.printed), len(original.printed)))


def unsteady_cells(original: PlainRun, again: PlainRun) -> int:
    return sum(a != b for a, b in zip(original.printed, again.printed, strict=False))
