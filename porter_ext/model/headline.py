"""A cell's headline: its counts and the one line that says how portable it is.

Counted once, when a `CellEntry` is made (`porter_ext.model.cells.headline_of`), over
exactly the cell's diagnostics rows (`porter_ext.model.diagnostics`), and carried in the
report JSON (CONTRACT.md, ``headline``), so that the text view, the HTML, the report
summary, the Porting panel and porter's renderer show the same counts and words: none of
them counts on its own. This module holds the words; it knows nothing of cells, so the
model can import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from porter_ext.model.diagnostics import KIND_WORDS

__all__ = ["SUM_FORMAT", "Headline", "HeadlineCounts", "sum_text"]

#: how a view that adds up several cells' counts (the Porting panel's head: each cell's
#: entry comes on its own) says the sums of ``findings`` and ``notes``
SUM_FORMAT = "findings: {findings} · noted: {notes}"


def sum_text(headlines: list[Headline]) -> str:
    """What a view that adds up these cells' counts says (`SUM_FORMAT`)."""
    findings = sum(h.counts.findings for h in headlines)
    return SUM_FORMAT.format(findings=findings, notes=sum(h.counts.notes for h in headlines))


def _counted(n: int, kind: str) -> str:
    one, many = KIND_WORDS.get(kind, (kind.replace("_", " "), kind.replace("_", " ")))
    return f"{n} {one if n == 1 else many}"


@dataclass(frozen=True)
class HeadlineCounts:
    """What the headline says, as numbers and names (CONTRACT.md, ``headline.counts``).

    `calls` sums `count` over the original run's calls; `findings` counts the cell's
    diagnostics rows that are findings (severity error or warning) and `notes` those
    that are information, `kinds` both by row kind; `device_findings` the rows of kind
    ``device``; `replays` and `replays_ok` count target replays only (the control and
    the reference check the original itself); `failed_on` names the target backends
    whose replay raised or timed out, `differs_on` those where an output's verdict is
    ``mismatch``, `dtype_changed_on` those where one only changed dtype (``jax:cpu
    (float64 → float32)``); `error` is the type of what the original run raised, or None.
    """

    calls: int = 0
    findings: int = 0
    device_findings: int = 0
    replays: int = 0
    replays_ok: int = 0
    failed_on: tuple[str, ...] = ()
    differs_on: tuple[str, ...] = ()
    error: str | None = None
    notes: int = 0
    #: the finding rows by kind, and the rows noted as information by kind
    kinds: dict[str, int] = field(default_factory=dict)
    noted: dict[str, int] = field(default_factory=dict)
    dtype_changed_on: tuple[str, ...] = ()

    def text(self) -> str:
        """The one line every view shows, in these words."""
        plural = "s" * (self.calls != 1)
        if not self.findings:
            parts = [
                f"{self.calls} array call{plural}, all inside the standard"
                if self.calls
                else "no array calls recorded"
            ]
        else:
            calls = f" in {self.calls} array call{plural}" if self.calls else ""
            which = ", ".join(_counted(n, k) for k, n in self.kinds.items())
            parts = [
                f"{self.findings} finding{'s' * (self.findings != 1)}{calls}"
                + (f" ({which})" if which else "")
            ]
        # a dtype change is said with its backend and dtypes below
        noted = {k: n for k, n in self.noted.items() if k != "dtype_changed"}
        if noted:
            parts.append("noted: " + ", ".join(_counted(n, k) for k, n in noted.items()))
        if self.replays:
            parts.append(f"{self.replays_ok}/{self.replays} replays ok")
        if self.failed_on:
            parts.append(f"failed on {', '.join(self.failed_on)}")
        if self.differs_on:
            parts.append(f"differs on {', '.join(self.differs_on)}")
        if self.dtype_changed_on:
            parts.append(f"dtype changed on {', '.join(self.dtype_changed_on)}")
        if self.error is not None:
            parts.append(f"the cell raised {self.error}")
        return "porter: " + "; ".join(parts)


@dataclass(frozen=True)
class Headline:
    """A cell's counts and the words made of them, as the report JSON carries them."""

    counts: HeadlineCounts
    text: str

    @property
    def sum_format(self) -> str:
        """`SUM_FORMAT`: the words a view puts around the sums of several cells' counts."""
        return SUM_FORMAT

    @classmethod
    def of(cls, counts: HeadlineCounts) -> Headline:
        return cls(counts, counts.text())
