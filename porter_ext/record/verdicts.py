"""Verdicts for the recorder: the standard's judgement of one call, cached by what it
depends on, and the records a cell's buckets merge into.

A verdict that depends only on the callee and the shape of the call (how many
positional arguments, which keywords) is a library fact, kept process-wide by standard
version; one that depends on argument values is kept for the cell only, keyed by what the
conditions and the suggestion read. Callees the recorder makes up (operators, host
calls, a library's alias spelled by the call) are library facts too.
"""

from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass
from typing import Any

from porter_ext.backends.base import Backend
from porter_ext.model.calls import CallOrigin, CallRecord
from porter_ext.record.classify import (
    Verdict,
    classify,
    is_conditional,
    table_entries,
    value_sensitive,
)
from porter_ext.record.compilers import COMPILED
from porter_ext.record.operators import classify_protocol
from porter_ext.record.person_code import FILE_LABELS
from porter_ext.record.positions import char_col
from porter_ext.record.resolve import Callee
from porter_ext.record.runners import FILENAMES
from porter_ext.record.sites import CallSite, OperationSite, Place
from porter_ext.record.spelled import spelled_suggestion
from porter_ext.record.strict import NonStandardError
from porter_ext.record.values import value_key
from porter_ext.spec.standard import Standard

_CACHE_LIMIT = 20_000
_SUGGESTIONS_PER_SITE = 8
_UNSPELLED = object()

#: (standard version, callee, nargs, keyword names) → Verdict, for verdicts that depend
#: only on the callee and the shape of the call (callees are library facts)
_shared_verdicts: dict[tuple, Verdict] = {}
_aliases: dict[tuple[Callee, str], Callee] = {}
_operators: dict[tuple[str, str, str], Callee] = {}
_host_callees: dict[tuple[str, str], Callee] = {}


@dataclass(frozen=True, eq=False)
class DtypeVerdict(Verdict):
    """An operator's verdict on the dtypes of its operands, with those dtypes: what its
    record's ``operands`` say (the array's dtype first, a Python scalar as ``python int``)."""

    operands: tuple[str, ...] = ()


def clear() -> None:
    for cache in (_shared_verdicts, _aliases, _operators, _host_callees):
        cache.clear()


class Verdicts:
    """The recorder's verdicts and buckets during one cell (a mixin of `Recorder`)."""

    version: str
    cell: int | str | None
    standard: Standard
    _buckets: dict[tuple, dict]
    _verdicts: dict[tuple, Verdict]
    _interned: dict[tuple, Verdict]
    _entries: dict[Callee, tuple]
    #: place of another cell's code → where this cell's code called into it
    _callers: dict[Place, tuple[int, int, int, int] | None]

    def _verdict(self, site, callee, args, kwargs, self_obj, forced) -> tuple[Verdict, Any]:
        """(verdict, True when it depends only on the callee and the shape of the call,
        None when it depends on argument values, False when it is not to be reused)."""
        if forced == "acknowledged":
            return Verdict(forced, None, None, "called through the backend escape hatch"), False
        if forced == "host_sync":
            message = f"{callee.name}() of an array copies it to the host and waits for the device"
            return Verdict("host_sync", None, None, message), False
        if forced == "protocol":
            return classify_protocol(self.standard, callee.name), False
        if forced == COMPILED:  # a compiled callable's call: one call, with a note
            return Verdict("outside_namespace", None, None, callee.note), False
        entries = self._entries.get(callee)
        if entries is None:
            entries = self._entries[callee] = table_entries(callee)
        conditional = bool(entries) and is_conditional(entries)
        sensitive = not conditional and value_sensitive(callee, args, kwargs)
        if conditional or sensitive:
            # the verdict depends on argument values: key it by what the conditions and the
            # suggestion read (literals, array ranks and dtypes, types), and intern equal
            # verdicts so that a call in a loop merges into one record
            try:
                key = (
                    site,
                    callee,
                    value_key(self_obj),
                    tuple(value_key(a) for a in args),
                    tuple((k, value_key(v)) for k, v in kwargs.items()),
                )
                hash(key)
            except Exception:  # noqa: BLE001 (an argument the person made unhashable)
                key = None
            verdict = self._verdicts.get(key) if key is not None else None
            if verdict is None:
                verdict = classify(callee, args, kwargs, self_obj, self.standard, entries)
                interned = (
                    callee,
                    verdict.status,
                    verdict.standard_name,
                    verdict.suggestion,
                    verdict.message,
                    verdict.rewrite,
                )
                verdict = self._interned.setdefault(interned, verdict)
                if key is not None:
                    self._verdicts[key] = verdict
            # the fast path may reuse it while the same values come back (the same
            # objects, or arrays of the same type, dtype and rank)
            return verdict, None
        key = (self.version, callee, len(args), tuple(kwargs))
        verdict = _shared_verdicts.get(key)
        if verdict is None:
            verdict = classify(callee, args, kwargs, self_obj, self.standard, entries)
            if len(_shared_verdicts) > _CACHE_LIMIT:
                _shared_verdicts.clear()
            _shared_verdicts[key] = verdict
        return verdict, True

    def _bucket(
        self, site: CallSite | OperationSite, callee: Callee, verdict: Verdict, kwnames: tuple
    ) -> dict:
        # the site's place (position, spelling, end): what its records are merged by
        place = site.place
        key = (place, callee, verdict, kwnames)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = {}
            if self.cell is not None and place.cell != self.cell and place not in self._callers:
                # code of another cell: where this cell called into it (first seen)
                self._callers[place] = calling_position(FILENAMES.get(self.cell))
        return bucket

    # -- results -----------------------------------------------------------------------
    def records(self) -> list[CallRecord]:
        """The merged calls, in source order: one record per site, callee, verdict and
        devices; a site whose suggestion follows values that change (``x.sum(axis=k)``
        in a loop) keeps one record per suggestion, up to `_SUGGESTIONS_PER_SITE`."""
        merged: dict[tuple, list] = {}
        suggestions: dict[tuple, set] = {}
        spelled: dict[tuple, str | None] = {}  # (place, verdict) → its suggestion as written
        for (place, callee, verdict, keywords), bucket in self._buckets.items():
            said = spelled.get((place, verdict), _UNSPELLED)
            if said is _UNSPELLED:
                said = spelled[place, verdict] = spelled_suggestion(place, callee, verdict)
            for (din, dout), count in bucket.items():
                key = (place, callee.qualname, verdict.status, din, dout, keywords)
                seen = suggestions.setdefault(key, set())
                if said in seen or len(seen) < _SUGGESTIONS_PER_SITE:
                    seen.add(said)
                    key = (*key, said)
                else:  # counted with the site's last kept suggestion
                    key = (*key, max(seen, key=str))
                entry = merged.get(key)
                if entry is None:
                    merged[key] = [count, callee, verdict]
                else:
                    entry[0] += count
        out = []
        for (place, qualname, status, din, dout, keywords, said), (
            count,
            callee,
            verdict,
        ) in merged.items():
            cell, line, col, end_line, end_col = (
                place.cell,
                place.line,
                place.col,
                place.end_line,
                place.end_col,
            )
            origin = origin_cell = None
            if self.cell is not None and cell != self.cell:
                origin_cell = cell
                origin = CallOrigin(
                    index=None,
                    execution_count=cell if isinstance(cell, int) else None,
                    line=line,
                    col=col,
                    end_line=end_line,
                    end_col=end_col,
                    file=FILE_LABELS.get(cell) if isinstance(cell, str) else None,
                )
                caller = self._callers.get(place)
                if caller is not None:
                    line, col, end_line, end_col = caller
            out.append(
                CallRecord(
                    line=line,
                    col=col,
                    name=qualname,
                    library=callee.library,
                    kind=callee.kind,
                    status=status,
                    standard_name=verdict.standard_name,
                    suggestion=said,
                    devices_in=list(din),
                    device_out=dout,
                    count=count,
                    message=verdict.message,
                    keywords=list(keywords),
                    operands=list(getattr(verdict, "operands", ())),
                    rewrite=verdict.rewrite,
                    end_line=end_line,
                    end_col=end_col,
                    origin=origin,
                    origin_cell=origin_cell,
                )
            )
        out.sort(key=lambda r: (r.line, r.col))
        return out


def calling_position(filename: str | None) -> tuple[int, int, int, int] | None:
    """``(line, col, end_line, end_col)`` (columns in characters) of the expression the
    innermost frame of ``filename`` (the recorded cell's code) is running: where the
    cell called into code written elsewhere. None when no such frame is on the stack."""
    if filename is None:
        return None
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != filename:
        frame = frame.f_back
    if frame is None:
        return None
    positions = list(frame.f_code.co_positions())
    at = frame.f_lasti // 2
    line, end_line, col, end_col = positions[at] if 0 <= at < len(positions) else (None,) * 4
    line = line or frame.f_lineno
    end_line = end_line or line
    text, end_text = linecache.getline(filename, line), linecache.getline(filename, end_line)
    col = char_col(text, col or 0)
    end_col = char_col(end_text, end_col) if end_col is not None else col
    return line, col, end_line, end_col


def strict_error(callee: Callee, verdict: Verdict, line: int) -> NonStandardError:
    return NonStandardError(
        f"{callee.qualname} is outside the array API standard ({verdict.status})"
        + (f": write {verdict.suggestion}" if verdict.suggestion else "")
        + (f". {verdict.message}" if verdict.message else ""),
        name=callee.qualname,
        suggestion=verdict.suggestion,
    ).at_line(line)


def host_callee(lib: str, name: str) -> Callee:
    callee = _host_callees.get((lib, name))
    if callee is None:
        callee = _host_callees[(lib, name)] = Callee(lib, "function", name, name)
    return callee


def operator_callee(backend: Backend, name: str, kind: str) -> Callee:
    key = (backend.name, name, kind)
    callee = _operators.get(key)
    if callee is None:
        callee = _operators[key] = Callee(
            backend.name, kind, name, f"{backend.array_type_name}.{name}"
        )
    return callee


def alias(callee: Callee, spelled: str, f: Any) -> Callee:
    """The callee as the call spelled it, when a library binds one function to several
    names (NumPy's ``concatenate`` is its ``concat``): portability depends on the spelling.
    Only a name the callee's own namespace binds to the same object counts (not ``as``);
    ``f`` is the library's function itself (never a strict namespace's wrapper)."""
    key = (callee, spelled)
    alias = _aliases.get(key)
    if alias is None:
        alias = callee
        module = sys.modules.get(callee.qualname.rpartition(".")[0])
        if module is not None and getattr(module, spelled, None) is f:
            prefix = callee.name.rpartition(".")[0]
            name = f"{prefix}.{spelled}" if prefix else spelled
            qual_prefix = callee.qualname[: len(callee.qualname) - len(callee.name)]
            alias = Callee(callee.library, callee.kind, name, qual_prefix + name)
            _aliases[key] = alias
    return alias
