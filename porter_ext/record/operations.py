"""The recorder's operators, indexing and attribute reads (a mixin of `Recorder`): the
token of each one on an array, its verdict by the kinds of its operands, and the hooks'
fast path for the same operation made the same way again (see ``guards.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import Any

from porter_ext.record.classify import Verdict
from porter_ext.record.guards import index_guard, operator_guard
from porter_ext.record.hooks_importlib_bootstrap import UNARY
from porter_ext.record.memo import recall_operation, remember_operation
from porter_ext.record.operators import REFLECTED, classify_index, classify_operation, operand_kind
from porter_ext.record.resolve import Callee, attribute_callee
from porter_ext.record.runners import Runner, op_template
from porter_ext.record.sites import OperationSite
from porter_ext.record.values import backend_of, devices_in
from porter_ext.record.verdicts import DtypeVerdict, operator_callee, strict_error
from porter_ext.spec.standard import Standard

_MISSING = object()
#: the statuses strict checking raises on, for calls and operations alike
STRICT_RAISES = frozenset({"non_standard", "non_standard_usage", "device_specific"})
#: (type, attribute name) → the attribute's callee (types of libraries; see `clear_caches`)
attributes: dict[tuple[type, str], Callee | None] = {}


class Operations:
    """The recorder's operators, indexing and attributes during one cell."""

    strict: bool
    version: str
    standard: Standard
    fast_ops: dict[int, tuple]
    fast_gets: dict[int, tuple]
    fast_sets: dict[int, tuple]
    _op_verdicts: dict[tuple, tuple]

    #: provided by `Recorder` and its other mixins
    _internal: Callable[[BaseException], None]
    _fill: Callable[[int | None, Any], None]
    _verdict: Callable[..., tuple[Verdict, Any]]
    _bucket: Callable[..., dict]
    runner: Callable[[tuple, str], Runner]
    after: Callable[[tuple, Any], Any]

    def operation(
        self, site: OperationSite, name: str, a: Any, b: Any, value: Any = UNARY
    ) -> tuple | None:
        """The token of an operator, index or attribute read on an array, or None (then
        the operands' types are remembered in the site's slots)."""
        __tracebackhide__ = True  # noqa: F841
        try:
            array, backend, spelled = a, backend_of(a), name
            indexing = name in ("__getitem__", "__setitem__")
            attribute = not name.startswith("__")
            if backend is None and not indexing and not attribute and b is not UNARY:
                array, backend = b, backend_of(b)
                if backend is not None:
                    name = REFLECTED.get(name, name)
            if backend is None:
                slots = site.slots
                if slots:
                    self._fill(slots[0], type(a))
                    if len(slots) > 1:
                        self._fill(slots[1], type(b))
                return None
            if attribute:
                return self._attribute(site, array, name)
            if indexing:
                token = self._recalled_index(site, name, a, b, value)
            else:
                token = self._recalled_operation(site, spelled, a, b)
            if token is not None:
                return token
            other = b if array is a else a
            key = (
                site,
                name,
                operand_kind(array, backend_of),
                None if other is UNARY else operand_kind(other, backend_of),
                None if value is UNARY else operand_kind(value, backend_of),
            )
            hit = self._op_verdicts.get(key)
            if hit is None:
                std = self.standard
                if indexing:
                    verdict = classify_index(std, name, key[2], key[3], key[4])
                else:
                    verdict = judged_dtypes(
                        classify_operation(std, backend, name, key[2], key[3]), key[2], key[3]
                    )
                callee = operator_callee(backend, name, "index" if indexing else "operator")
                hit = self._op_verdicts[key] = (
                    callee,
                    verdict,
                    self._bucket(site, callee, verdict, ()),
                )
            callee, verdict, bucket = hit
            operands = (a, b) if value is UNARY else (a, b, value)
            token = (
                bucket,
                devices_in(tuple(o for o in operands if o is not UNARY), None),
                None,
                site,
            )
            if indexing and not (self.strict and verdict.status in STRICT_RAISES):
                # the hooks' fast path: an array of the same type, dtype and rank with an
                # index (and a value) of the same kinds here again (see guards.py)
                guard = index_guard(a, b, value, UNARY)
                if guard is not None:
                    self._fast_index(site, name, guard, bucket, token)
                    if guard.library_facts:
                        remember_operation(
                            (site.key, self.version, name), (guard, callee, verdict, None, False)
                        )
            elif not indexing and not (self.strict and verdict.status in STRICT_RAISES):
                # the hook's fast path: the same operand types and dtypes here again; the
                # operands of a library that reuses temporaries' buffers are handed over
                # in a list (see the ``op`` hook)
                present = (a,) if b is UNARY else (a, b)
                boxed = any(getattr(backend_of(o), "elides_temporaries", False) for o in present)
                template = op_template(spelled, boxed)
                boxed = template != spelled  # (in-place operators: never handed over)
                guard = operator_guard(a, b, UNARY)
                self.fast_ops[site.key] = (guard, bucket, self.runner(token, template), boxed, site)
                if guard.library_facts:
                    remember_operation(
                        (site.key, self.version, spelled), (guard, callee, verdict, template, boxed)
                    )
        except Exception as exc:  # porter's fault: the operation goes on unrecorded
            self._internal(exc)
            return None
        if self.strict and verdict.status in STRICT_RAISES:
            self.after(token, None)
            raise strict_error(callee, verdict, site.line)
        return token

    def _recalled_operation(self, site: OperationSite, name: str, a: Any, b: Any) -> tuple | None:
        """The token of an operator its site's remembered guard accepts, or None."""
        memo = recall_operation((site.key, self.version, name))
        if memo is None:
            return None
        guard, callee, verdict, template, boxed = memo
        din = guard(a, b)
        if din is None or (self.strict and verdict.status in STRICT_RAISES):
            return None
        bucket = self._bucket(site, callee, verdict, ())
        token = (bucket, din, None, site)
        self.fast_ops[site.key] = (guard, bucket, self.runner(token, template), boxed, site)
        return token

    def _recalled_index(
        self, site: OperationSite, name: str, x: Any, key: Any, value: Any
    ) -> tuple | None:
        """The token of an index its site's remembered guard accepts, or None."""
        memo = recall_operation((site.key, self.version, name))
        if memo is None:
            return None
        guard, callee, verdict, _, _ = memo
        din = guard(x, key) if value is UNARY else guard(x, key, value)
        if din is None or (self.strict and verdict.status in STRICT_RAISES):
            return None
        bucket = self._bucket(site, callee, verdict, ())
        token = (bucket, din, None, site)
        self._fast_index(site, name, guard, bucket, token)
        return token

    def _fast_index(
        self, site: OperationSite, name: str, guard: FunctionType, bucket: dict, token: tuple
    ) -> None:
        """Give the getitem or setitem hook its fast path at this site: (guard, bucket,
        runner, site)."""
        if name == "__getitem__":
            self.fast_gets[site.key] = (guard, bucket, self.runner(token, "get"), site)
        else:
            self.fast_sets[site.key] = (guard, bucket, self.runner(token, "set"), site)

    def _attribute(self, site: OperationSite, obj: Any, name: str) -> tuple | None:
        key = (type(obj), name)
        callee = attributes.get(key, _MISSING)
        if callee is _MISSING:
            callee = attributes[key] = attribute_callee(obj, name)
        if callee is None:
            return None
        verdict, _ = self._verdict(site, callee, (), {}, obj, None)
        return (self._bucket(site, callee, verdict, ()), devices_in((obj,), None), None, site)


def judged_dtypes(verdict: Verdict, x: tuple, other: tuple | None) -> Verdict:
    """An operator's verdict outside the standard, with the dtypes it judged where it
    judged dtypes (two arrays of one library, or an array and a Python scalar; see
    `operand_kind`): the fix stage writes its casts from them, never from the message."""
    if verdict.status != "non_standard_usage" or other is None:
        return verdict
    if other[0] == "array" and other[1] == x[1]:
        operand = other[2]
    elif other[0] == "scalar":
        operand = f"python {other[1]}"
    else:
        return verdict
    return DtypeVerdict(
        verdict.status,
        verdict.standard_name,
        verdict.suggestion,
        verdict.message,
        verdict.template,
        verdict.entry,
        operands=(x[2], operand),
    )
