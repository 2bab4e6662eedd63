"""The recorder: sees every call of a recorded cell, classifies it, reads its devices.

The rewritten cell calls `porter_call` for every call. With no recorder active it only
calls through; with one, array calls are resolved (cached per callee), classified (cached
per site and argument shape of the call) and merged per site into `CallRecord` s. The
person's call runs exactly once, and nothing porter does can break it: an internal error
is kept as a warning and the call's own result stands.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from porter_ext.backends import device_of as _device
from porter_ext.backends import library_of
from porter_ext.backends.registry import BY_TYPE as _type_backend
from porter_ext.record.classify import Verdict, classify, is_conditional, table_entries
from porter_ext.record.model import CallRecord
from porter_ext.record.resolve import (
    HOST_BUILTINS,
    Callee,
    attribute_callee,
    method_callee,
    resolve_function,
)
from porter_ext.record.strict import (
    AcknowledgedFunction,
    NamespaceView,
    NonStandardError,
    RejectedFunction,
    StandardFunction,
    recorded_namespace,
)
from porter_ext.spec.standard import DEFAULT_VERSION, standard

_BUILTIN_METHOD = types.BuiltinMethodType
_METHOD = types.MethodType
_MISSING = object()
_NO_SELF = object()
_NAMESPACE_CALLS = frozenset({"array_namespace", "__array_namespace__"})
_STRICT_RAISES = frozenset({"non_standard", "non_standard_usage", "device_specific"})
_CACHE_LIMIT = 20_000

#: id(function) → (function, Callee or None); functions are kept alive so ids stay unique
_functions: dict[int, tuple[object, Callee | None]] = {}
#: (standard version, callee, nargs, keyword names) → Verdict, for verdicts that do not
#: depend on argument values
_shared_verdicts: dict[tuple, Verdict] = {}
#: (array type, method name) → Callee
_methods: dict[tuple[type, str], Callee | None] = {}


#: the active recorder (one cell at a time; None when nothing is recorded)
_active: Recorder | None = None


def porter_call(site: tuple, f: Any, /, *args: Any, **kwargs: Any) -> Any:
    """What every call of a recorded cell goes through."""
    rec = _active
    if rec is None:
        return f(*args, **kwargs)
    fast = rec._fast.get(site)
    if fast is None or len(args) != fast[2] or (tuple(kwargs) != fast[4] if kwargs else fast[4]):
        return rec.call(site, f, args, kwargs)
    # the hot path: the same function, or a method of the same array type, called again at
    # this site the same way: its callee and verdict are known, only devices are read
    if fast[0] is f:
        din = []
    elif (
        fast[1] is not None
        and (type(f) is _BUILTIN_METHOD or type(f) is _METHOD)
        and type(f.__self__) is fast[0]
        and f.__name__ == fast[1]
    ):
        din = [_type_backend[fast[0]].device_of(f.__self__)]
    else:
        return rec.call(site, f, args, kwargs)
    for a in args:
        backend = _type_backend.get(type(a))
        if backend is not None:
            din.append(backend.device_of(a))
        elif type(a) is list or type(a) is tuple:
            din.extend(_devices_in(a, None))
    if kwargs:
        din.extend(_devices_in((), kwargs))
    bucket = fast[3]
    try:
        out = f(*args, **kwargs)
    except BaseException:
        key = (tuple(din), None)
        bucket[key] = bucket.get(key, 0) + 1
        raise
    backend = _type_backend.get(type(out))
    key = (tuple(din), backend.device_of(out) if backend is not None else _device_out(out))
    bucket[key] = bucket.get(key, 0) + 1
    return out


def porter_attr(site: tuple, obj: Any, name: str) -> Any:
    """What reads of recorded array attributes (``x.T``, ``x.device``) go through."""
    rec = _active
    if rec is None:
        return getattr(obj, name)
    return rec.attribute(site, obj, name)


def _devices_in(args: tuple, kwargs: dict | None, self_obj: Any = _NO_SELF) -> tuple[str, ...]:
    out: list[str] = []
    if self_obj is not _NO_SELF:
        d = _device(self_obj)
        if d is not None:
            out.append(d)
    for a in args:
        d = _device(a)
        if d is not None:
            out.append(d)
        elif type(a) is list or type(a) is tuple:
            for item in a[:16]:
                d = _device(item)
                if d is not None:
                    out.append(d)
    if kwargs:
        for a in kwargs.values():
            d = _device(a)
            if d is not None:
                out.append(d)
    return tuple(out)


def _device_out(out: Any) -> str | None:
    d = _device(out)
    if d is None and type(out) is not list and isinstance(out, tuple) and out:
        d = _device(out[0])
    return d


class Recorder:
    """Records the array calls of one cell run. Use `activate` around the run."""

    def __init__(
        self,
        *,
        strict: bool = False,
        version: str = DEFAULT_VERSION,
        cell: int | str | None = None,
    ):
        self.strict = strict
        self.version = version
        self.cell = cell
        self.standard = standard(version)
        #: (site, qualname, status, devices_in, device_out) → [count, Callee, Verdict]
        self._buckets: dict[tuple, dict] = {}
        #: site → (function or array type, method name or None, nargs, bucket) of the last
        #: plain call there, so that repeated calls skip resolving and classifying
        self._fast: dict[tuple, tuple] = {}
        self._verdicts: dict[tuple, Verdict] = {}
        self._interned: dict[tuple, Verdict] = {}
        self._entries: dict[Callee, tuple] = {}
        self.warnings: list[str] = []
        self._previous: Recorder | None = None

    # -- activation --------------------------------------------------------------------
    @contextmanager
    def activate(self) -> Iterator[Recorder]:
        self.start()
        try:
            yield self
        finally:
            self.stop()

    def start(self) -> None:
        """Record from now on (``%port on`` starts in one IPython event, stops in another)."""
        global _active
        self._previous, _active = _active, self

    def stop(self) -> None:
        global _active
        _active = self._previous

    def _internal(self, exc: BaseException) -> None:
        message = (
            f"porter: internal recorder error ({type(exc).__name__}: {exc}); the cell ran unchanged"
        )
        if message not in self.warnings:
            self.warnings.append(message)

    # -- resolving callees -------------------------------------------------------------
    def _resolve(self, f: Any) -> tuple[Callee | None, Any, str | None]:
        """(callee, self object of a method call, forced status) for a callable."""
        t = type(f)
        if t is _BUILTIN_METHOD or t is _METHOD:
            s = f.__self__
            if s is not None:
                st = type(s)
                backend = _type_backend.get(st, _MISSING)
                if backend is _MISSING:
                    backend = library_of(s)
                if backend is not None:
                    key = (st, f.__name__)
                    callee = _methods.get(key, _MISSING)
                    if callee is _MISSING:
                        callee = _methods[key] = method_callee(s, f)
                    return callee, s, None
        elif t is AcknowledgedFunction:
            callee, _, _ = self._resolve(f.__wrapped__)
            return callee, None, "acknowledged"
        elif t is StandardFunction or t is RejectedFunction:
            callee, s, _ = self._resolve(f.__wrapped__)
            return callee, s, None
        hit = _functions.get(id(f))
        if hit is not None and hit[0] is f:
            return hit[1], None, None
        if f is float or f is int or f is bool or f is complex:
            callee = Callee("builtins", "function", HOST_BUILTINS[f], HOST_BUILTINS[f])
        else:
            callee = resolve_function(f)
        if len(_functions) > _CACHE_LIMIT:
            _functions.clear()
        _functions[id(f)] = (f, callee)
        return callee, None, None

    def _verdict(self, site, callee, args, kwargs, self_obj, forced) -> Verdict:
        if forced == "acknowledged":
            return Verdict(forced, None, None, "called through the backend escape hatch")
        if forced == "host_sync":
            return Verdict(
                "host_sync",
                None,
                None,
                f"{callee.name}() of an array copies it to the host and waits for the device",
            )
        entries = self._entries.get(callee)
        if entries is None:
            entries = self._entries[callee] = table_entries(callee)
        if entries and is_conditional(entries):
            # the verdict depends on argument values: key it by what the conditions and the
            # suggestion read (literals, array ranks, types), and intern equal verdicts so
            # that a call in a loop merges into one record
            try:
                key = (
                    site,
                    callee,
                    _value_key(self_obj),
                    tuple(_value_key(a) for a in args),
                    tuple((k, _value_key(v)) for k, v in kwargs.items()),
                )
                hash(key)
            except TypeError:
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
                )
                verdict = self._interned.setdefault(interned, verdict)
                if key is not None:
                    self._verdicts[key] = verdict
            return verdict
        # the verdict depends only on the callee and the shape of the call: shared by all
        # recorders of this process (cells are re-run, functions called from many cells)
        key = (self.version, callee, len(args), tuple(kwargs))
        verdict = _shared_verdicts.get(key)
        if verdict is None:
            verdict = classify(callee, args, kwargs, self_obj, self.standard, entries)
            if len(_shared_verdicts) > _CACHE_LIMIT:
                _shared_verdicts.clear()
            _shared_verdicts[key] = verdict
        return verdict

    # -- the hot path ------------------------------------------------------------------
    def call(self, site: tuple, f: Any, args: tuple, kwargs: dict) -> Any:
        """A call not on the hot path: resolve, classify, record, and remember the site."""
        try:
            callee, self_obj, forced = self._resolve(f)
            if callee is not None and callee.library == "builtins":
                lib = library_of(args[0]) if len(args) == 1 else None
                callee = None if lib is None else _host_callee(lib, callee.name)
                forced = "host_sync"
        except Exception as exc:  # porter's fault: never the person's
            self._internal(exc)
            callee = None
        if callee is None:
            return f(*args, **kwargs)
        spelled = site[3]
        if callee.kind == "function" and spelled is not None and not callee.name.endswith(spelled):
            callee = _alias(callee, spelled, f)
        try:
            verdict = self._verdict(site, callee, args, kwargs, self_obj, forced)
        except Exception as exc:
            self._internal(exc)
            return f(*args, **kwargs)
        if self.strict and verdict.status in _STRICT_RAISES and type(f) is not RejectedFunction:
            self._add(site, callee, verdict, args, kwargs, None, self_obj)
            raise NonStandardError(
                f"{callee.qualname} is outside the array API standard ({verdict.status})"
                + (f": write {verdict.suggestion}" if verdict.suggestion else "")
                + (f". {verdict.message}" if verdict.message else ""),
                name=callee.qualname,
                suggestion=verdict.suggestion,
            ).at_line(site[1])
        try:
            out = f(*args, **kwargs)
        except NonStandardError as exc:
            verdict = Verdict(
                "non_standard" if type(f) is RejectedFunction else "non_standard_usage",
                verdict.standard_name,
                exc.suggestion or verdict.suggestion,
                str(exc),
            )
            self._add(site, callee, verdict, args, kwargs, None, self_obj)
            raise exc.at_line(site[1]) from None
        except BaseException:
            self._add(site, callee, verdict, args, kwargs, None, self_obj)
            raise
        try:
            bucket = self._add(site, callee, verdict, args, kwargs, out, self_obj)
            if (
                forced is None
                and not is_conditional(self._entries.get(callee, ()))
                and callee.name not in _NAMESPACE_CALLS
            ):
                kwnames = tuple(kwargs)
                if callee.kind == "method":
                    self._fast[site] = (type(self_obj), f.__name__, len(args), bucket, kwnames)
                elif type(f) is not StandardFunction:
                    self._fast[site] = (f, None, len(args), bucket, kwnames)
            if callee.name in _NAMESPACE_CALLS and isinstance(
                out, types.ModuleType | NamespaceView
            ):
                out = recorded_namespace(out, strict=self.strict, version=self.version)
        except Exception as exc:
            self._internal(exc)
        return out

    def attribute(self, site: tuple, obj: Any, name: str) -> Any:
        try:
            callee = _attribute(obj, name)
        except Exception as exc:
            self._internal(exc)
            callee = None
        if callee is None:
            return getattr(obj, name)
        try:
            verdict = self._verdict(site, callee, (), {}, obj, None)
        except Exception as exc:
            self._internal(exc)
            return getattr(obj, name)
        try:
            out = getattr(obj, name)
        except BaseException:
            self._add(site, callee, verdict, (), {}, None, obj)
            raise
        try:
            self._add(site, callee, verdict, (), {}, out, obj)
        except Exception as exc:
            self._internal(exc)
        return out

    def _add(self, site, callee, verdict, args, kwargs, out, self_obj=_NO_SELF) -> dict:
        bucket_key = (site, callee, verdict, tuple(kwargs))
        bucket = self._buckets.get(bucket_key)
        if bucket is None:
            bucket = self._buckets[bucket_key] = {}
        key = (_devices_in(args, kwargs, self_obj), _device_out(out) if out is not None else None)
        bucket[key] = bucket.get(key, 0) + 1
        return bucket

    # -- results -----------------------------------------------------------------------
    def records(self) -> list[CallRecord]:
        """The merged calls, in source order."""
        merged: dict[tuple, list] = {}
        for (site, callee, verdict, keywords), bucket in self._buckets.items():
            for (devices_in, device_out), count in bucket.items():
                key = (site, callee.qualname, verdict.status, devices_in, device_out, keywords)
                entry = merged.get(key)
                if entry is None:
                    merged[key] = [count, callee, verdict]
                else:
                    entry[0] += count
        out = []
        for (site, qualname, status, devices_in, device_out, keywords), (
            count,
            callee,
            verdict,
        ) in merged.items():
            cell, line, col, _ = site
            message = verdict.message
            origin = None
            if self.cell is not None and cell != self.cell:
                origin = cell
                message = f"(in code from cell {cell}) {message}".strip()
            out.append(
                CallRecord(
                    line=line,
                    col=col,
                    name=qualname,
                    library=callee.library,
                    kind=callee.kind,
                    status=status,
                    standard_name=verdict.standard_name,
                    suggestion=verdict.suggestion,
                    devices_in=list(devices_in),
                    device_out=device_out,
                    count=count,
                    message=message,
                    keywords=list(keywords),
                    origin_cell=origin,
                )
            )
        out.sort(key=lambda r: (r.line, r.col))
        return out


_aliases: dict[tuple[Callee, str], Callee] = {}
_attributes: dict[tuple[type, str], Callee | None] = {}


_LITERALS = (int, float, bool, str, complex, type(None))


def _value_key(v: Any) -> object:
    """What a value-dependent verdict may depend on: a literal's value, an array's rank,
    otherwise the type."""
    t = type(v)
    if t in _LITERALS:
        return (t, v)
    if t is tuple and len(v) <= 8 and all(type(e) is int for e in v):
        return (t, v)
    if library_of(v) is not None:
        return (t, getattr(v, "ndim", None))
    if t is list or t is tuple:
        return (t, len(v), tuple(type(e) for e in v[:4]))
    return t


_host_callees: dict[tuple[str, str], Callee] = {}


def _host_callee(lib: str, name: str) -> Callee:
    callee = _host_callees.get((lib, name))
    if callee is None:
        callee = _host_callees[(lib, name)] = Callee(lib, "function", name, name)
    return callee


def _attribute(obj: Any, name: str) -> Callee | None:
    key = (type(obj), name)
    callee = _attributes.get(key, _MISSING)
    if callee is _MISSING:
        callee = _attributes[key] = attribute_callee(obj, name)
    return callee


def _alias(callee: Callee, spelled: str, f: Any) -> Callee:
    """The callee as the call spelled it, when a library binds one function to several
    names (NumPy's ``concatenate`` is its ``concat``): portability depends on the spelling.
    Only a name the callee's own namespace binds to the same object counts (not ``as``)."""
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


def install_hooks(namespace: dict) -> None:
    """Put the call and attribute hooks where rewritten code looks them up."""
    namespace["__porter_call__"] = porter_call
    namespace["__porter_attr__"] = porter_attr
