"""Which kinds of dtype the standard's functions take: ``exp`` and ``divide`` floating-point
arrays only, ``maximum`` real numeric ones, ``logical_and`` booleans.

The categories are the standard's own words ("Should have a floating-point data type"),
as array-api-strict checks them (its ``_dtype_categories``); an input outside its function's
category is implementation-defined (NumPy and torch promote an integer array to float,
array-api-strict raises), so the call is outside the standard by usage. Functions that take
every dtype (``equal``, ``where``, manipulation) are not listed. The fft extension's
transforms take complex arrays (``fft``, ``ifft``, ``fftn``, ``ifftn``, ``irfft``,
``irfftn``, ``hfft``) or real floating-point ones (``rfft``, ``rfftn``, ``ihfft``),
its shifts floating-point ones; ``fftfreq``/``rfftfreq`` take no array.

A Python scalar mixes with an array of its own kind of dtype only (`scalar_issue`, the
standard's "Mixing arrays with Python scalars"), in operators and, from 2024.12, in the
functions that take scalars (`SCALAR_OPERANDS`).
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
        "reciprocal sin sinh sqrt tan tanh divide mean fft.fftshift fft.ifftshift linalg.cholesky linalg.det "
        "linalg.eigh linalg.eigvalsh linalg.inv linalg.matrix_norm linalg.pinv linalg.qr "
        "linalg.slogdet linalg.solve linalg.svd linalg.svdvals linalg.vector_norm"
    ),
    "real floating-point": "signbit atan2 copysign hypot logaddexp nextafter std var "
    "fft.rfft fft.rfftn fft.ihfft",
    "complex floating-point": "imag fft.fft fft.ifft fft.fftn fft.ifftn fft.irfft fft.irfftn "
    "fft.hfft",
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
#: functions whose ``x1``/``x2`` may be Python scalars (from 2024.12: the elementwise
#: functions of two operands, and ``where``), mixed with the array by the scalar rules
SCALAR_OPERANDS = BINARY | {"equal", "not_equal", "where"}

#: kind of array dtype → the kinds of Python scalar the standard mixes with it ("Mixing
#: arrays with Python scalars": a bool with a boolean array, an int with an integer
#: one, an int or a float with a real floating-point one, any number with a complex one)
_SCALARS_WITH = MappingProxyType(
    {
        "bool": frozenset({"bool"}),
        "int": frozenset({"int"}),
        "float": frozenset({"int", "float"}),
        "complex": frozenset({"int", "float", "complex"}),
    }
)
_KIND_ORDER = MappingProxyType({"bool": 0, "int": 1, "float": 2, "complex": 3})
_WIDEST = MappingProxyType({"int": "int64", "float": "float64", "complex": "complex128"})


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


def complex_of(dtype: str) -> str:
    """The complex dtype of the precision of a real floating-point ``dtype`` (``float32``
    → ``complex64``), ``complex128`` for anything else (an integer array)."""
    return "complex64" if dtype in ("float16", "bfloat16", "float32", "complex64") else "complex128"


def scalar_issue(dtype: str, scalar: str, version: str) -> tuple[str, str | None] | None:
    """(reason, cast) when the standard ``version`` does not define a Python scalar of kind
    ``scalar`` (``bool``, ``int``, ``float``, ``complex``) with an array of ``dtype``, in an
    operator or a function: ``cast`` is the dtype to cast the array to (``float64`` for a
    float with an integer array, ``complex64`` for a complex with float32 before 2024.12),
    None where the scalar belongs in the array's kind instead (a bool with numbers)."""
    kind = dtype_kind(dtype)
    if kind == "other" or scalar in _SCALARS_WITH[kind]:
        return None
    if kind == "float" and scalar == "complex" and version >= "2024.12":
        return None  # a complex scalar promotes a real floating-point array (2024.12)
    cast = None
    if _KIND_ORDER[scalar] > _KIND_ORDER[kind]:
        cast = complex_of(dtype) if scalar == "complex" else _WIDEST[scalar]
    return (
        f"a Python {scalar} with an array of {dtype}: the standard mixes a Python scalar "
        "only with arrays of its own kind of dtype (NumPy and torch promote or cast it, "
        "array-api-strict raises)",
        cast,
    )


def admits(function: str, dtype: str) -> bool:
    """Whether the standard's ``function`` takes an array of ``dtype`` (True for a function
    without a category, and for a dtype porter cannot place in a kind)."""
    category = CATEGORY.get(function)
    kind = dtype_kind(dtype)
    return category is None or kind == "other" or kind in KINDS[category]
