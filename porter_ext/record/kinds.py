"""What a callable is, for the recorder: an array call, plain Python, or maybe one (a
host builtin or another library's function, decided by its arguments).

Resolved once per callable (per array type and method name for methods) and kept for
the cell only; a plain callee is remembered where the hooks look first (its receiver's
type, or itself, by identity) and in its site's slot.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from porter_ext.backends import HELPERS, LIBRARIES
from porter_ext.record import person_code
from porter_ext.record.compilers import COMPILED, compiled_callee
from porter_ext.record.hooks_importlib_bootstrap import ARRAY_CALLABLES, ARRAY_RECEIVERS
from porter_ext.record.resolve import (
    HOST_BUILTINS,
    PROTOCOL_BUILTINS,
    Callee,
    indexed_callee,
    library_method_callee,
    method_callee,
    resolve_function,
    ufunc_method_callee,
)
from porter_ext.record.sites import CallSite
from porter_ext.record.strict import AcknowledgedFunction, RejectedFunction, StandardFunction
from porter_ext.record.transformer import METHOD_SITE, NAME_SITE
from porter_ext.record.values import backend_of

_BUILTIN_METHOD = types.BuiltinMethodType
_BUILTIN_FUNCTION = types.BuiltinFunctionType
_METHOD = types.MethodType
_MODULE = types.ModuleType
_MISSING = object()
WRAPPERS = (AcknowledgedFunction, StandardFunction, RejectedFunction)
_CACHE_LIMIT = 20_000
_ARRAY_LIBRARIES = frozenset(LIBRARIES)
#: callees the standard judges: array libraries' and array-api-compat's helpers
_CHECKED = _ARRAY_LIBRARIES | {HELPERS}
PLAIN, ARRAY, MAYBE = 0, 1, 2
_PLAIN, _ARRAY, _MAYBE = PLAIN, ARRAY, MAYBE
_WRAPPERS = WRAPPERS
#: (array type, method name) → Callee (array types belong to libraries)
methods: dict[tuple[type, str], Callee | None] = {}
_methods = methods


class CallableKinds:
    """The recorder's knowledge of callables during one cell (a mixin of `Recorder`)."""

    _callables: dict[int, tuple]
    _method_kinds: dict[tuple, tuple]
    plain_receivers: dict[int, type]
    plain_callables: dict[int, Any]
    #: the cell's lines about porter itself (`Recorder.warnings`)
    warnings: list[str]

    #: provided by `Recorder`: report porter's own failure, fill a call's record slot
    _internal: Callable[[BaseException], None]
    _fill: Callable[[int | None, Any], None]

    # -- what a callable is ------------------------------------------------------------
    def _kind(self, f: Any) -> tuple:
        """(kind, callee, self object, forced status) of a callable, cached per cell."""
        t = type(f)
        if t is _BUILTIN_METHOD or t is _METHOD:
            s = f.__self__
            if s is not None and not isinstance(s, _MODULE):
                st = type(s)
                key = (st, f.__name__)
                try:
                    hit = self._method_kinds.get(key)
                except Exception:  # noqa: BLE001 (the person's type cannot be hashed)
                    hit, key = None, None
                if hit is None:
                    hit = self._method_kind(s, f)
                    if key is not None:
                        self._method_kinds[key] = hit
                # hit[2]: whether the receiver is the call's array (not kept in the cache)
                return (hit[0], hit[1], s if hit[2] else None, hit[3])
        elif t in _WRAPPERS:
            kind, callee, s, _ = self._kind(f.__wrapped__)
            forced = "acknowledged" if t is AcknowledgedFunction else None
            return (_ARRAY if callee is not None else kind, callee, s, forced)
        hit = self._callables.get(id(f))
        if hit is not None and hit[0] is f:
            return hit[1]
        if f is float or f is int or f is bool or f is complex:
            kind = (
                _MAYBE,
                Callee("builtins", "function", HOST_BUILTINS[f], HOST_BUILTINS[f]),
                None,
                "host_sync",
            )
        elif (t is type or t is _BUILTIN_FUNCTION) and f in PROTOCOL_BUILTINS:
            name = PROTOCOL_BUILTINS[f]
            kind = (_MAYBE, Callee("builtins", "function", name, name), None, "protocol")
        elif (compiled := compiled_callee(f)) is not None:
            kind = (_ARRAY, compiled, None, COMPILED)  # recorded as one call: compilers.py
        elif person_code.persons(f):  # the person's code written elsewhere: recorded
            person_code.arm_now(f, self.warnings)
            kind = (_PLAIN, None, None, None)
        else:
            person_code.tell_linked_out(f, self.warnings)
            callee = resolve_function(f)
            if callee is None:
                kind = (_PLAIN, None, None, None)
            elif callee.library in _CHECKED or callee.kind == "transformation":
                kind = (_ARRAY, callee, None, None)
            else:
                kind = (_MAYBE, callee, None, None)
        if len(self._callables) > _CACHE_LIMIT:
            self._callables.clear()
        self._callables[id(f)] = (f, kind)
        return kind

    def _method_kind(self, s: Any, f: Any) -> tuple:
        compiled = compiled_callee(f) if type(f) is _METHOD else None
        if compiled is not None:  # a method torch.compile made (compilers.py)
            return (_ARRAY, compiled, False, COMPILED)
        backend = backend_of(s)
        if backend is not None:
            key = (type(s), f.__name__)
            callee = _methods.get(key, _MISSING)
            if callee is _MISSING:
                callee = _methods[key] = method_callee(s, f)
            return (
                (_ARRAY, callee, True, None) if callee is not None else (_PLAIN, None, None, None)
            )
        if type(f) is _METHOD and person_code.persons(f):  # a method of the person's
            person_code.arm_now(f, self.warnings)
            return (_PLAIN, None, None, None)
        owner = resolve_function(s) if callable(s) and not isinstance(s, type) else None
        if owner is not None and owner.library in _ARRAY_LIBRARIES:
            return (_ARRAY, ufunc_method_callee(owner, f), None, None)
        bound = indexed_callee(f)  # np.random.choice: the global generator's method
        if bound is not None and bound.library in _ARRAY_LIBRARIES:
            return (_ARRAY, bound, None, None)
        callee = library_method_callee(s, f)
        if callee is not None:
            return (_MAYBE, callee, None, None)
        return (_PLAIN, None, None, None)

    def plain(self, site: CallSite, f: Any) -> bool:
        """Whether ``f`` at ``site`` is plain Python (then remembered in the site's slot,
        so that its next calls skip the hook)."""
        try:
            kind, callee, self_obj, forced = self._kind(f)
            if kind == _ARRAY and forced is None:
                if self_obj is not None:  # a method of an array: by the array's type
                    ARRAY_RECEIVERS[id(type(self_obj))] = type(self_obj)
                elif type(f) is not _METHOD and type(f) is not _BUILTIN_METHOD:
                    ARRAY_CALLABLES[id(f)] = f
            if kind != _PLAIN:
                return False
            shape = site.shape
            if type(f) is _METHOD or type(f) is _BUILTIN_METHOD:
                s = f.__self__
                # a receiver whose every method is plain Python: not a module (whose
                # functions differ), nor a callable (np.add.reduce is a ufunc's method)
                if s is not None and not isinstance(s, _MODULE | type) and not callable(s):
                    self.plain_receivers[id(type(s))] = type(s)
                    if shape == METHOD_SITE:
                        self._fill(site.slot, type(s))
                    return True
            else:
                self.plain_callables[id(f)] = f
            if shape == NAME_SITE:
                self._fill(site.slot, f)
        except Exception as exc:  # porter's fault: the call goes on unrecorded
            self._internal(exc)
        return True

    # -- array calls -------------------------------------------------------------------
