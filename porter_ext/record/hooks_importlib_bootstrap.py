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

A hook's first argument is its site (`porter_ext.record.sites`): a constant of the code
porter compiles, or read from `SITES` by code that IPython compiles from a rewritten tree
(``%port on``, ``%time`` lines), whose constants can only be plain tuples.
"""

from __future__ import annotations

import _thread
import functools
import sys
import types
import warnings
from typing import TYPE_CHECKING, Any

from porter_ext.backends.registry import BY_TYPE
from porter_ext.record.operator_names import OPERATORS
from porter_ext.record.sites import OperationSite, Site
from porter_ext.record.values import NO_SELF as _NO_SELF

if TYPE_CHECKING:
    from porter_ext.record.recorder import Recorder

PRE_HOOK = "__porter_pre__"
CALL_HOOK = "__porter_call__"
OP_HOOK = "__porter_op__"
GETITEM_HOOK = "__porter_getitem__"
SETITEM_HOOK = "__porter_setitem__"
IOP_HOOK = "__porter_iop__"
AUGITEM_HOOK = "__porter_augitem__"
ATTR_HOOK = "__porter_attr__"
SLOTS_NAME = "__porter_slots__"
SITES_NAME = "__porter_sites__"
TYPE_NAME = "__porter_type__"
SLICE_NAME = "__porter_slice__"
#: the builtin ``iter``, called through the call hook on what a ``for`` loop iterates over
ITER_NAME = "__porter_iter__"
#: called at each recorded iteration of a loop (see `Recorder.iteration`)
LOOP_HOOK = "__porter_loop__"
HOOK_NAMES = (
    PRE_HOOK,
    CALL_HOOK,
    OP_HOOK,
    AUGITEM_HOOK,
    GETITEM_HOOK,
    SETITEM_HOOK,
    IOP_HOOK,
    ATTR_HOOK,
    SLOTS_NAME,
    SITES_NAME,
    TYPE_NAME,
    SLICE_NAME,
    ITER_NAME,
    LOOP_HOOK,
)

#: ``SLOTS[0]`` is true while nothing records; every other slot belongs to one site of a
#: rewritten cell and holds what that site has only ever seen as plain Python (a callee,
#: a receiver's or operand's type) during the cell being recorded, else None. The active
#: recorder clears the slots it filled when it stops, so no person's object outlives it.
SLOTS: list[Any] = [True]
#: the sites of rewritten trees compiled elsewhere (`transformer.transform`: IPython
#: compiles them), which their code reads by index (``__porter_sites__[k]``). Kept, like
#: the slots, for as long as the process runs (the code may run again).
SITES: list[Site] = []


class _State:
    """The recorder that records now (one at a time), read by every hook."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active: Recorder | None = None


STATE = _State()
_UNARY = object()


#: what the recording cell found plain, by id (identity checks: a type's ``__hash__``
#: never runs): receiver types whose methods are all plain Python, and plain callables.
#: Filled by the active recorder, cleared when it stops.
PLAIN_RECEIVERS: dict[int, type] = {}
PLAIN_CALLABLES: dict[int, Any] = {}
#: the same for array calls: array types (whose methods are recorded) and array functions
ARRAY_RECEIVERS: dict[int, type] = {}
ARRAY_CALLABLES: dict[int, Any] = {}


#: Python's own value types: never arrays (a set lookup settles them)
_BUILTIN_VALUES = frozenset(
    {int, float, bool, complex, str, bytes, list, tuple, dict, set, frozenset, type(None), range}
)


def _internal(frame: types.FrameType) -> bool:
    """A frame CPython's warnings skip when they count ``stacklevel`` (importlib's own,
    and porter's hooks: this file's name holds both words)."""
    name = frame.f_code.co_filename
    return "importlib" in name and "_bootstrap" in name


def _stacklevel_from(hook: types.FrameType, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``warnings.warn``'s arguments, its ``stacklevel`` made to count from the person's
    frame that called it through the hook frame ``hook``: warn sees the hook as its
    caller, and from a frame of that kind it walks back frame by frame without skipping
    porter's. The frame the person meant (``stacklevel`` frames up, porter's skipped as
    CPython skips importlib's) is counted here in raw frames from ``hook``."""
    given = kwargs.get("stacklevel", args[2] if len(args) > 2 else 1)
    if type(given) is not int:
        return args, kwargs
    frame, steps = hook.f_back, 1
    for _ in range(given - 1):
        if frame is None:
            break
        frame, steps = frame.f_back, steps + 1
        while frame is not None and _internal(frame):
            frame, steps = frame.f_back, steps + 1
    if len(args) > 2:
        return (*args[:2], steps + 1, *args[3:]), kwargs
    return args, {**kwargs, "stacklevel": steps + 1}


def _hooks() -> dict[str, types.FunctionType]:
    state = STATE
    ident = _thread.get_ident
    partial = functools.partial
    base = BaseException
    # what a guard or a fast path may raise on an odd value (the careful path decides);
    # not the person's Ctrl-C, which goes through to their cell
    failure = Exception
    ops = OPERATORS
    unary = _UNARY
    builtin_method = types.BuiltinMethodType
    python_method = types.MethodType
    receivers = PLAIN_RECEIVERS
    callables = PLAIN_CALLABLES
    array_receivers = ARRAY_RECEIVERS
    array_callables = ARRAY_CALLABLES
    by_type = BY_TYPE.get
    missing = _UNARY  # never a value of BY_TYPE
    type_ = type
    id_ = id
    getattr_ = getattr
    builtin_values = _BUILTIN_VALUES
    no_self = _NO_SELF
    warn = warnings.warn
    getframe = sys._getframe
    stacklevel_from = _stacklevel_from
    operation_site = OperationSite

    def count(rec, bucket, din, out, site):
        """Count a fast-path call, operator or index whose output is an array, and give
        the output back (another output: the recorder reads it carefully)."""
        try:
            backend = by_type(type_(out), missing)
        except failure:  # noqa: BLE001 (an odd output: the recorder reads it carefully)
            backend = None
        if backend is None or backend is missing:
            return rec.after((bucket, din, None, site), out)
        device = backend.fixed_device
        if device is None:
            quick = backend.quick_device
            device = (
                quick[1]
                if quick is not None and getattr_(out, quick[0])
                else backend.device_of(out)
            )
        key = (din, device)
        bucket[key] = bucket.get(key, 0) + 1
        return out

    def pre(site, f, call=None):
        """A call's callee: itself for a plain call, else a recording wrapper (``call``:
        this namespace's copy of the call hook, set by `bind`)."""
        __tracebackhide__ = True  # noqa: F841 (read by IPython's traceback formatter)
        t = type_(f)
        if t is builtin_method or t is python_method:
            receiver = type_(f.__self__)
            if receivers.get(id_(receiver)) is receiver:
                return f
            if array_receivers.get(id_(receiver)) is receiver:
                return partial(call, site, f)
        elif callables.get(id_(f)) is f:
            return f
        elif array_callables.get(id_(f)) is f:
            return partial(call, site, f)
        rec = state.active
        if rec is None or rec.thread != ident() or rec.plain(site, f):
            return f
        return partial(call, site, f)

    def call(site, f, /, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841
        rec = state.active
        if rec is None or rec.thread != ident():
            return f(*args, **kwargs)
        din = None
        fast = rec.fast_calls.get(site.slot)
        # (a slot is shared by the copies of a cell run again: the site decides)
        if fast is not None and fast[4] is site:
            # the fast path (see Recorder.before and guards.py): the call made the same
            # way as before: read the devices, count, nothing else
            try:
                if fast[0] is f:
                    din = fast[1](no_self, args, kwargs)
                elif fast[5] is not None and (
                    # the first call's bound method (the same receiver: C's own compare)
                    (type_(f) is builtin_method and f == fast[6])
                    or (
                        (type_(f) is builtin_method or type_(f) is python_method)
                        and type_(f.__self__) is fast[0]
                        and f.__name__ == fast[5]
                    )
                ):
                    din = fast[1](f.__self__, args, kwargs)
            except failure:  # noqa: BLE001 (an odd argument: the careful path decides)
                din = None
        if din is not None:
            bucket, run, plan = fast[2], fast[3], None
        else:
            # plain Python: known by its receiver's type or itself, else found now
            t = type_(f)
            if t is builtin_method or t is python_method:
                receiver = type_(f.__self__)
                if receivers.get(id_(receiver)) is receiver:
                    return f(*args, **kwargs)
            elif callables.get(id_(f)) is f:
                return f(*args, **kwargs)
            if rec.plain(site, f):
                if f is warn:  # counted from the person's frame, not this one
                    args, kwargs = stacklevel_from(getframe(0), args, kwargs)
                return f(*args, **kwargs)  # (its slot, if it has one, now filled)
            token = rec.before(site, f, args, kwargs)  # strict mode raises here
            if token is None:
                return f(*args, **kwargs)
            bucket, din, plan = token[0], token[1], token[2]
            run = rec.runner(token, "call")
        try:
            out = run(f, args, kwargs)
        except base as exc:
            rec.failed((bucket, din, plan, site), exc)
            raise
        if plan is None:  # a fast-path call, counted here
            return count(rec, bucket, din, out, site)
        return rec.after((bucket, din, plan, site), out)

    def op(site, name, a, b=unary):
        __tracebackhide__ = True  # noqa: F841
        # values whose type no library owns (cached by type): applied at once. A type
        # whose __hash__ raises takes the careful path below.
        ta = type_(a)
        tb = type_(b)
        try:  # operands read once (no slots to fill): settled here
            plain = (
                not site.slots
                and (ta in builtin_values or by_type(ta, missing) is None)
                and (b is unary or tb in builtin_values or by_type(tb, missing) is None)
            )
        except failure:
            plain = False
        if plain:
            return ops[name](a) if b is unary else ops[name](a, b)
        rec = state.active
        if rec is None or rec.thread != ident():
            return ops[name](a) if b is unary else ops[name](a, b)
        din = None
        fast = rec.fast_ops.get(site.key)
        # (a key is shared by the copies of a cell run again: the site decides)
        if fast is not None and (fast[4] is site or fast[4] == site):
            # the fast path (see Recorder.operation and guards.py): the operand types and
            # dtypes of before: read the devices, count, nothing else
            try:
                din = fast[0](a, b)
            except failure:  # noqa: BLE001 (an odd operand: the careful path decides)
                din = None
        if din is None:
            token = rec.operation(site, name, a, b)
            if token is None:
                return ops[name](a) if b is unary else ops[name](a, b)
            bucket, din = token[0], token[1]
            fast = rec.fast_ops.get(site.key)
        else:
            bucket = fast[1]
        try:
            if fast is None:  # no fast path here (porter failed to make one): as Python does
                out = rec.runner((bucket, din, None, site), "one" if b is unary else "two")(
                    ops[name], a, b
                )
            elif fast[3]:
                # the operands leave this frame in a list the runner empties, so an
                # operand the cell computed is referenced once when the operator runs:
                # NumPy then reuses its buffer (temporary elision) as without porter
                box = [a] if b is unary else [b, a]
                del a, b
                out = fast[2](box, None, None)
            else:
                out = fast[2](a, b, None)
        except base as exc:
            rec.failed((bucket, din, None, site), exc)
            raise
        return count(rec, bucket, din, out, site)

    def iop(site, name, a, b, op=None):
        __tracebackhide__ = True  # noqa: F841
        return op(site, name, a, b)

    def augitem(site, name, x, key, item, value, op=None, setitem=None):
        """``x[key] op= value``, given ``item``: ``x[key]`` as the getitem hook read it
        (before ``value`` was evaluated, as Python reads it): the in-place operator and
        the write, each recorded as itself (``op``, ``setitem``: this namespace's hooks).
        Eight parameters by reason: the six the rewritten code passes positionally and
        the two hooks `bind` sets as defaults; a hook runs per operation, so no object
        is built to carry them."""
        __tracebackhide__ = True  # noqa: F841
        rec = state.active
        if rec is not None and rec.thread == ident():
            # an array: the read's guard accepts it again, or the recorder says so (and
            # fills the slot of a plain one)
            fast = rec.fast_gets.get(site.key)
            try:
                known = fast is not None and fast[3] is site and fast[0](x, key) is not None
            except failure:  # noqa: BLE001 (an odd operand: the careful path decides)
                known = False
            if not known and rec.operation(site, "__getitem__", x, key) is None:
                x[key] = ops[name](item, value)
                return
            cell, line, col, key_, end_line, end_col = (
                site.cell,
                site.line,
                site.col,
                site.key,
                site.end_line,
                site.end_col,
            )
            item = op(
                operation_site(cell, line, col, name, (), key_, end_line, end_col),
                name,
                item,
                value,
            )
            setitem(
                operation_site(cell, line, col, "__setitem__", (), key_, end_line, end_col),
                item,
                x,
                key,
            )
            return
        x[key] = ops[name](item, value)

    def getitem(site, x, key):
        __tracebackhide__ = True  # noqa: F841
        try:  # operands read once (no slots to fill): settled here
            plain = not site.slots and by_type(type_(x), missing) is None
        except failure:
            plain = False
        if plain:
            return x[key]
        rec = state.active
        if rec is None or rec.thread != ident():
            return x[key]
        din = None
        fast = rec.fast_gets.get(site.key)
        if fast is not None and (fast[3] is site or fast[3] == site):
            # the fast path (see Recorder.operation and guards.py): an array and an index
            # of the kinds of before: read the devices, count, nothing else
            try:
                din = fast[0](x, key)
            except failure:  # noqa: BLE001 (an odd operand: the careful path decides)
                din = None
        if din is None:
            token = rec.operation(site, "__getitem__", x, key)
            if token is None:
                return x[key]
            bucket, din = token[0], token[1]
            run = rec.runner(token, "get")
        else:
            bucket, run = fast[1], fast[2]
        try:
            out = run(x, key, None)
        except base as exc:
            rec.failed((bucket, din, None, site), exc)
            raise
        return count(rec, bucket, din, out, site)

    def setitem(site, value, x, key):
        __tracebackhide__ = True  # noqa: F841
        try:  # operands read once (no slots to fill): settled here
            plain = not site.slots and by_type(type_(x), missing) is None
        except failure:
            plain = False
        if plain:
            x[key] = value
            return
        rec = state.active
        if rec is None or rec.thread != ident():
            x[key] = value
            return
        din = None
        fast = rec.fast_sets.get(site.key)
        if fast is not None and (fast[3] is site or fast[3] == site):
            try:  # the fast path, as in `getitem`
                din = fast[0](x, key, value)
            except failure:  # noqa: BLE001 (an odd operand: the careful path decides)
                din = None
        if din is None:
            token = rec.operation(site, "__setitem__", x, key, value)
            if token is None:
                x[key] = value
                return
            bucket, din = token[0], token[1]
            run = rec.runner(token, "set")
        else:
            bucket, run = fast[1], fast[2]
        try:
            run(x, key, value)
        except base as exc:
            rec.failed((bucket, din, None, site), exc)
            raise
        counts = (din, None)  # what `Recorder.after` counts for a write
        bucket[counts] = bucket.get(counts, 0) + 1

    def attr(site, obj, name):
        __tracebackhide__ = True  # noqa: F841
        try:  # operands read once (no slots to fill): settled here
            plain = not site.slots and by_type(type_(obj), missing) is None
        except failure:
            plain = False
        if plain:
            return getattr_(obj, name)
        rec = state.active
        if rec is None or rec.thread != ident():
            return getattr_(obj, name)
        token = rec.operation(site, name, obj, unary)
        if token is None:
            return getattr_(obj, name)
        try:
            out = rec.runner(token, "two")(getattr_, obj, name)
        except base as exc:
            rec.failed(token, exc)
            raise
        return rec.after(token, out)

    def loop(site):
        rec = state.active
        if rec is not None and rec.thread == ident():
            rec.iteration(site)

    return {
        LOOP_HOOK: loop,
        PRE_HOOK: pre,
        CALL_HOOK: call,
        OP_HOOK: op,
        IOP_HOOK: iop,
        GETITEM_HOOK: getitem,
        AUGITEM_HOOK: augitem,
        SETITEM_HOOK: setitem,
        ATTR_HOOK: attr,
    }


_PROTOTYPES = _hooks()

UNARY = _UNARY


def bind(namespace: dict) -> None:
    """Put the hooks where rewritten code looks them up, as functions whose globals are
    ``namespace`` (see the module doc). The copies share their closures."""
    if namespace.get(SLOTS_NAME) is SLOTS and PRE_HOOK in namespace:
        return
    bound: dict[str, types.FunctionType] = {}
    order = (
        CALL_HOOK,
        OP_HOOK,
        GETITEM_HOOK,
        SETITEM_HOOK,
        ATTR_HOOK,
        PRE_HOOK,
        IOP_HOOK,
        LOOP_HOOK,
    )
    for name in (*order, AUGITEM_HOOK):
        proto = _PROTOTYPES[name]
        defaults = proto.__defaults__
        if name == PRE_HOOK:  # the wrapper it hands out is this namespace's call hook
            defaults = (bound[CALL_HOOK],)
        elif name == IOP_HOOK:
            defaults = (bound[OP_HOOK],)
        elif name == AUGITEM_HOOK:
            defaults = (bound[OP_HOOK], bound[SETITEM_HOOK])
        bound[name] = types.FunctionType(
            proto.__code__, namespace, proto.__name__, defaults, proto.__closure__
        )
    for name in (*order, AUGITEM_HOOK):
        namespace[name] = bound[name]
    namespace[SLOTS_NAME] = SLOTS
    namespace[SITES_NAME] = SITES
    namespace[TYPE_NAME] = type
    namespace[SLICE_NAME] = slice
    namespace[ITER_NAME] = iter
