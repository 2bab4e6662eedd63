"""Which kinds of dtype the standard's functions take: ``exp`` and ``divide`` floating-point
arrays only, ``maximum`` real numeric ones, ``logical_and`` booleans.

The categories are the standard's own words ("Should have a floating-point data type"),
as array-api-strict checks them (its ``_dtype_categories``); an input outside its function's
category is implementation-defined (NumPy and torch promote an integer array to float,
array-api-strict raises), so the call is outside the standard by usage. Functions that take
every dtype (``equal``, ``where``, manipulation) are not listed.
"""

from __future__ import annotations

from types import MappingProxyType

#: category → the kinds of dtype (`dtype_kind`) it admits
KINDS = MappingProxyType(
    {
        "floating-point": frozenset({"float", "complex"}),
        "real floating-point": frozenset({"float"}),
        "complex floating-point": frozenset({"complex"}),
        "numeric": frozenset({"int", "float", "complex"}),
        "real numeric": frozenset({"int", "float"}),
        "integer": frozenset({"int"}),
        "integer or boolean": frozenset({"int", "bool"}),
        "boolean": frozenset({"bool"}),
    }
)

#: category → the standard functions whose array inputs it constrains (elementwise
#: functions: every array argument; statistics and linear algebra: the array)
_FUNCTIONS = {
    "floating-point": (
        "acos acosh asin asinh atan atanh cos cosh exp expm1 log log10 log1p log2 "
        "reciprocal sin sinh sqrt tan tanh divide mean linalg.cholesky linalg.det "
        "linalg.eigh linalg.eigvalsh linalg.inv linalg.matrix_norm linalg.pinv linalg.qr "
        "linalg.slogdet linalg.solve linalg.svd linalg.svdvals linalg.vector_norm"
    ),
    "real floating-point": "signbit atan2 copysign hypot logaddexp nextafter std var",
    "complex floating-point": "imag",
    "numeric": "abs conj isfinite isinf isnan negative positive real round sign square "
    "add multiply pow subtract",
    "real numeric": "ceil floor trunc floor_divide greater greater_equal less less_equal "
    "maximum minimum remainder max min",
    "integer": "bitwise_left_shift bitwise_right_shift",
    "integer or boolean": "bitwise_invert bitwise_and bitwise_or bitwise_xor",
    "boolean": "logical_not logical_and logical_or logical_xor",
}
#: standard function → the category of its array inputs
CATEGORY = MappingProxyType(
    {name: category for category, names in _FUNCTIONS.items() for name in names.split()}
)
_BINARY = (
    "add atan2 bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift "
    "copysign divide floor_divide greater greater_equal hypot less less_equal logaddexp "
    "logical_and logical_or logical_xor maximum minimum multiply nextafter pow remainder "
    "subtract"
)
#: functions that combine two arrays elementwise: mixed kinds of dtype do not promote
BINARY = frozenset(_BINARY.split())


def dtype_kind(name: str) -> str:
    """``bool`` | ``int`` | ``float`` | ``complex`` | ``other`` for a dtype name."""
    if name == "bool":
        return "bool"
    if name.startswith(("int", "uint")):
        return "int"
    if name.startswith(("float", "bfloat")):
        return "float"
    if name.startswith("complex"):
        return "complex"
    return "other"


def admits(function: str, dtype: str) -> bool:
    """Whether the standard's ``function`` takes an array of ``dtype`` (True for a function
    without a category, and for a dtype porter cannot place in a kind)."""
    category = CATEGORY.get(function)
    kind = dtype_kind(dtype)
    return category is None or kind == "other" or kind in KINDS[category]
