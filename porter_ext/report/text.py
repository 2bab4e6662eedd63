"""Text that displays as something else, shown for what it is.

Unicode bidi controls (U+202A–U+202E, U+2066–U+2069) reorder how a line displays, so a
cell can read one way and run another ("Trojan Source"); zero-width and other format
characters hide text altogether. Every view of a report (HTML, Markdown, the widget)
passes person text through `visible`, which writes such a character as its escape
(``\\u202e``), and lists them with `cell_notes`, so the reviewer sees the finding too.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from porter_ext.model.cells import CellEntry

__all__ = [
    "BIDI_FINDING",
    "FORMAT_FINDING",
    "cell_notes",
    "invisible_characters",
    "source_findings",
    "visible",
]

BIDI_FINDING = "invisible bidi control character in source"
FORMAT_FINDING = "invisible format character in source"

#: the bidi controls: embeddings, overrides, isolates, marks
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
#: every format character (category Cf, Unicode 15.1) plus the line and paragraph
#: separators, which display as nothing (or as a line break Python does not count)
_INVISIBLE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]"
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """`text` with every invisible or reordering character written as its escape."""
    return _INVISIBLE.sub(_escape, text) if _INVISIBLE.search(text) else text


def invisible_characters(text: str) -> list[tuple[int, str]]:
    """``(line, character)`` for each invisible or reordering character, 1-based lines
    counted as Python counts them."""
    return [
        (number, match.group())
        for number, line in enumerate(_LINE_BREAK.split(text), start=1)
        for match in _INVISIBLE.finditer(line)
    ]


def _name(char: str) -> str:
    return f"U+{ord(char):04X} {unicodedata.name(char, 'FORMAT CHARACTER')}"


def source_findings(source: str) -> list[tuple[int, str]]:
    """One finding per source line that holds invisible characters: ``(line, text)``."""
    by_line: dict[int, list[str]] = {}
    for line, char in invisible_characters(source):
        by_line.setdefault(line, []).append(char)
    findings = []
    for line, chars in by_line.items():
        kind = BIDI_FINDING if any(c in _BIDI for c in chars) else FORMAT_FINDING
        shown = ", ".join(_name(c) for c in dict.fromkeys(chars))
        findings.append((line, f"{kind} (line {line}: {shown})"))
    return findings


def cell_notes(entry: CellEntry) -> list[tuple[int | None, str]]:
    """What a view shows as notes on a cell: the invisible characters of its source, then
    the entry's own notes (e.g. what a headless run ignored), each with its line or None."""
    notes: list[tuple[int | None, str]] = list(source_findings(entry.source))
    shown = {text for _, text in notes}
    notes += [(None, n) for n in entry.notes if n not in shown]
    return notes
