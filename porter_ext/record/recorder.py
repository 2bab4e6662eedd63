"""The recorder: sees every array call, operator and index of a recorded cell, classifies
it, reads its devices.

The rewritten cell reaches it through the hooks (``hooks_importlib_bootstrap.py``):
`Recorder.plain` tells a plain Python call (then called directly, and remembered in its
site's slot), `fast`/`before`/`after` record an array call, `operation` an operator,
index or attribute (``operations.py``). The person's call runs exactly once, in a hook frame or their own,
and nothing porter does can break it: an internal error is kept as a warning, and the
call's own exception is re-raised as it is.

Nothing the recorder keeps outlives its cell except library facts (callees of array
namespaces, verdicts): callables, objects and types of the person are held only in the
recorder's own per-cell caches and in the slots it clears when it stops.
"""

from __future__ import annotations

import _thread
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from porter_ext.backends.registry import forget_foreign_types
from porter_ext.guard import internal_error
from porter_ext.record.classify import Verdict
from porter_ext.record.compilers import COMPILED, CellCode, CompiledCallee, runner_as_written
from porter_ext.record.guards import call_guard
from porter_ext.record.hooks_importlib_bootstrap import (
    ARRAY_CALLABLES,
    ARRAY_RECEIVERS,
    PLAIN_CALLABLES,
    PLAIN_RECEIVERS,
    SLOTS,
    STATE,
    bind,
)
from porter_ext.record.kinds import _MAYBE, WRAPPERS, CallableKinds
from porter_ext.record.kinds import methods as _methods
from porter_ext.record.memo import library_fact, recall_call, remember_call
from porter_ext.record.operations import STRICT_RAISES, Operations
from porter_ext.record.resolve import Callee
from porter_ext.record.runners import FILENAMES, Runner, compile_runner
from porter_ext.record.sites import CallSite, LoopSite, Place
from porter_ext.record.strict import (
    NamespaceView,
    NonStandardError,
    RejectedFunction,
    StandardFunction,
    recorded_namespace,
)
from porter_ext.record.values import NO_SELF as _NO_SELF
from porter_ext.record.values import (
    backend_of,
    device_out,
    devices_in,
    read_into,
)
from porter_ext.record.verdicts import Verdicts, alias, host_callee, strict_error
from porter_ext.spec.standard import DEFAULT_VERSION, standard

_MODULE = types.ModuleType
_NAMESPACE_CALLS = frozenset({"array_namespace", "__array_namespace__"})
_BOUND = (types.BuiltinMethodType, types.MethodType)


def clear_caches() -> None:
    """Forget every process-wide fact the recorder learnt (callees, verdicts)."""
    from porter_ext.record import compiled, memo, operations, resolve, verdicts

    compiled.clear()
    memo.clear()
    verdicts.clear()
    for cache in (_methods, operations.attributes):
        cache.clear()
    resolve.clear_caches()


class Recorder(CallableKinds, Operations, Verdicts):
    """Records the array calls of one cell run. Use `activate` around the run."""

    def __init__(
        self,
        *,
        strict: bool = False,
        version: str = DEFAULT_VERSION,
        cell: int | str | None = None,
        loop_sample: int = 0,
    ):
        self.strict = strict
        #: see `RecordSettings.loop_sample`; per loop slot: [records seen, iterations since]
        self.loop_sample = loop_sample
        self._loops: dict[int, list[int]] = {}
        self.sampled_loops: list[LoopSite] = []
        self.version = version
        self.cell = cell
        self.standard = standard(version)
        self.thread: int | None = None
        #: (site, callee, verdict, keyword names) → {(devices_in, device_out): count}
        self._buckets: dict[tuple, dict] = {}
        self._callers: dict[Place, tuple[int, int, int, int] | None] = {}
        #: slot → (function or array type, guard, bucket, runner, site, method name, the
        #: first bound method): the hook's fast path for calls made the same way again
        #: (guards.py)
        self.fast_calls: dict[int, tuple] = {}
        self._verdicts: dict[tuple, Verdict] = {}
        self._interned: dict[tuple, Verdict] = {}
        self._entries: dict[Callee, tuple] = {}
        #: per cell: id(callable) → (callable, kind, callee); (type, name) → kind of methods
        self._callables: dict[int, tuple] = {}
        self._method_kinds: dict[tuple, tuple] = {}
        self._op_verdicts: dict[tuple, tuple] = {}
        #: site key → (guard, bucket, runner, whether the operands are handed over in a
        #: list, site) for operators
        self.fast_ops: dict[int, tuple] = {}
        #: site key → (guard, bucket, runner, site) for reads and writes of an index
        self.fast_gets: dict[int, tuple] = {}
        self.fast_sets: dict[int, tuple] = {}
        self._filled: list[int] = []
        #: per cell: id → object found plain (receiver types, callables), read by the hook
        self.plain_receivers = PLAIN_RECEIVERS
        self.plain_callables = PLAIN_CALLABLES
        self._runners: dict[tuple, Runner] = {}
        #: the namespace the cell runs in (the globals of the runners)
        self.namespace: dict | None = None
        #: how the cell was compiled: what gives the functions it made their plain code
        #: for a call of a compiled callable (compilers.py)
        self.cell_code: CellCode | None = None
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
        """Record from now on, in this thread (``%port on`` starts in one IPython event,
        stops in another)."""
        self.thread = _thread.get_ident()
        self._previous, STATE.active = STATE.active, self
        SLOTS[0] = False

    def stop(self) -> None:
        STATE.active = self._previous
        SLOTS[0] = self._previous is None
        for slot in self._filled:
            SLOTS[slot] = None
        self._filled.clear()
        self._loops.clear()
        # nothing of the person's outlives the cell
        self._callables.clear()
        self._method_kinds.clear()
        self.fast_calls.clear()
        self.fast_ops.clear()
        self.fast_gets.clear()
        self.fast_sets.clear()
        self._runners.clear()
        self.plain_receivers.clear()
        self.plain_callables.clear()
        ARRAY_RECEIVERS.clear()
        ARRAY_CALLABLES.clear()
        forget_foreign_types()

    def _internal(self, exc: BaseException) -> None:
        """porter's own failure while recording, through the one guard (`internal_error`):
        a warning the person sees once, the cell running unchanged."""
        internal_error("recording the cell (it ran unchanged)", exc, self.warnings)

    def _fill(self, slot: int | None, value: Any) -> None:
        if slot is not None:
            SLOTS[slot] = value
            self._filled.append(slot)

    def iteration(self, site: LoopSite) -> None:
        """A loop of a rewritten cell starts an iteration. Once ``loop_sample`` iterations in a row recorded nothing new, the
        loop's slot is filled and its next iterations run the plain copy of its body."""
        if not self.loop_sample:
            return
        seen = len(self._buckets)
        state = self._loops.get(site.slot)
        if state is None or state[0] != seen:
            self._loops[site.slot] = [seen, 1]
            return
        state[1] += 1
        if state[1] > self.loop_sample:
            self._fill(site.slot, True)
            self.sampled_loops.append(site)

    def devices(self, values: Any) -> list[str]:
        """The devices of the arrays among ``values`` (the hook's fast path asks)."""
        out: list[str] = []
        read_into(values, out)
        return out

    def before(self, site: CallSite, f: Any, args: tuple, kwargs: dict) -> tuple | None:
        """Resolve, classify and remember a call; None for a call that is not recorded.
        Under strict checking, a call outside the standard raises here."""
        __tracebackhide__ = True  # noqa: F841 (read by IPython's traceback formatter)
        try:
            remembered = recall_call((site.slot, self.version))
            token = self._recalled(site, f, args, kwargs, remembered) if remembered else None
            if token is not None:
                return token
            kind, callee, self_obj, forced = self._kind(f)
            if callee is not None and kind == _MAYBE:
                if forced == "host_sync":
                    lib = backend_of(args[0]) if len(args) == 1 and not kwargs else None
                    callee = None if lib is None else host_callee(lib.name, callee.name)
                elif forced == "protocol":
                    callee = self._protocol_callee(callee, args, kwargs)
                elif not devices_in(args, kwargs):
                    callee = None  # another library's function, given no array
            if callee is None:
                return None
            spelled = site.spelled
            if (
                callee.kind == "function"
                and spelled is not None
                and not callee.name.endswith(spelled)
            ):
                callee = alias(callee, spelled, f.__wrapped__ if type(f) in WRAPPERS else f)
            verdict, shared = self._verdict(site, callee, args, kwargs, self_obj, forced)
            if shared is False:  # made for this call: equal ones merge into one bucket
                verdict = self._interned.setdefault(
                    (
                        callee,
                        verdict.status,
                        verdict.standard_name,
                        verdict.suggestion,
                        verdict.message,
                    ),
                    verdict,
                )
            bucket = self._bucket(site, callee, verdict, tuple(kwargs))
            token = (
                bucket,
                devices_in(args, kwargs, _NO_SELF if self_obj is None else self_obj),
                (site, callee, verdict, f, tuple(kwargs)),
                site,
            )
            if shared is not False and forced is None and callee.name not in _NAMESPACE_CALLS:
                # the hook's fast path: the same callee (or a method of the same array
                # type), argument types and keywords (and values, for a value-dependent
                # verdict) as this call: only devices are read (see guards.py)
                receiver = self_obj if callee.kind == "method" else _NO_SELF
                if callee.kind == "method":
                    entry = (type(self_obj), f.__name__)
                elif type(f) is not StandardFunction and backend_of(self_obj) is None:
                    entry = (f, None)
                else:
                    entry = None
                if entry is not None:
                    guard = call_guard(receiver, args, kwargs, shared is None)
                    run = self.runner(token, "call")
                    method = f if callee.kind == "method" else None
                    self.fast_calls[site.slot] = (
                        entry[0],
                        guard,
                        bucket,
                        run,
                        site,
                        entry[1],
                        method,
                    )
                    if guard.library_facts and library_fact(entry[0]):
                        remember_call(
                            (site.slot, self.version),
                            (*entry, guard, callee, verdict, tuple(kwargs)),
                        )
        except Exception as exc:  # porter's fault: never the person's
            self._internal(exc)
            return None
        if self.strict and verdict.status in STRICT_RAISES and type(f) is not RejectedFunction:
            self.after(token, None)
            raise strict_error(callee, verdict, site.line)
        return token

    def _protocol_callee(self, callee: Callee, args: tuple, kwargs: dict) -> Callee | None:
        """``len(x)`` of an array, or iterating over one of two or more axes
        (``enumerate(m)``, ``list(m)``): recorded under the array's library; a call on
        other values, or iterating over a 1-D array (which the standard's integer
        indexing spells), is plain Python."""
        if kwargs and callee.name != "enumerate":
            return None
        array = next((a for a in args if backend_of(a) is not None), None)
        if array is None or (callee.name != "len" and not _rows_are_partial(array)):
            return None
        return host_callee(backend_of(array).name, callee.name)

    def _recalled(
        self, site: CallSite, f: Any, args: tuple, kwargs: dict, memo: tuple
    ) -> tuple | None:
        """The token of a call its site's remembered guard accepts (memo.py), or None."""
        target, method, guard, callee, verdict, kwnames = memo
        if self.strict and verdict.status in STRICT_RAISES:
            return None  # the careful path raises
        if target is f:
            receiver = _NO_SELF
        elif (
            method is not None
            and type(f) in _BOUND
            and type(f.__self__) is target
            and f.__name__ == method
        ):
            receiver = f.__self__
        else:
            return None
        din = guard(receiver, args, kwargs)
        if din is None:
            return None
        bucket = self._bucket(site, callee, verdict, kwnames)
        token = (bucket, din, (site, callee, verdict, f, kwnames), site)
        run = self.runner(token, "call")
        self.fast_calls[site.slot] = (
            target,
            guard,
            bucket,
            run,
            site,
            method,
            f if method is not None else None,
        )
        return token

    def failed(self, token: tuple, exc: BaseException) -> None:
        """The call raised ``exc``: count it (the exception itself is the person's)."""
        try:
            bucket, din, plan, _ = token
            if plan is not None and isinstance(exc, NonStandardError):
                site, callee, verdict, f, kwnames = plan
                verdict = Verdict(
                    "non_standard" if type(f) is RejectedFunction else "non_standard_usage",
                    verdict.standard_name,
                    exc.suggestion or verdict.suggestion,
                    str(exc),
                )
                bucket = self._bucket(site, callee, verdict, kwnames)
                exc.at_line(site.line)
            key = (din, None)
            bucket[key] = bucket.get(key, 0) + 1
        except Exception as error:  # noqa: BLE001 (bookkeeping never replaces exc)
            self._internal(error)

    def after(self, token: tuple, out: Any) -> Any:
        try:
            bucket, din, plan, _ = token
            key = (din, device_out(out) if out is not None else None)
            bucket[key] = bucket.get(key, 0) + 1
            if (
                plan is not None
                and plan[1].name in _NAMESPACE_CALLS
                and isinstance(out, _MODULE | NamespaceView)
            ):
                out = recorded_namespace(out, strict=self.strict, version=self.version)
        except Exception as exc:
            self._internal(exc)
        return out

    def runner(self, token: tuple, template: str) -> Runner:
        """The function that performs a recorded operation, compiled as if it were the
        site's own line of the cell (its file and line number): a warning the library
        raises at its caller (NumPy's ``divide by zero``) points at the person's line."""
        site = token[3]
        plan = token[2]
        compiled = template == "call" and plan is not None and type(plan[1]) is CompiledCallee
        key = (site.cell, site.line, site.col, COMPILED if compiled else template)
        run = self._runners.get(key)
        if run is None:
            run = compile_runner(FILENAMES.get(site.cell), site.line, template, self.namespace)
            if compiled:  # the person's functions as written while it runs
                run = runner_as_written(self, run)
            self._runners[key] = run
        return run


def _rows_are_partial(array: Any) -> bool:
    ndim = getattr(array, "ndim", None)
    return type(ndim) is int and ndim >= 2


def install_hooks(namespace: dict) -> None:
    """Put the hooks where rewritten code looks them up."""
    bind(namespace)
