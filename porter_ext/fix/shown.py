"""What a notebook cell showed when it ran (its printed text, results and error), made
comparable between two runs, and the differences between them (``porter fix``'s fresh
run, `porter_ext.fix.fresh_run`).

Printed text is the cell's standard output and the ``text/plain`` form of each result and
display, porter's own displays left out; standard error is not compared (warnings name
the frame they came from, which porter's recording adds). `normalised` drops what
differs from one run to the next by nature, and nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from porter_ext.model.calls import ErrorInfo

__all__ = ["Difference", "Shown", "differences", "normalised", "quoted", "shown"]

# --- what a cell showed ------------------------------------------------------------------

#: ``<object at 0x7f3a...>``, ``id 0x...``: where the object happened to be in memory
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
#: a tensor's autograd node in its repr (``grad_fn=<SoftmaxBackward0>``): it names the
#: operation that made the tensor, which a rewrite changes by design (``xp.exp(...) /
#: xp.sum(...)`` ends in ``DivBackward0``), not its values
_GRAD_FN = re.compile(r"grad_fn=<\w+>")
#: ``%time``'s two lines and ``%timeit``'s one
_TIME_LINES = re.compile(
    r"^(?:CPU times: .*|Wall time: .*|.* per loop \(mean ± std\. dev\. of .*\))$", re.M
)
#: a duration as people print one: ``0.53 s``, ``12ms``, ``3.1 µs``, ``2 seconds``
_DURATION = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e-?\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds|min)\b"
)


def normalised(text: str) -> str:
    """``text`` without what differs from one run to the next by nature: memory addresses
    (``0x7f3a...`` → ``0x…``), ``%time``/``%timeit`` lines (→ ``<timing>``) and durations
    (a number with a unit of time → ``<duration>``), a tensor's autograd node
    (``grad_fn=<SoftmaxBackward0>`` → ``grad_fn=<…>``: the rewrite's own operations make
    it); trailing blanks dropped."""
    text = _TIME_LINES.sub("<timing>", text)
    text = _ADDRESS.sub("0x…", text)
    text = _DURATION.sub("<duration>", text)
    text = _GRAD_FN.sub("grad_fn=<…>", text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


@dataclass(frozen=True)
class Shown:
    """What one cell showed: its printed text (`normalised`) and its error, if any
    (``Type: message``)."""

    printed: str
    error: str | None = None


def _porters(output: Mapping) -> bool:
    data = output.get("data", {})
    return any(str(kind).startswith("application/vnd.porter") for kind in data)


def shown(outputs: Iterable[Mapping], error: ErrorInfo | None = None) -> Shown:
    """A cell's `Shown` from its nbformat outputs (standard output, results and displays
    as text, the error output); ``error``: what the runner knows it ended with where no
    output says so (a cell stopped at its time limit)."""
    printed, raised = [], None
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream" and output.get("name") == "stdout":
            printed.append(str(output.get("text", "")))
        elif kind in ("execute_result", "display_data") and not _porters(output):
            printed.append(str(output.get("data", {}).get("text/plain", "")) + "\n")
        elif kind == "error":
            raised = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    if raised is None and error is not None:
        raised = f"{error.type}: {error.message}"
    return Shown(normalised("".join(printed)), normalised(raised) if raised else None)


# --- differences -------------------------------------------------------------------------


def quoted(text: str | None, limit: int = 80) -> str:
    """``text`` on one line between backticks, cut at ``limit`` characters."""
    if not text:
        return "nothing"
    one = " ".join(text.split())
    return f"`{one[:limit]}{'…' if len(one) > limit else ''}`"


@dataclass(frozen=True)
class Difference:
    """One cell whose fresh run showed something else than its original run."""

    index: int
    original: Shown
    ported: Shown
    #: what the second run is called in words (the original notebook run again: "again")
    now: str = "ported"

    @property
    def raised(self) -> bool:
        """The ported cell raised where the original ran, or raised something else."""
        return self.ported.error is not None and self.ported.error != self.original.error

    def line(self) -> str:
        """The difference in words: ``cell 4: printed `[1. 2.]` originally, `[1 2]` ported``."""
        a, b, now = self.original, self.ported, self.now
        if b.error != a.error:
            if a.error is None:
                what = f"raised {quoted(b.error)} {now}, where the original ran"
            elif b.error is None:
                what = f"raised {quoted(a.error)} originally, ran {now}"
            else:
                what = f"raised {quoted(a.error)} originally, {quoted(b.error)} {now}"
        else:
            what = f"printed {quoted(a.printed)} originally, {quoted(b.printed)} {now}"
        return f"cell {self.index}: {what}"


def differences(
    original: Mapping[int, Shown], ported: Mapping[int, Shown], now: str = "ported"
) -> list[Difference]:
    """The cells (in notebook order) whose fresh run differs from their original run;
    a cell the original run did not compare (`compared`) is left out."""
    return [
        Difference(index, shown_then, ported.get(index, Shown("", "NotRun: not run")), now)
        for index, shown_then in sorted(original.items())
        if ported.get(index) != shown_then
    ]
