"""The statements of a cell's ``%time``/``%timeit`` lines, opened for the codemod: the
recorder records their calls at their line and column (`porter_ext.record.magic_code`),
so the fix stage rewrites them there, and the line stays the magic it was.

Each such line becomes ``if 1:`` padded to the length of the magic's name and options,
then its statement, so that every call keeps the column the run recorded it at; a
marker comment finds the line again after the codemod, and the magic's own text is put
back in front of the rewritten statement.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from porter_ext.record.magic_code import code_magic_line

if TYPE_CHECKING:
    from porter_ext.fix.rewrite import CellRewrite
    from porter_ext.model.entries import RewriteSiteEntry

__all__ = ["close_code_magics", "magic_sites", "open_code_magics"]

_OPEN = "if 1:"
_MARK = "  # porter: IPython magic line {}"
_TOO_LONG = (
    "on a %time/%timeit line: its rewrite is more than the one line the magic's argument "
    "holds; write the statement on a line of its own to port it"
)


def open_code_magics(source: str, keep: Collection[int] = ()) -> tuple[str, dict[str, str]]:
    """The cell with each ``%time``/``%timeit`` line (but those whose 1-based numbers are
    in ``keep``) opened as Python at its own columns, and each marker → the magic's text."""
    lines = source.split("\n")
    opened = {}
    for number, line in enumerate(lines, start=1):
        body = line.lstrip()
        split = code_magic_line(body)
        if split is None or number in keep:
            continue
        prefix, statement = split
        if len(prefix) <= len(_OPEN) or not _one_line(statement):
            continue
        mark = _MARK.format(number)
        padding = " " * (len(prefix) - len(_OPEN))
        lines[number - 1] = line[: len(line) - len(body)] + _OPEN + padding + statement + mark
        opened[mark] = prefix
    return "\n".join(lines), opened


def close_code_magics(source: str, opened: Mapping[str, str]) -> tuple[str, list[int]]:
    """``source`` (a rewrite of an opened cell) with its opened lines made the magics
    again, each in front of its statement as rewritten; and the numbers of the magic
    lines (as `open_code_magics` counted them) whose rewrite no longer fits on one line."""
    out, closed = [], set()
    for line in source.split("\n"):
        mark = next((m for m in opened if line.endswith(m)), None)
        body = line.lstrip()
        if mark is not None and body.startswith(_OPEN):
            statement = body[len(_OPEN) :].lstrip(" ").removesuffix(mark)
            line = line[: len(line) - len(body)] + opened[mark] + statement
            closed.add(mark)
        out.append(line)
    lost = [int(m.rpartition(" ")[2]) for m in opened if m not in closed]
    return "\n".join(out), lost


def magic_sites(result: CellRewrite, lines: Collection[int]) -> list[RewriteSiteEntry]:
    """The sites of ``result`` (a rewrite of the opened cell) on the magic ``lines`` whose
    rewrite did not fit back on the line, each refused with that reason."""
    return [
        dataclasses.replace(site, replacement=None, reason=_TOO_LONG)
        for site in result.sites
        if site.line in lines
    ]


def _one_line(statement: str) -> bool:
    """Whether the magic's statement is simple statements on one line (what an ``if 1:``
    on the same line can hold)."""
    if not statement.strip() or "\n" in statement:
        return False
    try:
        ast.parse(f"{_OPEN} {statement}")
    except SyntaxError:
        return False
    return True
