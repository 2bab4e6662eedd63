"""Guards: what a hook's fast path checks before it counts a call or an operator as the
recorder already judged it, generated for each site from its first recorded run.

A call at a site is counted without the recorder when it is made the same way again: the
same argument types and keyword names, the same values where the verdict read them
(arrays by type, dtype and rank, other values by identity), and then only the devices are
read. Written as one generic loop, these checks cost more than the recorder's whole
budget for a tiny call; generated as one expression for the site's shape (``type(y[0]) is
T0 and 'axis' in k and ...``), they cost a function call and a few attribute reads. The
code is compiled once per shape (a handful per session); each site gets a function
object whose globals hold its constants.

A guard returns the devices the arguments are on (what `values.devices_in` gives), or
None when the call is not made the same way: the hook then takes the careful path. Its
``library_facts`` says whether its constants are all library facts (memo.py).
"""

from __future__ import annotations

import types
from typing import Any

from porter_ext.record.memo import library_fact
from porter_ext.record.values import NO_SELF, backend_of, devices_in

_CODE: dict[tuple[str, str], types.CodeType] = {}


def _function(params: str, body: str, names: dict[str, Any]) -> types.FunctionType:
    code = _CODE.get((params, body))
    if code is None:
        source = f"def guard({params}):\n{body}"
        module = compile(source, "<porter guard>", "exec", dont_inherit=True)
        code = _CODE[(params, body)] = module.co_consts[0]
    names.update(_type=type, _len=len, _devices=devices_in)
    return types.FunctionType(code, names, "guard")


class _Builder:
    """The conditions and device reads of one guard, with the constants they name."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {}
        self.facts = True  # every constant a library fact (memo.py may keep the guard)
        self.conditions: list[str] = []
        self.devices: list[str] = []
        self.general = False  # devices read by `devices_in` (lists, keyword arrays)

    def constant(self, value: Any) -> str:
        name = f"C{len(self.names)}"
        self.names[name] = value
        self.facts = self.facts and library_fact(value)
        return name

    def same_type(self, expr: str, value: Any) -> None:
        self.conditions.append(f"_type({expr}) is {self.constant(type(value))}")

    def same_value(self, expr: str, value: Any) -> None:
        """The value a verdict read: an array's dtype and rank, else the object itself."""
        if backend_of(value) is not None:
            self.same_dtype(expr, getattr(value, "dtype", None))
            ndim = getattr(value, "ndim", None)
            self.conditions.append(f"{expr}.ndim == {self.constant(ndim)}")
        else:
            self.conditions.append(f"{expr} is {self.constant(value)}")

    def same_dtype(self, expr: str, dtype: Any) -> None:
        """The array at ``expr`` has ``dtype``: the same object (NumPy's and torch's
        dtypes are singletons), or an equal one (array-api-strict makes a dtype object
        per array), the comparison `dtype_name` would agree with."""
        c = self.constant(dtype)
        self.conditions.append(f"({expr}.dtype is {c} or {expr}.dtype == {c})")

    def device(self, expr: str, value: Any) -> None:
        """Read the device of ``value`` (found at ``expr``) when it is an array."""
        t = type(value)
        if t is list or t is tuple:
            self.general = True
            return
        backend = backend_of(value)
        if backend is None:
            return
        if backend.fixed_device is not None:
            self.devices.append(self.constant(backend.fixed_device))
            return
        reader = self.constant(backend)
        quick = backend.quick_device
        if quick is not None and quick[0].isidentifier():
            self.devices.append(
                f"{self.constant(quick[1])} if {expr}.{quick[0]} else {reader}.device_of({expr})"
            )
        else:
            self.devices.append(f"{reader}.device_of({expr})")

    def build(self, params: str, general: str) -> types.FunctionType:
        if self.general:
            devices = general
        elif all(d in self.names for d in self.devices):  # every device known: one tuple
            devices = self.constant(tuple(self.names[d] for d in self.devices))
        else:
            devices = "(" + "".join(f"{d}, " for d in self.devices) + ")"
        test = " and ".join(self.conditions) or "True"
        body = f"    if {test}:\n        return {devices}\n    return None\n"
        guard = _function(params, body, self.names)
        guard.library_facts = self.facts
        return guard


def call_guard(self_obj: Any, args: tuple, kwargs: dict, values: bool) -> types.FunctionType:
    """The guard of a call site, a function of ``(receiver, args, kwargs)``: the receiver
    (``self_obj``, or `NO_SELF` for a function) is the hook's to check by type; ``values``:
    whether the verdict read argument values."""
    g = _Builder()
    g.conditions.append(f"_len(y) == {len(args)}" if args else "not y")
    for i, a in enumerate(args):
        g.same_type(f"y[{i}]", a)
    if kwargs:
        g.conditions.append(f"_len(k) == {len(kwargs)}")
        g.conditions += [f"{name!r} in k" for name in kwargs]
    else:
        g.conditions.append("not k")
    if values:
        if self_obj is not NO_SELF and self_obj is not None:
            g.same_value("x", self_obj)
        for i, a in enumerate(args):
            g.same_value(f"y[{i}]", a)
        for name, v in kwargs.items():
            if backend_of(v) is not None:  # (an identity check implies the type)
                g.same_type(f"k[{name!r}]", v)
            g.same_value(f"k[{name!r}]", v)
    if self_obj is not NO_SELF:
        g.device("x", self_obj)
    for i, a in enumerate(args):
        g.device(f"y[{i}]", a)
    for v in kwargs.values():
        if backend_of(v) is not None or type(v) in (list, tuple):
            g.general = True
    receiver = "x" if self_obj is not NO_SELF else "_NO_SELF"
    g.names["_NO_SELF"] = NO_SELF
    return g.build("x, y, k", f"_devices(y, k, {receiver})")


def operator_guard(a: Any, b: Any, unary: Any) -> types.FunctionType:
    """The guard of an operator site, a function of its operands ``(a, b)`` (``b`` is
    ``unary`` for a unary operator): the same types and dtypes as the first."""
    g = _Builder()
    for expr, value in (("x", a), ("y", b)):
        g.same_type(expr, value)
        if value is not unary and backend_of(value) is not None:
            g.same_dtype(expr, getattr(value, "dtype", None))
    g.device("x", a)
    if b is not unary:
        g.device("y", b)
    g.names["_UNARY"] = unary
    return g.build("x, y", "_devices((x,) if y is _UNARY else (x, y), None)")


#: how many parts of a tuple index a guard checks (`operand_kind` reads the first 8;
#: a longer index takes the careful path)
_INDEX_PARTS = 8


def _index_part(g: _Builder, expr: str, value: Any) -> bool:
    """Check that the index (part) at ``expr`` is of the kind `operand_kind` read from
    ``value``, and read its device; False for a kind the guard does not check."""
    t = type(value)
    if t is int or t is bool:
        g.same_type(expr, value)
        return True
    if t is slice:
        step = value.step
        g.same_type(expr, value)
        if step is None:
            g.conditions.append(f"{expr}.step is None")
        elif type(step) is int:
            sign = "<" if step < 0 else ">="
            g.conditions.append(f"_type({expr}.step) is int and {expr}.step {sign} 0")
        else:
            return False
        return True
    if value is Ellipsis or value is None:
        g.conditions.append(f"{expr} is {g.constant(value)}")
        return True
    if backend_of(value) is not None:
        g.same_type(expr, value)
        g.same_value(expr, value)
        g.device(expr, value)
        return True
    return False


def index_guard(x: Any, key: Any, value: Any, unary: Any) -> types.FunctionType | None:
    """The guard of an indexing site, ``x[key]`` (``value`` is ``unary``) or ``x[key] =
    value``, a function of ``(x, y)`` or ``(x, y, v)``: the same array type, dtype and
    rank, an index of the same kind (an integer, a slice with a step of the same sign,
    ``...``, ``None``, an array of the same type, dtype and rank, or a tuple of those,
    part by part), and a value of the same type (and dtype and rank). None for an index
    or value it does not check (lists, other objects, long tuples): that site goes the
    careful way on every call."""
    g = _Builder()
    g.same_type("x", x)
    g.same_value("x", x)
    g.device("x", x)
    if type(key) is tuple:
        if len(key) > _INDEX_PARTS:
            return None
        g.same_type("y", key)
        g.conditions.append(f"_len(y) == {len(key)}")
        for i, part in enumerate(key):
            if not _index_part(g, f"y[{i}]", part):
                return None
    elif not _index_part(g, "y", key):
        return None
    if value is unary:
        return g.build("x, y", "None")
    if type(value) in (int, float, complex, bool):
        g.same_type("v", value)
    elif backend_of(value) is not None:
        g.same_type("v", value)
        g.same_value("v", value)
        g.device("v", value)
    else:
        return None
    return g.build("x, y, v", "None")
