"""Per-dtype tolerances for comparing a replay's outputs with the original run.

A replay on another library legitimately differs from the original by rounding: sums and
matrix products are reduced in a different order, and elementwise functions (`exp`,
`sin`, ...) come from different math libraries that are accurate to a few ulps. What
porter must still catch are porting bugs, which show up as differences far above
rounding: a wrong axis, a different promotion rule, an intermediate computed in a lower
precision. Tolerances therefore depend on the dtype, and a few well-known conventions
are offered next to porter's own so that a person can use the one their project uses
(the libraries' own, as their adapters state them, and SciPy's).

porter's default table puts rtol well above rounding noise (tens of ulps for float32)
yet below the unit roundoff of the next lower precision, so a float32 detour inside a
float64 computation is still reported; see ``PORTER`` below for the numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from porter_ext.backends import all_backends

FLOAT_KEYS = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")

# ml_dtypes' types are numpy dtypes of kind "V"; they are recognised by name so that
# this module never needs ml_dtypes itself.
_ML_FLOAT_PREFIXES = ("bfloat", "float8", "float6", "float4")
_ML_INT_PREFIXES = ("int2", "int4", "uint2", "uint4")


@dataclass(frozen=True)
class Tolerance:
    """An elementwise closeness rule: ``|actual - expected| <= atol + rtol * |expected|``."""

    rtol: float
    atol: float

    def looser(self, other: Tolerance) -> Tolerance:
        """The tolerance that accepts everything either of the two accepts."""
        return Tolerance(max(self.rtol, other.rtol), max(self.atol, other.atol))


EXACT = Tolerance(0.0, 0.0)


def dtype_category(dtype: Any) -> str | None:
    """``"bool"``, ``"integer"``, ``"real"``, ``"complex"``, or None when not numeric.

    Knows the low-precision types of ml_dtypes (bfloat16, float8_*, int4, ...), which
    NumPy itself files under kind ``"V"``.
    """
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "bool"
    if dt.kind in "iu":
        return "integer"
    if dt.kind == "f":
        return "real"
    if dt.kind == "c":
        return "complex"
    if dt.kind == "V" and dt.fields is None and dt.type.__module__.startswith("ml_dtypes"):
        if dt.name.startswith(_ML_FLOAT_PREFIXES):
            return "real"
        if dt.name.startswith(_ML_INT_PREFIXES):
            return "integer"
    return None


def _eps(dt: np.dtype) -> float:
    if not dt.type.__module__.startswith("ml_dtypes"):
        return float(np.finfo(dt).eps)
    import ml_dtypes  # only reached for an ml_dtypes array, so ml_dtypes is installed

    return float(ml_dtypes.finfo(dt).eps)


_KEY_EPS = {
    "float16": 2.0**-10,
    "bfloat16": 2.0**-7,
    "float32": 2.0**-23,
    "float64": 2.0**-52,
}


@dataclass(frozen=True)
class TolerancePolicy:
    """A named table of tolerances per floating dtype; integers and booleans are exact.

    ``per_dtype`` is keyed by the names in ``FLOAT_KEYS``. A floating dtype outside the
    table (float8, longdouble) gets the entry of the nearest standard precision at least
    as coarse, scaled by the ratio of epsilons when it is coarser than all of them.
    """

    name: str
    per_dtype: Mapping[str, Tolerance] = field(repr=False)

    def __post_init__(self) -> None:
        missing = [k for k in FLOAT_KEYS if k not in self.per_dtype]
        if missing:
            raise ValueError(f"tolerance policy {self.name!r} lacks dtypes {missing}")
        object.__setattr__(self, "per_dtype", MappingProxyType(dict(self.per_dtype)))

    def for_dtype(self, dtype: Any, other: Any = None) -> Tolerance:
        """The tolerance for values of ``dtype``, or for comparing ``dtype`` with ``other``.

        With two dtypes (original float64, replay float32) the looser of the two applies:
        the replay cannot be more accurate than its own precision.
        """
        tol = self._single(dtype)
        return tol if other is None else tol.looser(self._single(other))

    def override(self, rtol: float | None = None, atol: float | None = None) -> TolerancePolicy:
        """The same policy with ``rtol`` and/or ``atol`` fixed for every floating dtype."""
        if rtol is None and atol is None:
            return self
        for value, label in ((rtol, "rtol"), (atol, "atol")):
            if value is not None and not (value >= 0 and np.isfinite(value)):
                raise ValueError(f"{label} must be a finite number >= 0, got {value!r}")
        table = {
            k: Tolerance(
                t.rtol if rtol is None else float(rtol), t.atol if atol is None else float(atol)
            )
            for k, t in self.per_dtype.items()
        }
        parts = [f"{n}={v:g}" for n, v in (("rtol", rtol), ("atol", atol)) if v is not None]
        return TolerancePolicy(f"{self.name}({', '.join(parts)})", table)

    def _single(self, dtype: Any) -> Tolerance:
        if isinstance(dtype, str) and dtype in self.per_dtype:
            return self.per_dtype[dtype]
        dt = np.dtype(dtype)
        category = dtype_category(dt)
        if category in ("bool", "integer"):
            return EXACT
        if category is None:
            raise TypeError(f"dtype {dt} is not numeric; porter has no tolerance for it")
        if dt.name in self.per_dtype:
            return self.per_dtype[dt.name]
        # A precision outside the table: complex takes its real part's row; a float the
        # row of the nearest standard precision at least as coarse.
        eps = _eps(dt)
        coarser = [k for k, e in _KEY_EPS.items() if e >= eps]
        if not coarser:  # float8, float4: bfloat16's row scaled by the ratio of epsilons
            key, scale = "bfloat16", eps / _KEY_EPS["bfloat16"]
        else:  # longdouble ends at float64
            key, scale = min(coarser, key=_KEY_EPS.__getitem__), 1.0
        if category == "complex":
            key = {"float32": "complex64", "float64": "complex128"}.get(key, key)
        tol = self.per_dtype[key]
        return Tolerance(tol.rtol * scale, tol.atol * scale)


def _table(f16: Tolerance, bf16: Tolerance, f32: Tolerance, f64: Tolerance) -> dict[str, Tolerance]:
    return {
        "float16": f16,
        "bfloat16": bf16,
        "float32": f32,
        "float64": f64,
        "complex64": f32,
        "complex128": f64,
    }


def _scipy_table() -> dict[str, Tolerance]:
    # scipy._lib._array_api.xp_assert_close (scipy 1.17): rtol=None becomes
    # 4 * sqrt(finfo(actual.dtype).eps) for floating dtypes, and atol defaults to 0.
    rows = {k: Tolerance(4 * eps**0.5, 0.0) for k, eps in _KEY_EPS.items()}
    return _table(rows["float16"], rows["bfloat16"], rows["float32"], rows["float64"])


PORTER = TolerancePolicy(
    "porter",
    # rtol sits well above what reduction order and a few ulps of libm can cause, and
    # below the unit roundoff of the next lower precision, so that an intermediate
    # silently computed in a lower precision (float32 inside a float64 cell, as torch's
    # and jax's default dtypes invite) is still reported. atol is a tenth of rtol: it
    # accepts results that cancel to nearly zero from operands of order one.
    _table(
        f16=Tolerance(2e-3, 2e-4),  # ~2 ulp; every backend computes half in float32
        bf16=Tolerance(1.6e-2, 1.6e-3),  # ~2 ulp, as torch
        f32=Tolerance(1e-5, 1e-6),  # ~84 ulp: sums of 10^5..10^6 terms in another order
        f64=Tolerance(1e-9, 1e-10),  # float32's unit roundoff is 6e-8: still caught
    ),
)


def _library_policies() -> dict[str, TolerancePolicy]:
    """A policy per library whose adapter states its own closeness test's defaults
    (torch.testing.assert_close, numpy.allclose), named after the library."""
    policies = {}
    for backend in all_backends():
        rows = backend.testing_tolerances
        if rows:
            f16, bf16, f32, f64 = (Tolerance(*rows[k]) for k in _KEY_EPS)
            policies[backend.name] = TolerancePolicy(backend.name, _table(f16, bf16, f32, f64))
    return policies


POLICIES: Mapping[str, TolerancePolicy] = MappingProxyType(
    {"porter": PORTER, **_library_policies(), "scipy": TolerancePolicy("scipy", _scipy_table())}
)

DEFAULT_POLICY = "porter"


def get_policy(name: str) -> TolerancePolicy:
    """The tolerance policy called ``name``; a ValueError lists the valid names."""
    try:
        return POLICIES[name]
    except KeyError:
        valid = ", ".join(sorted(POLICIES))
        raise ValueError(f"unknown tolerance policy {name!r}; choose one of: {valid}") from None


def eps_of(dtype: Any) -> float:
    """Machine epsilon of a floating dtype (its real part's, for complex); 0 for exact ones."""
    dt = np.dtype(dtype)
    if dtype_category(dt) not in ("real", "complex"):
        return 0.0
    return _eps(dt)


@dataclass(frozen=True)
class ReferenceRule:
    """How a result is judged against the float64 reference of its output.

    ``max|result - ref| <= multiple * max|original - ref| + floor_ulps * eps * max|ref|``:
    a backend may be a stated multiple less accurate than the original itself, plus a few
    ulps of the output's magnitude (which covers an original that happens to be exact).
    The reference is trusted for an output only when the original agrees with it to
    ``trust_rtol_ulps * sqrt(eps)`` of that magnitude (array-api-extra's default rtol);
    otherwise the cell does not compute the same thing in float64 (random draws, an
    integer detour) and the per-dtype policy decides instead.
    """

    multiple: float = 4.0
    floor_ulps: float = 16.0
    trust_sqrt_eps: float = 4.0

    def bound(self, original_err: float, eps: float, magnitude: float) -> float:
        return self.multiple * original_err + self.floor(eps, magnitude)

    def floor(self, eps: float, magnitude: float) -> float:
        """A few ulps of the output's largest magnitude: what summing its terms in
        another order leaves anywhere in it, near zero too (with a reference or not)."""
        return self.floor_ulps * eps * magnitude

    def trusted(self, original_err: float, eps: float, magnitude: float) -> bool:
        return original_err <= self.trust_sqrt_eps * eps**0.5 * magnitude


REFERENCE_RULE = ReferenceRule()
