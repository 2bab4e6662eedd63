"""Renamed element-wise functions (``arccos`` is ``acos``, ``torch.sub`` is ``subtract``),
JAX's ``.at[]`` updates, and the element-wise functions the standard lacks (exp2, rsqrt).
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import NS, Chapter, renamed

chapter = Chapter()

for _name, _std, _libs in [
    ("absolute", "abs", "njct"),
    ("fabs", "abs", "njc"),
    ("arccos", "acos", "njct"),
    ("arcsin", "asin", "njct"),
    ("arctan", "atan", "njct"),
    ("arccosh", "acosh", "njct"),
    ("arcsinh", "asinh", "njct"),
    ("arctanh", "atanh", "njct"),
    ("invert", "bitwise_invert", "njc"),
    ("bitwise_not", "bitwise_invert", "njt"),
    ("rint", "round", "njc"),
    ("around", "round", "njc"),
    ("fix", "trunc", "nct"),
    ("conjugate", "conj", "njc"),
    ("neg", "negative", "t"),
]:
    _input = "i" if "invert" in _std else ("p" if _name.startswith("arc") else "x")
    chapter.function(
        _libs,
        _name,
        _std,
        f"xp.{_std}(x)",
        renamed(_std),
        rewrite=f"xp.{_std}({{x}})",
        example=f"lib.{_name}({_input})",
    )

# x.at[idx].add(v): the recorder sees JAX's update methods as jax functions of one operand
_AT_NOTE = (
    "x.at[idx].{op}(value) is JAX's functional update, not the standard's {op}; "
    "array-api-extra's at does the same on every library"
)
for _op in ("add", "multiply", "divide", "power"):  # two-operand standard names, one given
    chapter.add(
        "j",
        "function",
        _op,
        NS,
        None,
        f"xpx.at(x, idx).{_op}(value)",
        _AT_NOTE.format(op=_op),
        when="one_operand",
        no_rewrite="the array and the index are in the .at[...] before the call",
    )

for _name, _std, _libs in [
    ("arctan2", "atan2", "njct"),
    ("power", "pow", "njc"),
    ("left_shift", "bitwise_left_shift", "njc"),
    ("right_shift", "bitwise_right_shift", "njc"),
    ("true_divide", "divide", "njct"),
    ("mod", "remainder", "njc"),
    ("sub", "subtract", "t"),
    ("mul", "multiply", "t"),
    ("eq", "equal", "t"),
    ("ne", "not_equal", "t"),
    ("gt", "greater", "t"),
    ("ge", "greater_equal", "t"),
    ("lt", "less", "t"),
    ("le", "less_equal", "t"),
]:
    _pair = "i, j" if "shift" in _name else "p, q"
    chapter.function(
        _libs,
        _name,
        _std,
        f"xp.{_std}(x1, x2)",
        renamed(_std),
        rewrite=f"xp.{_std}({{x}}, {{arg1}})",
        example=f"lib.{_name}({_pair})",
    )

chapter.function(
    "njct",
    "float_power",
    "pow",
    "xp.pow(xp.astype(x1, xp.float64), x2)",
    "float_power computes in float64; pow keeps the input dtype",
    rewrite="xp.pow(xp.astype({x}, xp.float64), {arg1})",
    example="lib.float_power(p, q)",
)
chapter.add(
    "t",
    "function",
    "div",
    NS,
    "floor_divide",
    "xp.floor_divide(x1, x2)",
    "rounding_mode='floor' is the standard's floor_divide",
    when="floor_rounding",
    rewrite="xp.floor_divide({x}, {arg1})",
    example="lib.div(i, j, rounding_mode='floor')",
)
chapter.add(
    "t",
    "function",
    "div",
    NS,
    "trunc",
    "xp.trunc(xp.divide(x1, x2))",
    "the standard has no truncating division; divide, then trunc (a floating result: for "
    "integer arrays xp.astype it back, or use floor_divide where both signs are known)",
    when="trunc_rounding",
    rewrite="xp.trunc(xp.divide({x}, {arg1}))",
    example="lib.div(p, q, rounding_mode='trunc')",
)
chapter.function(
    "t",
    "div",
    "divide",
    "xp.divide(x1, x2)",
    renamed("divide"),
    rewrite="xp.divide({x}, {arg1})",
    example="lib.div(p, q)",
)
#: exp2 as 2.0 ** x, and why an exp2 of other dtypes has no rewrite (the function's
#: entries here, the method's in `math_methods`)
EXP2_NOTE = "the standard has no exp2; 2.0 ** x (the array's __rpow__) keeps x's floating dtype"
EXP2_CAST = (
    "exp2 of an array that is not floating-point gives floats, and 2.0 ** x would mix kinds: "
    "cast first, 2.0 ** xp.astype(x, xp.float64)"
)
chapter.add(
    "njct",
    "function",
    "exp2",
    NS,
    "pow",
    "2.0 ** x",
    EXP2_NOTE,
    when="real_floating",
    rewrite="2.0 ** {x}",
    example="lib.exp2(x)",
)
chapter.function(
    "njct",
    "exp2",
    None,
    "xp.backend.exp2(x)",
    "the standard has no exp2; keep it through the escape hatch xp.backend.exp2(x) to mark "
    "it as acknowledged (or write xp.pow(2.0, x), scalars accepted from 2024.12)",
    no_rewrite=EXP2_CAST,
)
chapter.function(
    "t",
    "rsqrt",
    "sqrt",
    "1 / xp.sqrt(x)",
    "the standard has no rsqrt",
    rewrite="1 / xp.sqrt({x})",
    example="lib.rsqrt(p)",
)
chapter.function(
    "t",
    "clamp",
    "clip",
    "xp.clip(x, min={min}, max={max})",
    renamed("clip"),
    rewrite="xp.clip({x}, min={min}, max={max})",
    example="lib.clamp(x, 0.0, 1.0)",
)

ENTRIES = chapter.entries
