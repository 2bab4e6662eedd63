"""One output of a replay against the original run's, leaf by leaf, with named kinds of
difference.

A leaf (``leaves.py``) is an array, a number, a dtype (`DtypeName`: compared by name,
whatever library made it), or a plain value (a string, a list of strings) compared by
equality; any other object (a plot, a model) is not compared. Shape and dtype changes
are their own kinds (``shape_changed``, ``dtype_changed``), not numeric mismatches: a
value that came out in a narrower dtype (float64 to a backend's default float32) is
judged in that dtype. A numeric mismatch that is only an order or a sign per vector is
recognised (``order_only``, ``sign_only``), and an output made by a partition call is
compared as a partition (`kinds.partition_order`). With a float64 reference for the
leaf (``reference.py``), floating values are judged against it (`ReferenceRule`);
without one, by the per-dtype policy, in the precision the value came from: a Python
float computed from float32 arrays is judged as float32 (``working_dtype``).
NumPy only; the caller moves every value to the host first (`host.to_host`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

import numpy as np

from porter_ext.guard import internal_error
from porter_ext.model.comparison import OutputComparison
from porter_ext.model.records import fields_of

from .arrays import ArrayStats, ReferenceBound, compare_arrays
from .kinds import Partition, partition_order, recognise
from .leaves import PLAIN_TYPES, DtypeName, Keyed, Plain, as_array, judged_dtype
from .reference import LeafReference
from .tolerance import (
    REFERENCE_RULE,
    ReferenceRule,
    Tolerance,
    TolerancePolicy,
    dtype_category,
    eps_of,
    get_policy,
)


@dataclass(frozen=True)
class NumericDiff(OutputComparison):
    """One leaf of an output (an array or a number) compared with the original run: the
    model's row (`OutputComparison`) with what only this pass knows besides.

    ``name`` is the leaf's path inside containers (``out[0]['a']``). ``note`` says why the
    leaf was not compared, or names its kind of difference (``dtype_changed: float64 →
    float32``). ``within_tolerance`` is None only when the values are not comparable at
    all (model objects). Where the leaf landed (``device``, ``conversion``), determinism
    and the plotted summaries are the replay's, filled in by `outputs.Baseline`; here
    the raw summaries of the pass (``error_sample``: `ArrayStats.histogram` rows,
    ``error_blocks``: `ArrayStats.error_map`) wait for that row.
    """

    compared: bool = True
    expected_shape: tuple[int, ...] | None = None
    error_sample: np.ndarray | None = None
    error_blocks: np.ndarray | None = None

    def comparison(self) -> OutputComparison:
        """The model's row of this leaf: the fields `OutputComparison` declares."""
        return OutputComparison(**fields_of(self, OutputComparison))


_ROW_FIELDS = fields(OutputComparison)
#: the row's fields without a default, which a leaf's comparison leaves None at first
_BLANK_ROW = dict.fromkeys(
    f.name for f in _ROW_FIELDS if f.default is MISSING and f.default_factory is MISSING
)


def _leaf(path: str, compared: bool, note: str | None, **values: Any) -> NumericDiff:
    """A leaf's diff: what ``values`` give, None for the rest of the row."""
    return NumericDiff(**{**_BLANK_ROW, "name": path, **values}, compared=compared, note=note)


@dataclass(frozen=True)
class Judging:
    """How a replay's leaves are judged: the per-dtype tolerance ``policy``, the float64
    ``references`` by leaf path and the ``rule`` that judges against them, the
    ``working_dtype`` the replay's Python floats came from, and the leaves made by a
    partition call (``partitions``: by path, how)."""

    policy: TolerancePolicy = field(default_factory=lambda: get_policy("porter"))
    references: Mapping[str, LeafReference] = field(default_factory=dict)
    working_dtype: str | None = None
    rule: ReferenceRule = REFERENCE_RULE
    partitions: Mapping[str, Partition] = field(default_factory=dict)


def compare_values(
    name: str, expected: Any, actual: Any, judging: Judging | None = None
) -> list[NumericDiff]:
    """Compare an original output with a replay's: one diff per leaf of nested containers.

    Lists and tuples are compared item by item, dicts key by key; a missing key, a
    different length or a container against a leaf is reported as a diff that was not
    compared. Never raises for odd values: what cannot be compared says why.
    """
    diffs: list[NumericDiff] = []
    _walk(name, expected, actual, judging or Judging(), diffs)
    return diffs


def _walk(path: str, e: Any, a: Any, judging: Judging, out: list[NumericDiff]) -> None:
    if isinstance(e, Mapping) and isinstance(a, Mapping):
        for k in e:
            sub = f"{path}[{k!r}]"
            if k in a:
                _walk(sub, e[k], a[k], judging, out)
            else:
                out.append(_not_compared(sub, "missing in the replay", within=False))
        out.extend(
            _not_compared(f"{path}[{k!r}]", "not in the original", within=False)
            for k in a
            if k not in e
        )
    elif isinstance(e, list | tuple) and isinstance(a, list | tuple):
        if len(e) != len(a):
            out.append(_not_compared(path, f"length {len(e)} vs {len(a)}", within=False))
        for i, (x, y) in enumerate(zip(e, a, strict=False)):
            _walk(f"{path}[{i}]", x, y, judging, out)
    elif isinstance(e, Mapping | list | tuple) or isinstance(a, Mapping | list | tuple):
        reason = f"{type(e).__name__} vs {type(a).__name__}"
        out.append(_not_compared(path, reason, within=False))
    else:
        out.append(_compare_leaf(path, e, a, judging))


def _not_compared(path: str, reason: str, within: bool | None, **values: Any) -> NumericDiff:
    return _leaf(path, False, reason, within_tolerance=within, **values)


def _equality(path: str, e: Any, a: Any) -> NumericDiff:
    ev = e.value if isinstance(e, Plain) else e
    av = a.value if isinstance(a, Plain) else a
    try:
        same = bool(type(ev) is type(av) and ev == av)
    except Exception as error:  # an odd __eq__: not comparable, and not porter's failure
        return _not_compared(path, f"cannot compare by equality: {error}", None)
    reason = None if same else f"{type(ev).__name__} values differ (compared by equality)"
    return _leaf(path, True, reason, mismatched=None if same else 1, within_tolerance=same)


def _dtypes(path: str, e: Any, a: Any) -> NumericDiff:
    """Two dtype objects, by name: the same dtype whatever library spells it."""
    if not (isinstance(e, DtypeName) and isinstance(a, DtypeName)):
        return _not_compared(path, f"{_what(e)} vs {_what(a)}", within=False)
    names = {"dtype": a.name, "expected_dtype": e.name}
    if e == a:
        return _leaf(path, True, None, within_tolerance=True, mismatched=0, **names)
    reason = f"dtype_changed: {e.name} → {a.name} (dtype objects, compared by name)"
    return _not_compared(path, reason, None, difference="dtype_changed", **names)


def _what(value: Any) -> str:
    return "a dtype" if isinstance(value, DtypeName) else type(value).__name__


def _compare_leaf(path: str, e: Any, a: Any, judging: Judging) -> NumericDiff:
    if isinstance(e, DtypeName) or isinstance(a, DtypeName):
        return _dtypes(path, e, a)
    plain = (Plain, *PLAIN_TYPES)
    if isinstance(e, plain) and isinstance(a, plain):
        return _equality(path, e, a)
    if isinstance(e, Keyed) and isinstance(a, Keyed):
        if e.keys != a.keys:
            return _not_compared(path, "the keys differ", within=False)
        e, a = e.values, a.values
    ea, aa = as_array(e), as_array(a)
    if ea is None or aa is None:
        if ea is None and aa is None:
            reason = (
                f"not compared: a {type(e).__name__} is not data (an array, a number, a "
                "string or a dtype); plots, models and other objects are left out"
            )
            return _not_compared(path, reason, None)
        return _not_compared(path, f"{type(e).__name__} vs {type(a).__name__}", within=False)
    described = {
        "shape": [int(n) for n in aa.shape],
        "dtype": aa.dtype.name,
        "expected_shape": ea.shape,
        "expected_dtype": ea.dtype.name,
    }
    ce, ca = dtype_category(ea.dtype), dtype_category(aa.dtype)
    if ce is None or ca is None:
        bad = ea.dtype if ce is None else aa.dtype
        return _not_compared(path, f"dtype {bad} is not numeric", None, **described)
    if ea.shape != aa.shape:
        reason = f"shape_changed: {ea.shape} → {aa.shape}"
        return _not_compared(path, reason, False, difference="shape_changed", **described)
    try:
        return _compare_numbers(path, e, ea, aa, judging, described)
    except Exception as error:  # porter's bug: through the guard, the row says so
        internal_error(f"comparing {path}", error)
        reason = f"comparison failed: {type(error).__name__}: {error}"
        return _not_compared(path, reason, None, **described)


def _compare_numbers(
    path: str, e: Any, ea: np.ndarray, aa: np.ndarray, judging: Judging, described: dict
) -> NumericDiff:
    judged = judged_dtype(e, ea, judging.working_dtype)
    tol = judging.policy.for_dtype(judged, aa.dtype)
    ref = judging.references.get(path)
    floating = dtype_category(judged) in ("real", "complex") and aa.dtype.kind in "fc"
    if ref is not None and not floating:
        ref = None
    bound = None
    if ref is not None:
        eps = max(eps_of(judged), eps_of(aa.dtype))
        bound = judging.rule.bound(ref.original_err, eps, ref.magnitude)

    def run(expected: np.ndarray, actual: np.ndarray, against: Any, **kw: Any) -> ArrayStats:
        if against is None or bound is None:
            return compare_arrays(expected, actual, tol, **kw)
        return compare_arrays(expected, actual, tol, against=ReferenceBound(against, bound), **kw)

    first = s = run(ea, aa, None if ref is None else ref.value, magnitude=True)
    within = s.within_tolerance
    if not within and eps_of(aa.dtype) > eps_of(judged) > 0:
        # a narrower dtype (a backend's default float32 for a float64 cell): its values
        # are judged in that dtype, whose rounding of terms as large as the output's
        # largest leaves that much error anywhere, near zero too
        tol, bound = _in_narrower(tol, s.max_magnitude), None
        s = run(ea, aa, None, magnitude=True)
        within = s.within_tolerance
    if not within and ref is None and floating:
        # no float64 reference to judge by (inputs too big to copy, random draws): a sum
        # of products rounds at the scale of its terms, so a near-zero element of a
        # matmul differs by ulps of the output's largest, as the reference rule allows
        # (never more than the policy's own rtol of that magnitude); a mismatch is still
        # reported against the policy's own tolerance
        magnitude = s.max_magnitude or 0.0
        eps = max(eps_of(judged), eps_of(aa.dtype))
        floor = min(judging.rule.floor(eps, magnitude), tol.rtol * magnitude)
        if floor > tol.atol:
            floored = Tolerance(tol.rtol, floor)
            retried = compare_arrays(ea, aa, floored, magnitude=True)
            if retried.within_tolerance:
                tol, s, within = floored, retried, True
    changed = ea.dtype.name != aa.dtype.name
    notes = [f"dtype_changed: {ea.dtype.name} → {aa.dtype.name}"] if changed else []
    recognised = None
    if not within:

        def judge(ev: np.ndarray, av: np.ndarray, kind: str) -> bool:
            against = ref.value if ref is not None and kind == "sign_only" else None
            return run(ev, av, against, summaries=False).within_tolerance

        partition = judging.partitions.get(path)
        verdict = None if partition is None else partition_order(ea, aa, partition, judge)
        kind = None
        if verdict is not None:  # a partition: valid or not, no other kind explains it
            valid, note = verdict
            if valid:
                kind = ("order_only", note)
            else:
                notes.append(note)
        elif _far_apart(s, judged):
            kind = recognise(ea, aa, judge)
        if kind is not None:
            (recognised, note), within = kind, True
            notes.append(note)
    difference = "dtype_changed" if changed else recognised or (None if within else "numeric")
    return _leaf(
        path,
        True,
        "; ".join(notes) or None,
        **described,
        max_abs_err=s.max_abs_err,
        max_rel_err=s.max_rel_err,
        mismatched=0 if within and recognised else s.mismatched,
        nan_mismatch=s.nan_mismatch,
        within_tolerance=within,
        rtol=0.0 if bound is not None else tol.rtol,
        atol=bound if bound is not None else tol.atol,
        error_sample=s.histogram,
        error_blocks=s.error_map,
        reference_err=first.reference_err,
        original_reference_err=None if ref is None else ref.original_err,
        difference=difference,
    )


def _in_narrower(tol: Tolerance, magnitude: float | None) -> Tolerance:
    """The narrower dtype's tolerance ``tol``, relative to the output's largest magnitude
    as well as to each element."""
    return Tolerance(tol.rtol, max(tol.atol, tol.rtol * (magnitude or 0.0)))


def _far_apart(s: ArrayStats, dtype: np.dtype) -> bool:
    """Whether values differ by more than rounding could make them (then an order or a
    sign may explain it): integers at all, floats by more than 4 sqrt(eps) of the
    output's magnitude. Rounding noise is not worth a sort of the whole output."""
    eps = eps_of(dtype)
    if eps == 0 or s.max_abs_err is None:
        return True
    return s.max_abs_err > 4 * eps**0.5 * (s.max_magnitude or 0.0)
