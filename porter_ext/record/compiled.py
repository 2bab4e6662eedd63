"""Compiled rewrites of cells, kept for the next run of the same source.

Rewriting a cell and compiling the rewrite costs a few milliseconds on a large cell
(the rewrite is about three times the plain code); people run the same cell again and
again. A cell's rewrite depends on its source and its compiler flags; what differs from
run to run, the cell's label in the site tuples and the file name of its code, is
patched into the compiled code objects (``CodeType.replace``), which takes microseconds.
Code objects hold no object of the person's, so keeping a few of them costs nothing.
"""

from __future__ import annotations

import ast
import marshal
import types
from collections import OrderedDict
from dataclasses import dataclass

from porter_ext.record.transformer import CallSiteTransformer

_LIMIT = 64


@dataclass(frozen=True)
class CompiledCell:
    """The code of a rewritten cell: its statements, and its last expression (or None)."""

    code: types.CodeType
    last: types.CodeType | None
    cell: int | str
    filename: str
    sites: frozenset


_cache: OrderedDict[tuple, CompiledCell] = OrderedDict()


def _compile(tree: ast.Module, last: ast.Expr | None, filename: str, flags: int):
    code = compile(ast.Module(tree.body, []), filename, "exec", flags=flags, dont_inherit=True)
    last_code = (
        compile(ast.Expression(last.value), filename, "eval", flags=flags, dont_inherit=True)
        if last is not None
        else None
    )
    return code, last_code


def _relabel(code: types.CodeType, sites: frozenset, cell: int | str | None, filename: str):
    consts = tuple(
        _relabel(c, sites, cell, filename)
        if isinstance(c, types.CodeType)
        else ((cell, *c[1:]) if type(c) is tuple and c in sites else c)
        for c in code.co_consts
    )
    return code.replace(co_consts=consts, co_filename=filename)


def cached(key: tuple, cell: int | str, filename: str) -> tuple | None:
    """(code, last code) of a cell compiled before under ``key``, relabelled for this run."""
    hit = _cache.get(key)
    if hit is None:
        return None
    _cache.move_to_end(key)
    if hit.cell == cell and hit.filename == filename:
        return hit.code, hit.last
    code = _relabel(hit.code, hit.sites, cell, filename)
    last = _relabel(hit.last, hit.sites, cell, filename) if hit.last is not None else None
    return code, last


def rewrite_and_compile(
    key: tuple | None,
    tree: ast.Module,
    cell: int | str,
    filename: str,
    flags: int,
    split_last: bool,
    transformers: list,
    range_is_builtin: bool = False,
    source: str | None = None,
) -> tuple[types.CodeType, types.CodeType | None]:
    """Rewrite ``tree`` (parsed from ``source``: its sites' columns count characters) for
    recording (then apply ``transformers``), compile it, and keep it under ``key`` (None:
    not kept)."""
    rewriter = CallSiteTransformer(cell, range_is_builtin=range_is_builtin, source=source)
    tree = rewriter.visit(tree)
    for transformer in transformers:
        tree = transformer(tree)
    last = None
    if split_last and tree.body and isinstance(tree.body[-1], ast.Expr):
        tree.body, last = tree.body[:-1], tree.body[-1]
    code, last_code = _compile(tree, last, filename, flags)
    if key is not None:
        _cache[key] = CompiledCell(code, last_code, cell, filename, frozenset(rewriter.site_values))
        while len(_cache) > _LIMIT:
            _cache.popitem(last=False)
    return code, last_code


def compile_plain(tree: ast.Module, filename: str, flags: int, split_last: bool):
    """The cell compiled as it is (when its rewrite failed)."""
    last = None
    if split_last and tree.body and isinstance(tree.body[-1], ast.Expr):
        tree.body, last = tree.body[:-1], tree.body[-1]
    return _compile(tree, last, filename, flags)


def exported(source: str, flags: int, cell: int | str) -> bytes | None:
    """The rewrite of ``source`` this process compiled last under ``flags``, labelled
    ``cell``, for a replay's worker (`imported`): marshalled code objects and the key they
    were compiled under; None when none is kept."""
    for key in reversed(_cache):
        if key[0] == source and key[1] == flags:
            hit = _cache[key]
            code, last = cached(key, cell, hit.filename)
            return marshal.dumps((key, code, last))
    return None


def imported(data: bytes, key: tuple, filename: str) -> tuple | None:
    """(code, last code) of an `exported` rewrite, under ``filename``, if it was compiled
    under ``key`` (the source, flags, and what decides the rewrite where it runs now),
    else None."""
    sent, code, last = marshal.loads(data)
    if tuple(sent) != key:
        return None
    code = _relabel(code, frozenset(), None, filename)
    return code, _relabel(last, frozenset(), None, filename) if last is not None else None


def clear() -> None:
    _cache.clear()
