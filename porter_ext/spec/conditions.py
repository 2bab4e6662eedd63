"""The conditions of the replacement table's entries (`porter_ext.spec.replacements`):
named predicates over a call's ``(args, kwargs, self_obj)`` that choose between entries of
one callee (``torch.max(a, b)`` is maximum, ``torch.max(x, 1)`` a reduction), and the duck
typing they share with the suggestions (an array is anything with ``shape`` and
``dtype``; no array library is imported).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

from porter_ext.backends.registry import backend_for, is_device, names_device_type

__all__ = [
    "ALL_DTYPES",
    "AXIS_KEYWORDS",
    "CONDITIONS",
    "STANDARD_DTYPES",
    "dtype_name",
    "is_axis",
    "is_int",
]

# --- duck typing -------------------------------------------------------------------------

#: the standard's dtypes (they render as ``xp.NAME``), and every dtype name a library may spell
STANDARD_DTYPES = frozenset(
    {
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
        "complex64",
        "complex128",
    }
)
ALL_DTYPES = STANDARD_DTYPES | {"float16", "bfloat16", "half", "double", "float", "long"}
_PYTHON_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}

AXIS_KEYWORDS = ("axis", "dim", "dims")


def _is_array(obj: object) -> bool:
    return not isinstance(obj, type) and hasattr(obj, "shape") and hasattr(obj, "dtype")


def is_int(obj: object) -> bool:
    return isinstance(obj, int) and not isinstance(obj, bool)


def is_axis(obj: object) -> bool:
    """An axis as a call spells it: an int, or a non-empty tuple/list of ints."""
    if is_int(obj):
        return True
    return isinstance(obj, tuple | list) and len(obj) > 0 and all(is_int(i) for i in obj)


def dtype_name(obj: object) -> str | None:
    """The dtype an object names (``torch.float32``, ``np.dtype('f4')``, ``np.float32``,
    ``"float32"``, ``float``), or None when it names none."""
    if isinstance(obj, type) and obj in _PYTHON_DTYPES:
        return _PYTHON_DTYPES[obj]
    if _is_array(obj) or isinstance(obj, bool | int | float | complex):
        return None
    if isinstance(obj, str):
        return obj if obj in ALL_DTYPES else None
    candidates = (
        getattr(obj, "name", None),
        getattr(obj, "__name__", None),
        str(obj).rsplit(".", 1)[-1].strip("'<>"),
    )
    for candidate in candidates:
        if isinstance(candidate, str) and candidate in ALL_DTYPES:
            return candidate
    return None


def _is_device(obj: object) -> bool:
    """A device as calls spell it: a device string, or a library's device object."""
    if isinstance(obj, str):
        return dtype_name(obj) is None
    if _is_array(obj) or obj is None or isinstance(obj, bool | int | float | type):
        return False
    return is_device(obj)


def _names_cuda(obj: object) -> bool:
    if isinstance(obj, str):
        return obj.split(":", 1)[0].strip().lower() == "cuda"
    return not _is_array(obj) and names_device_type(obj, "cuda")


def _operands(args: tuple, self_obj: object) -> tuple:
    return args if self_obj is None else (self_obj, *args)


def _call_values(args: tuple, kwargs: dict) -> Iterable[object]:
    yield from args
    if "device" in kwargs:
        yield kwargs["device"]


# --- conditions --------------------------------------------------------------------------


def _two_arrays(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ops = _operands(args, self_obj)
    if _is_array(kwargs.get("other")) and ops and _is_array(ops[0]):
        return True
    return len(ops) >= 2 and _is_array(ops[0]) and _is_array(ops[1])


def _positional_axis(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ops = _operands(args, self_obj)
    return len(ops) >= 2 and is_axis(ops[1])


def _dim_keyword(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return any(k in kwargs for k in ("dim", "dims", "keepdim"))


def _no_axis(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ops = _operands(args, self_obj)
    return len(ops) < 2 and not any(k in kwargs for k in AXIS_KEYWORDS)


def _rank(obj: object) -> int | None:
    """An array's number of dimensions, or None for what is not an array."""
    ndim = getattr(obj, "ndim", None)
    if ndim is None:
        shape = getattr(obj, "shape", None)
        return None if shape is None or isinstance(obj, type) else len(shape)
    return ndim


def _ndim_not_2(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ndim = _rank(self_obj)
    return ndim is not None and ndim != 2  # None: nothing to look at, not an array


def _beyond_matrices(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ranks = [_rank(op) for op in _operands(args, self_obj)[:2]]
    return any(r is None or r not in (1, 2) for r in ranks)


def _joined_ranks(args: tuple) -> set[int | None]:
    arrays = args[0] if args and isinstance(args[0], tuple | list) else ()
    return {_rank(a) for a in arrays}


def _vectors(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return _joined_ranks(args) == {1}


def _two_vectors(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ops = _operands(args, self_obj)
    return len(ops) == 2 and not kwargs and all(_is_array(op) and _rank(op) == 1 for op in ops)


def _several_kth(args: tuple, kwargs: dict, self_obj: object) -> bool:
    kth = kwargs.get("kth", args[1] if len(args) > 1 else None)
    return isinstance(kth, tuple | list) or _is_array(kth)


def _mixed_ranks(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ranks = _joined_ranks(args)
    return len(ranks) > 1 or bool(ranks & {0, None})


def _not_matrix_diagonal(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ops = _operands(args, self_obj)
    axes = ("dim1", "dim2", "axis1", "axis2")
    return _rank(ops[0] if ops else None) != 2 or len(ops) > 2 or any(k in kwargs for k in axes)


def _real_floating(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ops = _operands(args, self_obj)
    return bool(ops) and _is_array(ops[0]) and _dtype_kind(ops[0]) == "float"


def _device_arg(args: tuple, kwargs: dict, self_obj: object) -> bool:
    # a bare int is a device ordinal here: x.to(0) moves x to accelerator 0
    return "device" in kwargs or any(_is_device(v) or is_int(v) for v in args)


def _cuda_arg(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return any(_names_cuda(v) for v in _call_values(args, kwargs))


def _dtype_arg(args: tuple, kwargs: dict, self_obj: object) -> bool:
    if kwargs.get("dtype") is not None:
        return True
    return any(not isinstance(v, str) and dtype_name(v) is not None for v in args)


def _single_arg(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return len(args) == 1 and not kwargs


def _varargs_shape(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return len(args) >= 2 and all(is_int(a) for a in args)


def _round_decimals(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ops = _operands(args, self_obj)
    return "decimals" in kwargs or (len(ops) >= 2 and is_int(ops[1]))


def _int_round_decimals(args: tuple, kwargs: dict, self_obj: object) -> bool:
    """``np.round(i, 2)`` of an integer array: NumPy keeps its integers."""
    ops = _operands(args, self_obj)
    integer = bool(ops) and _is_array(ops[0]) and _dtype_kind(ops[0]) in ("int", "bool")
    return integer and _round_decimals(args, kwargs, self_obj)


def _ddof_keyword(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return "ddof" in kwargs


def _default_correction(args: tuple, kwargs: dict, self_obj: object) -> bool:
    explicit = "correction" in kwargs or "unbiased" in kwargs
    return not explicit and not any(isinstance(a, bool) for a in args)


def _unbiased_keyword(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return "unbiased" in kwargs


def _a_min_keyword(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return "a_min" in kwargs or "a_max" in kwargs


def _floor_rounding(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return kwargs.get("rounding_mode") == "floor"


def _trunc_rounding(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return kwargs.get("rounding_mode") == "trunc"


def _dtype_kind(self_obj: object) -> str:
    name = dtype_name(getattr(self_obj, "dtype", None)) or ""
    if name == "bool":
        return "bool"
    if name.startswith(("int", "uint", "long")):
        return "int"
    return "complex" if name.startswith("complex") else "float"


def _int_dtype(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return _dtype_kind(self_obj) == "int"


def _bool_dtype(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return _dtype_kind(self_obj) == "bool"


def _complex_dtype(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return _dtype_kind(self_obj) == "complex"


def _requires_grad(args: tuple, kwargs: dict, self_obj: object) -> bool:
    """A tensor that autograd tracks: ``float(t)`` of it warns in torch where ``t.item()``
    does not."""
    backend = backend_for(self_obj)
    return backend is not None and backend.tracks_gradient(self_obj)


def _axis_given(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return any(kwargs.get(k) is not None for k in AXIS_KEYWORDS)


def _unique_returns(args: tuple, kwargs: dict, self_obj: object) -> bool:
    keys = ("return_counts", "return_inverse", "return_index", "sorted", "equal_nan")
    return any(k in kwargs for k in keys) or len(_operands(args, self_obj)) > 1


def _counts_only(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return len(_operands(args, self_obj)) == 1 and kwargs == {"return_counts": True}


def _may_hold_nan(args: tuple, kwargs: dict, self_obj: object) -> bool:
    """The operand is not an integer or boolean array: it may hold NaNs (a float or complex
    array, or a list or scalar whose values the dtype does not tell)."""
    ops = _operands(args, self_obj)
    return not (ops and _is_array(ops[0]) and _dtype_kind(ops[0]) in ("int", "bool"))


def _counts_of_nan(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return _counts_only(args, kwargs, self_obj) and _may_hold_nan(args, kwargs, self_obj)


def _offset_not_k(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return "diagonal" in kwargs or len(_operands(args, self_obj)) >= 2


def _diag_offset(args: tuple, kwargs: dict, self_obj: object) -> bool:
    ops = _operands(args, self_obj)
    offset = kwargs.get("k", kwargs.get("diagonal", ops[1] if len(ops) > 1 else 0))
    return offset != 0


def _one_operand(args: tuple, kwargs: dict, self_obj: object) -> bool:
    return len(_operands(args, self_obj)) == 1


Condition = Callable[[tuple, dict, object], bool]

#: named predicates over ``(args, kwargs, self_obj)`` that entries refer to by ``when``
CONDITIONS: Mapping[str, Condition] = MappingProxyType(
    {
        # torch.max(a, b), x.max(y): two arrays where the standard wants maximum/minimum
        "two_arrays": _two_arrays,
        # x.sum(1), np.sum(x, 1): an int/tuple operand where the standard wants axis=
        "positional_axis": _positional_axis,
        # torch.sum(x, dim=1, keepdim=True): torch's keyword names (dim, dims, keepdim)
        "dim_keyword": _dim_keyword,
        # torch.squeeze(x): no axis where the standard requires one
        "no_axis": _no_axis,
        # x.T on an array that is not 2-D
        "ndim_not_2": _ndim_not_2,
        # np.dot(a, b) with an operand that is not 1-D or 2-D (N-D dot is not matmul)
        "beyond_matrices": _beyond_matrices,
        # np.vstack([a, b]) of 1-D arrays (rows: stack), of arrays of several ranks
        "vectors": _vectors,
        "mixed_ranks": _mixed_ranks,
        # np.partition(x, [1, 3]): several k-th positions
        "several_kth": _several_kth,
        # np.multiply.outer(a, b) of two 1-D arrays (and nothing else)
        "two_vectors": _two_vectors,
        # torch.diagonal(x) of an x that is not 2-D, or over axes other than the first two
        "not_matrix_diagonal": _not_matrix_diagonal,
        # np.exp2(x) of a real floating-point x
        "real_floating": _real_floating,
        # .to("cuda"), .to(device=...), .to(torch.device(...)), .to(0): a device, not a dtype
        "device_arg": _device_arg,
        # an argument naming a CUDA device ("cuda", "cuda:1", torch.device("cuda"))
        "cuda_arg": _cuda_arg,
        # .to(torch.float32), x.type(torch.float64): a dtype cast
        "dtype_arg": _dtype_arg,
        # np.where(cond): the one-argument form
        "single_arg": _single_arg,
        # torch.zeros(2, 3): the shape spread over positional ints
        "varargs_shape": _varargs_shape,
        # np.round(x, 2), torch.round(x, decimals=2)
        "round_decimals": _round_decimals,
        # np.round(i, 2) of an integer (or boolean) array: the result keeps its dtype
        "int_round_decimals": _int_round_decimals,
        # np.std(x, ddof=1)
        "ddof_keyword": _ddof_keyword,
        # torch.std(x): torch corrects by default (correction=1), the standard does not
        "default_correction": _default_correction,
        # torch.std(x, unbiased=False)
        "unbiased_keyword": _unbiased_keyword,
        # np.clip(x, a_min=0, a_max=1)
        "a_min_keyword": _a_min_keyword,
        # torch.div(a, b, rounding_mode="floor" | "trunc")
        "floor_rounding": _floor_rounding,
        "trunc_rounding": _trunc_rounding,
        # x.item() on an integer / boolean / complex array: int(x), bool(x), complex(x)
        "int_dtype": _int_dtype,
        "requires_grad": _requires_grad,
        "bool_dtype": _bool_dtype,
        "complex_dtype": _complex_dtype,
        # np.unique(a, axis=0): an axis= keyword (dim=, dims=) that is not None
        "axis_given": _axis_given,
        # np.unique(a, return_counts=True, ...): more than the unique values asked for
        "unique_returns": _unique_returns,
        # np.unique(a, return_counts=True): the values and their counts, nothing else
        "counts_only": _counts_only,
        # np.unique(a) of an operand that may hold NaNs (not an integer or boolean array),
        # and np.unique(a, return_counts=True) of one: NumPy joins NaNs into one value
        "may_hold_nan": _may_hold_nan,
        "counts_of_nan": _counts_of_nan,
        # np.triu(m, 1), torch.triu(m, diagonal=1): the offset not as the keyword k=
        "offset_not_k": _offset_not_k,
        # np.diag(x, k=-1), torch.diag(x, diagonal=1): an offset from the main diagonal
        "diag_offset": _diag_offset,
        # x.at[i].add(v) as JAX calls it: a standard two-operand name given one operand
        "one_operand": _one_operand,
    }
)
