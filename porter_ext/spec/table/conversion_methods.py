"""Array methods that cast, copy, make a new array from an array, or ask what an array is
(its size, rank or dtype kind): namespace functions or attributes in the standard.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import METHOD_NOTE, NS, Chapter

chapter = Chapter()

chapter.method(
    "*",
    "astype",
    "astype",
    "xp.astype(x, {dtype})",
    "the standard has the function xp.astype, not the method",
    rewrite="xp.astype({x}, {dtype}, copy={copy})",
    example="x.astype(int)",
)
# torch's casts return x itself when it has the dtype already: copy=False says the same
chapter.add(
    "t",
    "method",
    "type",
    NS,
    "astype",
    "xp.astype(x, {dtype}, copy=False)",
    "a dtype cast is xp.astype in the standard",
    when="dtype_arg",
    rewrite="xp.astype({x}, {dtype}, copy=False)",
    example="x.type(lib.float32)",
)
chapter.method("t", "type", "dtype", "x.dtype", "the standard array carries its dtype in x.dtype")
chapter.method("t", "type_as", "astype", "xp.astype(x, y.dtype)", METHOD_NOTE)
for _name, _dtype in [
    ("float", "float32"),
    ("double", "float64"),
    ("half", "float16"),
    ("int", "int32"),
    ("long", "int64"),
    ("bool", "bool"),
]:
    _note = "a dtype cast is xp.astype in the standard"
    if _dtype == "float16":
        _note += "; float16 is not one of the standard's dtypes"
    if _dtype == "float16":  # not a standard dtype: no library-independent rewrite
        chapter.method("t", _name, "astype", f"xp.astype(x, xp.{_dtype})", _note)
        continue
    chapter.method(
        "t",
        _name,
        "astype",
        f"xp.astype(x, xp.{_dtype}, copy=False)",
        _note,
        rewrite=f"xp.astype({{x}}, xp.{_dtype}, copy=False)",
        example=f"x.{_name}()",
    )

chapter.method(
    "*",
    "copy",
    "asarray",
    "xp.asarray(x, copy=True)",
    METHOD_NOTE,
    rewrite="xp.asarray({x}, copy=True)",
    example="x.copy()",
)
chapter.method(
    "t",
    "clone",
    "asarray",
    "xp.asarray(x, copy=True)",
    METHOD_NOTE,
    rewrite="xp.asarray({x}, copy=True)",
    example="x.clone()",
)
chapter.method(
    "t",
    "contiguous",
    None,
    "x",
    "memory layout is not part of the standard; drop it (xp.asarray(x, copy=True) when "
    "a fresh buffer is the point)",
    # the same values: what reads it next (a view, a reshape) is judged by the replays
    rewrite="{x}",
    example="x.contiguous()",
)
chapter.method(
    "t",
    "detach",
    None,
    "x",
    "autograd is outside the standard; detach where tensors enter the array-API code",
)
for _name, _std, _template in [
    ("new_zeros", "zeros", "xp.zeros({shape}, dtype=x.dtype, device=x.device)"),
    ("new_ones", "ones", "xp.ones({shape}, dtype=x.dtype, device=x.device)"),
    ("new_empty", "empty", "xp.empty({shape}, dtype=x.dtype, device=x.device)"),
    ("new_full", "full", "xp.full({arg0}, {arg1}, dtype=x.dtype, device=x.device)"),
    ("new_tensor", "asarray", "xp.asarray(data, dtype=x.dtype, device=x.device)"),
]:
    _rewrite = (
        None if _name in ("new_tensor", "new_empty") else (_template.replace("x.", "{x}."))
    )  # an empty array's values, a new tensor's data: nothing to compare
    chapter.method(
        "t",
        _name,
        _std,
        _template,
        METHOD_NOTE + "; take dtype and device from x",
        **(
            {
                "rewrite": _rewrite,
                "example": "x.new_full((2, 2), 1.5)"
                if _name == "new_full"
                else f"x.{_name}((2, 2))",
            }
            if _rewrite
            else {}
        ),
    )
chapter.method(
    "t", "is_floating_point", "isdtype", "xp.isdtype(x.dtype, 'real floating')", METHOD_NOTE
)
chapter.method("t", "is_complex", "isdtype", "xp.isdtype(x.dtype, 'complex floating')", METHOD_NOTE)
chapter.add(
    "t",
    "method",
    "size",
    NS,
    "shape",
    "x.shape[{arg0}]",
    "the standard's x.size is the element count; one axis's length is x.shape[axis]",
    when="single_arg",
    rewrite="{x}.shape[{arg0}]",
    example="x.size(1)",
)
chapter.method(
    "t",
    "size",
    "shape",
    "x.shape",
    "the standard's x.size is the element count",
    rewrite="{x}.shape",
    example="x.size()",
)
chapter.method(
    "t",
    "dim",
    "ndim",
    "x.ndim",
    "the standard spells it x.ndim",
    rewrite="{x}.ndim",
    example="x.dim()",
)
chapter.method("t", "ndimension", "ndim", "x.ndim", "the standard spells it x.ndim")
for _name in ("numel", "nelement"):
    chapter.method(
        "t",
        _name,
        "size",
        "math.prod(x.shape)",
        "the standard's x.size is the element count but may be None (and is a method in "
        "PyTorch); the product of the shape works everywhere",
        rewrite="math.prod({x}.shape)",
        example=f"x.{_name}()",
    )

ENTRIES = chapter.entries
