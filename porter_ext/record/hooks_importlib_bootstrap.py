"""The functions a recorded cell's rewritten code calls (see ``transformer.py``).

Three rules keep the person's cell as it is without porter:

- The file name holds ``importlib`` and ``_bootstrap``: CPython's warnings machinery skips
  such frames when it counts a warning's ``stacklevel`` (that is how importlib hides its
  own), so ``warnings.warn(..., stacklevel=2)`` in a function the cell calls through a
  hook still points at the cell's line.
- Each namespace gets its own copy of the hooks (`bind`), whose globals are that
  namespace: code that reads its caller's module (``collections.namedtuple``,
  ``enum.Enum``, ``typing.TypeVar``) sees the person's module. The hooks therefore read
  nothing from their globals: everything they use is a closure variable.
- Every hook frame sets ``__tracebackhide__``, so IPython's tracebacks skip it, and an
  exception of the person's call is re-raised as it is (bookkeeping never replaces it).

Only the thread that started recording is recorded: calls from other threads (functions
of a recorded cell run by a thread pool) go straight through.
"""

from __future__ import annotations

import _thread
import functools
import operator
import types
from typing import Any

PRE_HOOK = "__porter_pre__"
OP_HOOK = "__porter_op__"
GETITEM_HOOK = "__porter_getitem__"
SETITEM_HOOK = "__porter_setitem__"
IOP_HOOK = "__porter_iop__"
ATTR_HOOK = "__porter_attr__"
SLOTS_NAME = "__porter_slots__"
TYPE_NAME = "__porter_type__"
SLICE_NAME = "__porter_slice__"
HOOK_NAMES = (
    PRE_HOOK, OP_HOOK, GETITEM_HOOK, SETITEM_HOOK, IOP_HOOK, ATTR_HOOK, SLOTS_NAME,
    TYPE_NAME, SLICE_NAME,
)  # fmt: skip

#: ``SLOTS[0]`` is true while nothing records; every other slot belongs to one site of a
#: rewritten cell and holds what that site has only ever seen as plain Python (a callee,
#: a receiver's or operand's type) during the cell being recorded, else None. The active
#: recorder clears the slots it filled when it stops, so no person's object outlives it.
SLOTS: list[Any] = [True]

#: operator name → the function that applies it (with Python's reflected fallbacks)
OPERATORS: dict[str, Any] = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
    "__truediv__": operator.truediv, "__floordiv__": operator.floordiv,
    "__mod__": operator.mod, "__pow__": operator.pow, "__matmul__": operator.matmul,
    "__and__": operator.and_, "__or__": operator.or_, "__xor__": operator.xor,
    "__lshift__": operator.lshift, "__rshift__": operator.rshift,
    "__iadd__": operator.iadd, "__isub__": operator.isub, "__imul__": operator.imul,
    "__itruediv__": operator.itruediv, "__ifloordiv__": operator.ifloordiv,
    "__imod__": operator.imod, "__ipow__": operator.ipow, "__imatmul__": operator.imatmul,
    "__iand__": operator.iand, "__ior__": operator.ior, "__ixor__": operator.ixor,
    "__ilshift__": operator.ilshift, "__irshift__": operator.irshift,
    "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt,
    "__ge__": operator.ge, "__eq__": operator.eq, "__ne__": operator.ne,
    "__neg__": operator.neg, "__pos__": operator.pos, "__invert__": operator.invert,
}  # fmt: skip


class _State:
    """The recorder that records now (one at a time), read by every hook."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active: Any = None


STATE = _State()
_UNARY = object()


def _hooks() -> dict[str, types.FunctionType]:
    state = STATE
    ident = _thread.get_ident
    partial = functools.partial
    base = BaseException
    ops = OPERATORS
    unary = _UNARY

    def pre(site, f, call=None):
        """A call's callee: itself for a plain call, else a recording wrapper (``call``:
        this namespace's copy of the call hook, set by `bind`)."""
        __tracebackhide__ = True  # noqa: F841 (read by IPython's traceback formatter)
        rec = state.active
        if rec is None or rec.thread != ident() or rec.plain(site, f):
            return f
        return partial(call, site, f)

    def call(site, f, /, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841
        rec = state.active
        if rec is None or rec.thread != ident():
            return f(*args, **kwargs)
        token = rec.fast(site, f, args, kwargs)
        if token is None:
            token = rec.before(site, f, args, kwargs)  # strict mode raises here
            if token is None:
                return f(*args, **kwargs)
        run = rec.runner(token, "call")
        try:
            out = run(f, args, kwargs)
        except base as exc:
            rec.failed(token, exc)
            raise
        return rec.after(token, out)

    def op(site, name, a, b=unary):
        __tracebackhide__ = True  # noqa: F841
        rec = state.active
        fn = ops[name]
        if rec is None or rec.thread != ident():
            return fn(a) if b is unary else fn(a, b)
        token = rec.operation(site, name, a, b)
        if token is None:
            return fn(a) if b is unary else fn(a, b)
        try:
            if b is unary:
                out = rec.runner(token, "one")(fn, a, None)
            else:
                out = rec.runner(token, "two")(fn, a, b)
        except base as exc:
            rec.failed(token, exc)
            raise
        return rec.after(token, out)

    def iop(site, name, a, b, op=None):
        __tracebackhide__ = True  # noqa: F841
        return op(site, name, a, b)

    def getitem(site, x, key):
        __tracebackhide__ = True  # noqa: F841
        rec = state.active
        if rec is None or rec.thread != ident():
            return x[key]
        token = rec.operation(site, "__getitem__", x, key)
        if token is None:
            return x[key]
        try:
            out = rec.runner(token, "get")(x, key, None)
        except base as exc:
            rec.failed(token, exc)
            raise
        return rec.after(token, out)

    def setitem(site, value, x, key):
        __tracebackhide__ = True  # noqa: F841
        rec = state.active
        if rec is None or rec.thread != ident():
            x[key] = value
            return
        token = rec.operation(site, "__setitem__", x, key, value)
        if token is None:
            x[key] = value
            return
        try:
            rec.runner(token, "set")(x, key, value)
        except base as exc:
            rec.failed(token, exc)
            raise
        rec.after(token, None)

    def attr(site, obj, name):
        __tracebackhide__ = True  # noqa: F841
        rec = state.active
        if rec is None or rec.thread != ident():
            return getattr(obj, name)
        token = rec.operation(site, name, obj, unary)
        if token is None:
            return getattr(obj, name)
        try:
            out = rec.runner(token, "two")(getattr, obj, name)
        except base as exc:
            rec.failed(token, exc)
            raise
        return rec.after(token, out)

    return {
        PRE_HOOK: pre,
        "call": call,
        OP_HOOK: op,
        IOP_HOOK: iop,
        GETITEM_HOOK: getitem,
        SETITEM_HOOK: setitem,
        ATTR_HOOK: attr,
    }


_PROTOTYPES = _hooks()

#: what a runner does with its three arguments (see `Recorder.runner`)
RUNNERS = {
    "call": "return a(*b, **c)",
    "two": "return a(b, c)",
    "one": "return a(b)",
    "get": "return a[b]",
    "set": "a[b] = c",
}


def _fallback(body: str) -> types.FunctionType:
    namespace: dict = {}
    source = f"def __porter_run__(a, b, c):\n    __tracebackhide__ = True\n    {body}\n"
    exec(compile(source, __file__, "exec"), namespace)
    return namespace["__porter_run__"]


#: runners for sites whose cell file is unknown: their frames are hidden like the hooks'
FALLBACK_RUNNERS = {name: _fallback(body) for name, body in RUNNERS.items()}
UNARY = _UNARY


def bind(namespace: dict) -> None:
    """Put the hooks where rewritten code looks them up, as functions whose globals are
    ``namespace`` (see the module doc). The copies share their closures."""
    if namespace.get(SLOTS_NAME) is SLOTS and PRE_HOOK in namespace:
        return
    bound: dict[str, types.FunctionType] = {}
    for name in ("call", OP_HOOK, GETITEM_HOOK, SETITEM_HOOK, ATTR_HOOK, PRE_HOOK, IOP_HOOK):
        proto = _PROTOTYPES[name]
        defaults = proto.__defaults__
        if name == PRE_HOOK:  # the wrapper it hands out is this namespace's call hook
            defaults = (bound["call"],)
        elif name == IOP_HOOK:
            defaults = (bound[OP_HOOK],)
        bound[name] = types.FunctionType(
            proto.__code__, namespace, proto.__name__, defaults, proto.__closure__
        )
    for name in (PRE_HOOK, OP_HOOK, IOP_HOOK, GETITEM_HOOK, SETITEM_HOOK, ATTR_HOOK):
        namespace[name] = bound[name]
    namespace[SLOTS_NAME] = SLOTS
    namespace[TYPE_NAME] = type
    namespace[SLICE_NAME] = slice
