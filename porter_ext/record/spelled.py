"""A recorded call's suggestion written with the person's own expressions.

The recorder classifies a call from its values (which entry of the table applies, which
arguments it passed); a suggestion rendered from values would write the run's numbers
(``xp.ones((6, 6))`` for ``torch.ones(n, n)``). When the records are made, each call's
source (its site's span in the cell's text) fills the verdict's template instead
(`porter_ext.spec.rewrites.suggestion_from_source`); where the source does not fill it,
the suggestion keeps the values.
"""

from __future__ import annotations

import ast
import linecache

from porter_ext.record.classify import Verdict
from porter_ext.record.resolve import Callee
from porter_ext.record.runners import FILENAMES
from porter_ext.record.sites import Place
from porter_ext.spec.indexing import usage_from_source
from porter_ext.spec.rewrites import SourceCall, suggestion_from_source


def call_text(place: Place) -> str | None:
    """The source of a call's span (columns in characters), from the cell's registered
    text."""
    filename = FILENAMES.get(place.cell)
    if filename is None or place.end_line is None:
        return None
    lines = linecache.getlines(filename)
    return span_text(lines, place.line, place.col, place.end_line, place.end_col)


def span_text(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> str | None:
    """The text of ``lines`` (1-based lines, columns in characters) from ``(line, col)``
    to ``(end_line, end_col)``, or None outside them."""
    if not 0 < line <= end_line <= len(lines):
        return None
    if line == end_line:
        return lines[line - 1][col:end_col]
    middle = [text if text.endswith("\n") else text + "\n" for text in lines[line : end_line - 1]]
    first = lines[line - 1][col:]
    return "".join(
        [first if first.endswith("\n") else first + "\n", *middle, lines[end_line - 1][:end_col]]
    )


def source_call(text: str, kind: str) -> SourceCall | None:
    """The call as written (a method's receiver, the arguments' source), or None for
    anything but a call."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if any(k.arg is None for k in node.keywords):
        return None
    source = text.strip()

    def segment(part: ast.AST) -> str:
        return ast.get_source_segment(source, part) or ""

    args = tuple(segment(a) for a in node.args)
    kwargs = {k.arg: segment(k.value) for k in node.keywords}
    func = node.func
    if kind == "method" and isinstance(func, ast.Attribute):
        return SourceCall("method", segment(func.value), args, kwargs)
    lib = segment(func.value) if isinstance(func, ast.Attribute) else None
    return SourceCall("function", None, args, kwargs, lib=lib)


def spelled_suggestion(place: Place, callee: Callee, verdict: Verdict) -> str | None:
    """The verdict's suggestion over the call's source, else as rendered from values."""
    if verdict.template is None or verdict.suggestion is None:
        return verdict.suggestion
    text = call_text(place)
    usage = usage_from_source(verdict.template, text) if text else None
    if usage is not None:  # an index or len(): no table entry
        return usage
    call = source_call(text, callee.kind) if text else None
    if call is None:
        return verdict.suggestion
    return suggestion_from_source(verdict.template, call, verdict.entry) or verdict.suggestion
