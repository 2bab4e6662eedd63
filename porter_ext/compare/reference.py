"""The float64 reference of one leaf (`leaf_reference`): used only where the original
run agrees with it (`ReferenceRule.trusted`), and then what a replay's floating values
are judged against (see `numeric.compare_values`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .arrays import ArrayStats, compare_arrays
from .leaves import as_array, judged_dtype
from .tolerance import REFERENCE_RULE, ReferenceRule, eps_of, get_policy


@dataclass(frozen=True)
class LeafReference:
    """The float64 result of one leaf, and how far the original run itself is from it."""

    value: np.ndarray
    original_err: float
    magnitude: float


def leaf_reference(
    original: Any,
    reference: Any,
    rule: ReferenceRule = REFERENCE_RULE,
    working_dtype: str | None = None,
) -> LeafReference | str:
    """The float64 reference of one leaf, or why it cannot be used for it.

    The reference is used only where it is a float64 (complex128) value of the
    original's shape whose NaN/inf pattern is the original's and which the original
    agrees with to `ReferenceRule.trusted`; a reference whose vectors have the other sign
    is turned to the original's first.
    """
    o, r = as_array(original), as_array(reference)
    if o is None or r is None or o.dtype.kind not in "fc":
        return "not a floating array"
    if r.dtype.name not in ("float64", "complex128"):
        return f"the reference came out {r.dtype.name}, not float64"
    if r.shape != o.shape:
        return f"the reference has shape {r.shape}, the original {o.shape}"
    judged = judged_dtype(original, o, working_dtype)
    eps = eps_of(judged)
    loose = get_policy("porter").for_dtype(judged)

    def measure(value: np.ndarray) -> ArrayStats:
        return compare_arrays(value, o, loose, magnitude=True, summaries=False)

    s = measure(r)
    err = s.max_abs_err if s.max_abs_err is not None else 0.0
    mag = s.max_magnitude or 0.0
    if not s.nan_mismatch and not rule.trusted(err, eps, mag) and r.dtype.kind == "f":
        from .kinds import sign_flips

        for fixed, _ in sign_flips(o, r):
            t = measure(fixed)
            terr = t.max_abs_err if t.max_abs_err is not None else 0.0
            if not t.nan_mismatch and rule.trusted(terr, eps, mag):
                r, s, err = fixed, t, terr
                break
    if s.nan_mismatch:
        return "the reference has NaN or inf where the original has not"
    if not rule.trusted(err, eps, mag):
        return (
            f"the original is {err:.3g} from the float64 reference (max |ref| {mag:.3g}): "
            "the cell does not compute the same values in float64"
        )
    return LeafReference(r, float(err), float(mag))
