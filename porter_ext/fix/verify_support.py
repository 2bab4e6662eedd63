"""What ``--fix`` verification reads and writes beside the rounds (`porter_ext.fix.verify`,
the rounds themselves in `porter_ext.fix.verify_rounds`): the cell with its magics
masked, the names of the person's namespace a rewrite relies on, what the run saw, and
the report's rewrite entries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from porter_ext.backends import LIBRARIES
from porter_ext.fix.blockers import blocked_sites, blockers, cell_line
from porter_ext.fix.draws import kept_draw
from porter_ext.fix.verify_rounds import Round
from porter_ext.model.entries import RewriteEntry, RewriteSiteEntry
from porter_ext.spec.dtype_categories import dtype_kind
from porter_ext.spec.indexing import ROW_BUILTINS

if TYPE_CHECKING:
    from porter_ext.fix.rewrite import CellRewrite
    from porter_ext.model.calls import CallRecord
    from porter_ext.model.cells import CellEntry
    from porter_ext.model.entries import ReplayEntry
    from porter_ext.replay.analysis import CellIO

_Key = tuple[int, int, str]

#: true division, by the operator's name (the array on either side, or its target)
_TRUE_DIVISION = frozenset({"__truediv__", "__rtruediv__", "__itruediv__"})


def mixed_operators(calls: Iterable[CallRecord]) -> dict:
    """The operators of the original run whose verdict judged dtypes of two kinds (an
    integer true division, arrays of two kinds of dtype), with those dtypes as the codemod
    reads them: the array's first, a Python int as ``int`` (a Python float as ``python
    float``, mixed with an integer array). Read from the records'
    ``operands``, never from their messages."""
    found = {}
    for call in calls:
        if (
            call.kind == "operator"
            and call.origin is None
            and call.status == "non_standard_usage"
            and len(call.operands) == 2
        ):
            mixed = _mixed_dtypes(call.name.rpartition(".")[2], *call.operands)
            if mixed is not None:
                found[(call.line, call.col, call.name)] = mixed
    return found


def _mixed_dtypes(name: str, x: str, other: str) -> tuple[str, str] | None:
    scalar = other.startswith("python ")
    xkind = dtype_kind(x)
    okind = other.removeprefix("python ") if scalar else dtype_kind(other)
    if name in _TRUE_DIVISION and {xkind, okind} <= {"int", "bool"}:
        return (x, "int" if scalar else other)
    if scalar and okind in ("float", "complex") and xkind in ("int", "bool"):
        return (x, other)  # ``1.0 / i``: the integer array cast to the scalar's kind
    if not scalar and xkind != okind and "other" not in (xkind, okind):
        return (x, other)
    return None


def run_knowledge(calls: Sequence[CallRecord]) -> dict:
    """What the original run saw that the source cannot tell, as the fields of
    `porter_ext.fix.rewrite.RunKnowledge`: ``results``, ``receivers``, ``decided``,
    ``usages`` and ``rewrites``."""
    return {
        "results": array_results(calls),
        "receivers": array_methods(calls),
        "decided": run_verdicts(calls),
        "usages": recorded_usages(calls),
        "rewrites": run_rewrites(calls),
    }


def run_rewrites(calls: Iterable[CallRecord]) -> dict:
    """The rewrites the original run's values chose (`CallRecord.rewrite`: a list made an
    array, an integer array cast to the float64 a function takes), by ``(line, col,
    name)`` → the template over the call's source (`RunKnowledge`'s ``rewrites``). A site
    the run judged two ways (integers in one iteration, floats in the next) is left out:
    no one rewrite keeps both."""
    seen: dict = {}
    for call in calls:
        if call.origin is None and call.kind != "operator":
            seen.setdefault((call.line, call.col, call.name), set()).add(call.rewrite)
    return {key: next(iter(v)) for key, v in seen.items() if len(v) == 1 and None not in v}


def recorded_usages(calls: Iterable[CallRecord]) -> dict:
    """The indices outside the standard (``C[X]`` into a first axis, ``x2[0]`` of fewer
    axes than the array has: the templates that wrote their suggestions say which) and
    the ``len()`` calls of arrays the original run made in this cell, by ``(line, col, name)`` → (their
    suggestion, written with the person's expressions, and the array's library): the
    codemod rewrites them with the template that wrote it (`porter_ext.spec.indexing`).
    A site the run judged two ways (an index of another rank in a later iteration) is
    left out."""
    seen: dict = {}
    for call in calls:
        index = call.kind == "index" and call.status == "non_standard_usage"
        length = call.name in ("len", "zip", *ROW_BUILTINS)
        length = length and call.status == "non_standard_usage"
        if call.origin is None and (index or length) and call.suggestion:
            key = (call.line, call.col, call.name)
            seen.setdefault(key, set()).add((call.suggestion, call.library))
    return {key: next(iter(v)) for key, v in seen.items() if len(v) == 1}


def array_results(calls: Iterable[CallRecord]) -> dict:
    """The calls of the original run (written in this cell) that returned an array or a
    tuple of arrays, by ``(line, col, name)`` → library: what the codemod cannot tell from
    the source (`RunKnowledge`'s ``results``). Only array libraries' calls: the recorder
    also sees other libraries handed arrays (``ax.plot(t)``), which the codemod has no
    entries for."""
    return {
        (call.line, call.col, call.name): call.library
        for call in calls
        if call.origin is None
        and call.device_out is not None
        and call.kind != "operator"
        and call.library in LIBRARIES
    }


def array_methods(calls: Iterable[CallRecord]) -> dict:
    """The method calls of the original run (written in this cell) on arrays, by ``(line,
    col, name)`` → library: their receivers are arrays (`RunKnowledge`'s ``receivers``);
    a method of another library's object given an array (matplotlib's ``ax.plot(t)``)
    has no array for its receiver."""
    return {
        (call.line, call.col, call.name): call.library
        for call in calls
        if call.origin is None and call.kind == "method" and call.library in LIBRARIES
    }


def run_verdicts(calls: Iterable[CallRecord]) -> dict:
    """The one verdict the original run gave at each site of this cell, by ``(line, col,
    name)`` → ``(status, standard_name)``: where the source leaves the table's entry to
    values, the run tells it (`RunKnowledge`'s ``decided``). A site the run judged two
    ways (a loop over arrays of different ranks) is left out."""
    seen: dict = {}
    for call in calls:
        if call.origin is None and call.kind != "operator":
            key = (call.line, call.col, call.name)
            seen.setdefault(key, set()).add((call.status, call.standard_name))
    return {key: next(iter(v)) for key, v in seen.items() if len(v) == 1}


def site_key(site: RewriteSiteEntry) -> _Key:
    return (site.line, site.col, site.name)


def namespace_imports(namespace: Mapping[str, Any]) -> dict[str, str]:
    """Names earlier cells imported: modules, and functions of modules."""
    import types

    names = {}
    for name, value in list(namespace.items()):
        if name.startswith("_"):
            continue
        if isinstance(value, types.ModuleType):
            names[name] = value.__name__
        elif callable(value) and getattr(value, "__module__", None) not in (None, "__main__"):
            qual = getattr(value, "__qualname__", None)
            if isinstance(qual, str) and "." not in qual and "<" not in qual:
                names[name] = f"{value.__module__}.{qual}"
    return names


def provided_helpers(imports: Mapping[str, str]) -> list[str]:
    """The helpers an earlier cell of the notebook imported (``array_namespace``, ``xpx``):
    under ``porter fix`` the rewrite does not import them again."""
    from porter_ext.fix.static import is_helper

    wanted = {"array_namespace": "array_namespace", "xpx": "array_api_extra"}
    return [
        name
        for name, dotted in imports.items()
        if name in wanted
        and (dotted.rpartition(".")[2] == wanted[name] or dotted == wanted[name])
        and (is_helper(dotted) or dotted == "array_api_extra")
    ]


def namespace_arrays(namespace: Mapping[str, Any]) -> dict[str, str]:
    """The names the run showed to hold arrays, with their libraries (the registry's),
    the smallest first: the codemod takes ``xp`` from the first of an earlier cell's
    arrays where the cell has none (`porter_ext.fix.xpbind`), and replays that read it
    only for its namespace are sent it (`namespace_fallbacks`)."""
    from porter_ext.backends import backend_for

    found = []
    for name, value in list(namespace.items()):
        if name.startswith("_"):
            continue
        backend = backend_for(value)
        if backend is not None:
            found.append((_size(value), name, backend.name))
    return {name: library for _, name, library in sorted(found, key=lambda f: f[0])}


def _size(value: Any) -> int:
    try:
        return int(getattr(value, "nbytes", 0) or 0)
    except Exception:  # noqa: BLE001 (a lazy array that cannot say without computing)
        return 0


def namespace_fallbacks(namespace: Mapping[str, Any], code: str, io: CellIO) -> list[str]:
    """The earlier cells' arrays a rewrite of ``code`` may take ``xp`` from, for the
    libraries whose module the cell calls without reading an array of theirs (one each,
    the smallest, up to `FALLBACK_BYTES`, that ``code`` does not rebind): the run may show
    that a name the cell binds is no array (``x = [1, 2, 3]`` then ``np.exp(x)``), which
    the proposal made before it cannot tell, so its replays are sent that array too.
    ``io``: the names ``code`` exchanges (`porter_ext.replay.analysis.analyse`, made once
    by the caller)."""
    import types

    from porter_ext.backends import backend_of_module

    arrays = namespace_arrays(namespace)
    named = [m.__name__ for n in io.inputs if isinstance(m := namespace.get(n), types.ModuleType)]
    named += imported_modules(code)
    modules = {b.name for m in named if (b := backend_of_module(m)) is not None}
    modules -= {arrays[n] for n in io.inputs if n in arrays}
    first: dict[str, str] = {}
    for name, library in arrays.items():
        small = _size(namespace[name]) <= FALLBACK_BYTES
        if library in modules and name not in io.outputs and small:
            first.setdefault(library, name)
    return list(first.values())


def imported_modules(code: str) -> list[str]:
    """The modules ``code``'s import statements name (``import numpy as np``: numpy)."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
    return found


#: the largest earlier array sent to a cell's replays only for ``xp`` to be taken from it
FALLBACK_BYTES = 1 << 20


#: why a site reading an array subclass of its own semantics is left as written
OWN_SEMANTICS = (
    "a rewrite through xp would make it a plain array (and replays move it as one, so "
    "none can verify it)"
)


def own_semantics_arrays(namespace: Mapping[str, Any], source: str) -> dict[str, str]:
    """The names ``source`` reads or binds that the run left holding an array subclass
    whose operations differ from a plain array's (a NumPy masked array, matrix or record
    array: `porter_ext.backends.own_semantics`), name → that class: rewrites through
    ``xp`` would make them plain arrays, and replays move them as plain arrays, so no
    replay can tell."""
    import ast

    from porter_ext.backends import own_semantics

    try:
        names = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    except SyntaxError:
        return {}
    found = {}
    for name in sorted(names):
        if name in namespace and (kind := own_semantics(namespace[name])) is not None:
            found[name] = kind
    return found


def own_semantics_reason(arrays: Mapping[str, str], text: str | None = None) -> str | None:
    """Why a site (its source ``text``; None: the whole cell) is left as written when it
    reads one of ``arrays`` (`own_semantics_arrays`); None when it reads none."""
    import re

    for name, kind in arrays.items():
        if text is None or re.search(rf"(?<![\w.]){re.escape(name)}\b", text):
            return f"{name} is a {kind}: {OWN_SEMANTICS}"
    return None


def own_semantics_sites(
    sites: Iterable[RewriteSiteEntry], namespace: Mapping[str, Any], source: str
) -> dict[_Key, str]:
    """The sites of ``source`` that read an array subclass of its own semantics
    (`own_semantics_arrays`), with why they are left as written."""
    special = own_semantics_arrays(namespace, source)
    if not special:
        return {}
    return {
        site_key(s): why
        for s in sites
        if (why := own_semantics_reason(special, s.original)) is not None
    }


def with_reasons(sites: list[RewriteSiteEntry], reasons: Mapping[_Key, str]) -> list:
    """``sites`` with the reason ``reasons`` gives each one left as written."""
    return [
        dataclasses.replace(s, reason=reasons[site_key(s)])
        if s.replacement is None and site_key(s) in reasons
        else s
        for s in sites
    ]


def namespace_others(namespace: Mapping[str, Any], source: str) -> list[str]:
    """The names ``source`` reads or binds that the run left holding something other than an
    array (``x = [-1, 0, 1]``): ``xp`` is never taken from them."""
    import ast

    from porter_ext.backends import backend_for

    try:
        names = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    except SyntaxError:
        return []
    return sorted(
        n for n in names if n in namespace and backend_for(namespace[n]) is None and n != "xp"
    )


def site_entries(
    sites: Iterable[RewriteSiteEntry], kept: frozenset | None, reasons: Mapping[_Key, str]
) -> list:
    out = []
    for site in sites:
        applied = site.replacement is not None and (kept is None or site_key(site) in kept)
        reason = site.reason if site.replacement is None else None
        if not applied and site_key(site) in reasons:
            reason = reasons[site_key(site)]
        out.append(
            RewriteSiteEntry(
                site.line, site.col, site.name, site.original, site.replacement, applied, reason
            )
        )
    return out


def refused(
    source: str,
    sites: Iterable[RewriteSiteEntry],
    reason: str,
    reasons: Mapping[_Key, str] | None = None,
) -> RewriteEntry:
    """A refused rewrite: each site that had a rewrite says why it is not applied (its own
    reason from ``reasons`` where it has one, the cell's ``reason`` otherwise)."""
    why = {site_key(s): f"not applied: {reason}" for s in sites if s.replacement is not None}
    why.update(reasons or {})
    return RewriteEntry(
        source=source,
        status="refused",
        verified_on=[],
        sites=site_entries(sites, frozenset(), why),
        reason=reason,
    )


def unexercised_specs(replays: Iterable[ReplayEntry]) -> set[str]:
    """Specs whose replay of the original cell never touched their library (the cell makes
    its arrays with its own library's creation calls): no rewrite can be verified there,
    nor does the original run there, so they do not count against the rewrite."""
    return {r.backend for r in replays if r.role == "target" and r.status == "not_exercised"}


def accepted_entry(
    final: CellRewrite,
    best: Round,
    specs: list,
    rounds: list[Round],
    inapplicable: set[str] = frozenset(),
    left: Mapping[_Key, str] | None = None,
    original: CellEntry | None = None,
) -> RewriteEntry:
    """The accepted rewrite: verified (every site, every spec the original runs on) or
    partial (say what not); ``left`` gives the reasons of sites left out beforehand.
    Where a spec is not verified because a line left as written fails there (one of the
    ``original`` run's calls), that site says so, one line each (`porter_ext.fix.blockers`),
    with the cell's lines as its editor counts them (`CellEntry.first_line`)."""
    calls = original.calls if original is not None else []
    first_line = original.first_line if original is not None else 1
    first = rounds[0]
    reasons = dict(left or {})
    for site in final.sites:
        if site_key(site) in reasons:
            continue
        if site.replacement is None and site.reason and site.reason.startswith("left out"):
            alone = next((r for r in rounds if r.keys == frozenset({site_key(site)})), None)
            # the round that judged it: tried alone, or (never tried alone) the whole rewrite
            when, why = ("alone", alone.why) if alone is not None else ("with it", first.why)
            reasons[site_key(site)] = f"left out: {when}, {why or 'it did not verify'}"
    sites = site_entries(final.sites, None, reasons)
    missing, skipped = [], []
    for spec in map(str, specs):
        if spec in best.verified_on:
            continue
        replay = next((e for e in best.entries if e.backend == spec), None)
        same = replay is not None and replay.status == "not_exercised" and spec in inapplicable
        (skipped if same else missing).append(spec)
    found = blockers(final.original, final.source, best, missing) if missing else {}
    sites, said = blocked_sites(sites, found, calls, final.original, first_line)
    problems = []
    left_out = [s for s in sites if not s.applied and not kept_draw(s)]
    if left_out:
        problems.append(f"{len(left_out)} site(s) left as written")
    explained = {spec for specs, _ in said for spec in specs}
    for spec in missing:
        if spec in explained:
            continue
        replay = next((e for e in best.entries if e.backend == spec), None)
        error = replay.error if replay is not None else None
        line = error.line if error is not None else None
        placed = cell_line(final.original, final.source, line - best.shift) if line else None
        detail = (
            f"{error.type} at line {(placed[0] if placed else line) + first_line - 1}: "
            f"{error.message}"
            if error
            else (replay.reason or replay.status if replay is not None else "not replayed")
        )
        problems.append(f"not verified on {spec}: {detail}")
    problems += [f"not verified on {', '.join(specs)}: {text}" for specs, text in said]
    status = "partial" if problems else "verified"
    if skipped:
        problems.append(
            f"not applicable on {', '.join(skipped)}: neither the cell nor its "
            "rewrite touches those libraries (it makes its arrays with its own)"
        )
    reason = "; ".join(problems) if problems else None
    return RewriteEntry(
        source=final.source,
        status=status,
        verified_on=list(best.verified_on),
        sites=sites,
        reason=reason,
        diff=final.diff(),
    )


def code_reading(code: str, names: list[str], first: Sequence[str] = ()) -> str:
    """``code`` that also reads ``names`` after it and ``first`` before it (never run: only
    its analysis and capture): ``first`` are names it defines that its replays may take
    from the namespace all the same."""
    before = f"if False:  # porter: names its replays may read\n    ({', '.join(first)},)\n"
    after = f"\nif False:  # porter: names its rewrite reads\n    ({', '.join(names)},)\n"
    return (before if first else "") + code + (after if names else "")
