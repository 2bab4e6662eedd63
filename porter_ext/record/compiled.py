"""Compiled rewrites of cells, kept for the next run of the same source.

Rewriting a cell and compiling the rewrite costs a few milliseconds on a large cell
(the rewrite is about three times the plain code); people run the same cell again and
again. A cell's rewrite depends on its source and its compiler flags; what differs from
run to run, the cell's label in its sites and the file name of its code, is patched into
the compiled code objects (``CodeType.replace``), which takes microseconds. Code objects
hold no object of the person's, so keeping a few of them costs nothing.

The compiler keeps only plain tuples as constants: the sites the rewrite wrote as tuples
are put back as the named sites they are (`porter_ext.record.sites`) once compiled, and
made plain again (with their kinds beside them) to be marshalled for a worker.
"""

from __future__ import annotations

import ast
import marshal
import types
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from porter_ext.record.sites import SITE_TYPES, Site
from porter_ext.record.transformer import CallSiteTransformer

_LIMIT = 64


@dataclass(frozen=True)
class CompiledCell:
    """The code of a rewritten cell: its statements, and its last expression (or None)."""

    code: types.CodeType
    last: types.CodeType | None
    cell: int | str
    filename: str


class RewriteKey(NamedTuple):
    """What decides a cell's rewrite and its compiled code, and so the key it is kept
    under: the source, the compiler flags, whether the last expression is compiled apart
    (the cell's value: no trailing semicolon) and whether ``range`` is Python's own."""

    source: str
    flags: int
    split_last: bool
    range_is_builtin: bool


_cache: OrderedDict[RewriteKey, CompiledCell] = OrderedDict()


def _compile(tree: ast.Module, last: ast.Expr | None, filename: str, flags: int):
    code = compile(ast.Module(tree.body, []), filename, "exec", flags=flags, dont_inherit=True)
    last_code = (
        compile(ast.Expression(last.value), filename, "eval", flags=flags, dont_inherit=True)
        if last is not None
        else None
    )
    return code, last_code


def _mapped(code: types.CodeType, change: Callable[[Any], Any], filename: str | None = None):
    """``code`` (and the code nested in it) with ``change`` applied to each constant that
    is not code, and ``filename`` (None: as it is)."""
    consts = tuple(
        _mapped(c, change, filename) if isinstance(c, types.CodeType) else change(c)
        for c in code.co_consts
    )
    return code.replace(co_consts=consts, co_filename=filename or code.co_filename)


def _named(
    code: types.CodeType, sites: Mapping[tuple, Site], filename: str | None = None
) -> types.CodeType:
    """``code`` with each site written as a plain tuple put back as its named site."""
    return _mapped(code, lambda c: sites.get(c, c) if type(c) is tuple else c, filename)


def _relabel(code: types.CodeType, cell: int | str, filename: str) -> types.CodeType:
    """``code`` under ``filename``, its sites labelled ``cell``."""
    return _mapped(code, lambda c: c._replace(cell=cell) if type(c) in SITE_TYPES else c, filename)


def _plain(code: types.CodeType, kinds: dict[tuple, int]) -> types.CodeType:
    """``code`` with its sites as plain tuples (what marshal writes), each one's kind (its
    index in `SITE_TYPES`) put in ``kinds``."""

    def plain(c: Any) -> Any:
        if type(c) not in SITE_TYPES:
            return c
        kinds[tuple(c)] = SITE_TYPES.index(type(c))
        return tuple(c)

    return _mapped(code, plain)


def cached(key: RewriteKey, cell: int | str, filename: str) -> tuple | None:
    """(code, last code) of a cell compiled before under ``key``, relabelled for this run."""
    hit = _cache.get(key)
    if hit is None:
        return None
    _cache.move_to_end(key)
    if hit.cell == cell and hit.filename == filename:
        return hit.code, hit.last
    code = _relabel(hit.code, cell, filename)
    last = _relabel(hit.last, cell, filename) if hit.last is not None else None
    return code, last


def rewrite_and_compile(
    rewrite: RewriteKey,
    tree: ast.Module,
    cell: int | str,
    filename: str,
    transformers: Sequence[Callable[[ast.Module], ast.Module]] = (),
    keep: bool = True,
) -> tuple[types.CodeType, types.CodeType | None]:
    """Rewrite ``tree`` (parsed from ``rewrite.source``: its sites' columns count
    characters) for recording (then apply ``transformers``), compile it, and keep it
    under ``rewrite`` where ``keep``."""
    rewriter = CallSiteTransformer(
        cell, range_is_builtin=rewrite.range_is_builtin, source=rewrite.source
    )
    tree = rewriter.visit(tree)
    for transformer in transformers:
        tree = transformer(tree)
    last = None
    if rewrite.split_last and tree.body and isinstance(tree.body[-1], ast.Expr):
        tree.body, last = tree.body[:-1], tree.body[-1]
    code, last_code = _compile(tree, last, filename, rewrite.flags)
    sites = {tuple(site): site for site in rewriter.site_values}
    code = _named(code, sites)
    last_code = _named(last_code, sites) if last_code is not None else None
    if keep:
        _cache[rewrite] = CompiledCell(code, last_code, cell, filename)
        while len(_cache) > _LIMIT:
            _cache.popitem(last=False)
    return code, last_code


def rewrite_module(
    source: str,
    label: int | str,
    filename: str,
    flags: int = 0,
    transformers: Sequence[Callable[[ast.Module], ast.Module]] = (),
) -> dict[tuple[str, int], list[types.CodeType]]:
    """The rewrite of a whole file or cell of the person's (code written outside the
    recorded cell), its sites labelled ``label``: the code objects it defines, by
    (qualified name, first line), as `as_written.plain_code` indexes the plain ones."""
    tree = compile(source, filename, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True)
    rewriter = CallSiteTransformer(label, range_is_builtin=True, source=source)
    tree = rewriter.visit(tree)
    for transformer in transformers:
        tree = transformer(tree)
    ast.fix_missing_locations(tree)
    module = compile(
        tree, filename, "exec", flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    code = _named(module, {tuple(site): site for site in rewriter.site_values})
    index: dict[tuple[str, int], list[types.CodeType]] = {}
    for nested in _nested_code(code):
        index.setdefault((nested.co_qualname, nested.co_firstlineno), []).append(nested)
    return index


def _nested_code(code: types.CodeType):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _nested_code(const)


def compile_plain(tree: ast.Module, filename: str, flags: int, split_last: bool):
    """The cell compiled as it is (when its rewrite failed)."""
    last = None
    if split_last and tree.body and isinstance(tree.body[-1], ast.Expr):
        tree.body, last = tree.body[:-1], tree.body[-1]
    return _compile(tree, last, filename, flags)


def exported(source: str, flags: int, cell: int | str) -> bytes | None:
    """The rewrite of ``source`` this process compiled last under ``flags``, labelled
    ``cell``, for a replay's worker (`imported`): marshalled code objects (their sites as
    plain tuples, and each one's kind), and the key they were compiled under; None when
    none is kept."""
    for key in reversed(_cache):
        if key.source == source and key.flags == flags:
            hit = _cache[key]
            code, last = cached(key, cell, hit.filename)
            kinds: dict[tuple, int] = {}
            code = _plain(code, kinds)
            last = _plain(last, kinds) if last is not None else None
            return marshal.dumps((tuple(key), code, last, tuple(kinds.items())))
    return None


def imported(data: bytes, key: RewriteKey, filename: str) -> tuple | None:
    """(code, last code) of an `exported` rewrite, under ``filename``, if it was compiled
    under ``key`` (the source, flags, and what decides the rewrite where it runs now),
    else None."""
    sent, code, last, kinds = marshal.loads(data)
    if tuple(sent) != key:
        return None
    sites = {plain: SITE_TYPES[kind]._make(plain) for plain, kind in kinds}
    last = _named(last, sites, filename) if last is not None else None
    return _named(code, sites, filename), last


def clear() -> None:
    _cache.clear()
