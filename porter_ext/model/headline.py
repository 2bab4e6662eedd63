"""A cell's headline: its counts and the one line that says how portable it is.

Counted once, when a `CellEntry` is made (`porter_ext.model.cells.headline_of`, beside
the rules it counts by), and carried in the report JSON (CONTRACT.md, ``headline``), so
that the text view, the HTML, the widget, the report summary and the JupyterLab
extension show the same words: none of them counts on its own. This module holds the
words (the JSON form is `porter_ext.report.codec`'s); it knows nothing of cells, so the
model can import it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Headline", "HeadlineCounts"]


@dataclass(frozen=True)
class HeadlineCounts:
    """What the headline says, as numbers and names (CONTRACT.md, ``headline.counts``).

    `calls` sums `count` over the original run's calls; `findings` counts the call sites
    that are findings; `replays` and `replays_ok` count target replays only (the control
    and the reference check the original itself); `failed_on` names the target backends
    whose replay raised or timed out, `differs_on` those where an output differs in value,
    dtype or shape; `error` is the type of what the original run raised, or None.
    """

    calls: int = 0
    findings: int = 0
    device_findings: int = 0
    replays: int = 0
    replays_ok: int = 0
    failed_on: tuple[str, ...] = ()
    differs_on: tuple[str, ...] = ()
    error: str | None = None

    def text(self) -> str:
        """The one line every view shows, in these words."""
        plural = "s" * (self.calls != 1)
        if not self.calls:
            parts = ["no array calls recorded"]
        elif not self.findings:
            parts = [f"{self.calls} array call{plural}, all inside the standard"]
        else:
            parts = [
                f"{self.findings} finding{'s' * (self.findings != 1)} in {self.calls} "
                f"array call{plural}"
            ]
        if self.device_findings:
            parts.append(f"{self.device_findings} device finding(s)")
        if self.replays:
            parts.append(f"{self.replays_ok}/{self.replays} replays ok")
        if self.failed_on:
            parts.append(f"failed on {', '.join(self.failed_on)}")
        if self.differs_on:
            parts.append(f"differs on {', '.join(self.differs_on)}")
        if self.error is not None:
            parts.append(f"the cell raised {self.error}")
        return "porter: " + "; ".join(parts)


@dataclass(frozen=True)
class Headline:
    """A cell's counts and the words made of them, as the report JSON carries them."""

    counts: HeadlineCounts
    text: str

    @classmethod
    def of(cls, counts: HeadlineCounts) -> Headline:
        return cls(counts, counts.text())
