"""Columns as editors count them: characters (code points) of the line.

Python's ``ast`` gives ``col_offset`` and ``end_col_offset`` as UTF-8 byte offsets into
the line, so a non-ASCII character earlier on the line (``"température 🔥"``) moves
every later column. porter reports characters: a position is converted once, where it
is made (the recorder's site tuples when the cell is rewritten, lint's findings), with
`Columns` over the source the tree was parsed from. ASCII lines, the common case, cost a
check; a source that is ASCII throughout costs one ``str.isascii`` call.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

__all__ = ["Columns", "char_col", "in_characters"]

#: where Python numbers lines (unlike ``str.splitlines``, which also splits at \f, \x85...)
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def char_col(line: str, byte_col: int) -> int:
    """The character offset in ``line`` of the UTF-8 byte offset ``byte_col``."""
    if byte_col <= 0 or line.isascii():
        return byte_col
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


class Columns:
    """Byte columns of one source's lines → character columns (``columns(line, col)``,
    ``line`` 1-based as ``ast`` numbers it). On an ASCII source it returns ``col``."""

    __slots__ = ("_encoded", "_lines")

    def __init__(self, source: str | None = None, *, lines: Sequence[str] | None = None):
        if lines is None:
            text = source or ""
            lines = None if text.isascii() else LINE_BREAK.split(text)
        self._lines = lines
        #: line number → the line's UTF-8 bytes (None: the line is ASCII)
        self._encoded: dict[int, bytes | None] = {}

    def __call__(self, line: int | None, byte_col: int | None) -> int:
        lines = self._lines
        if lines is None or line is None or not byte_col or byte_col < 0:
            return byte_col or 0
        try:
            encoded = self._encoded[line]
        except KeyError:
            text = lines[line - 1] if 1 <= line <= len(lines) else ""
            encoded = self._encoded[line] = None if text.isascii() else text.encode("utf-8")
        if encoded is None:
            return byte_col
        return len(encoded[:byte_col].decode("utf-8", errors="ignore"))

    def span(self, node: object) -> tuple[int, int, int, int]:
        """``(line, col, end_line, end_col)`` of an ``ast`` node, columns in characters."""
        line = node.lineno  # type: ignore[attr-defined]
        col = node.col_offset  # type: ignore[attr-defined]
        end_line = getattr(node, "end_lineno", None) or line
        end_col = getattr(node, "end_col_offset", None)
        end_col = col if end_col is None else end_col
        return line, self(line, col), end_line, self(end_line, end_col)


class _Span(Protocol):
    line: int
    col: int
    end_line: int
    end_col: int


S = TypeVar("S", bound=_Span)


def in_characters(spans: Iterable[S], lines: Sequence[str]) -> list[S]:
    """Frozen dataclasses with ``line``/``col``/``end_line``/``end_col`` in UTF-8 bytes
    (what ``ast`` gives: lint's ``checks.Site``) with their columns in characters, read
    against ``lines`` (the source's lines, as ``ast`` numbers them). Spans on ASCII lines
    are returned as they are."""
    columns = Columns(lines=lines)
    out = []
    for s in spans:
        col, end_col = columns(s.line, s.col), columns(s.end_line, s.end_col)
        if (col, end_col) != (s.col, s.end_col):
            s = dataclasses.replace(s, col=col, end_col=end_col)  # type: ignore[type-var]
        out.append(s)
    return out
