"""Array methods that compute: reductions, sorting, element-wise and arithmetic methods, and
in-place updates. The standard array has no methods beyond dunders, to_device and
__dlpack__: each is a namespace function.
"""

from __future__ import annotations

import re

from porter_ext.spec.table.chapter import METHOD_NOTE, NO_TUPLE_REWRITE, NS, Chapter, renamed
from porter_ext.spec.table.elementwise import EXP2_CAST, EXP2_NOTE
from porter_ext.spec.table.nn import RELU_NOTE, SIGMOID, SOFTMAX, SOFTMAX_REWRITE
from porter_ext.spec.table.usage import INT_ROUND, SORT_PARTS

chapter = Chapter()

for _name in ("sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin"):
    chapter.method(
        "*",
        _name,
        _name,
        f"xp.{_name}(x, axis={{axis}}, keepdims={{keepdims}})",
        METHOD_NOTE,
        rewrite=f"xp.{_name}({{x}}, axis={{axis}}, keepdims={{keepdims}})",
        example=f"{'b' if _name in ('any', 'all') else 'x'}.{_name}(1)",
    )
for _name in ("std", "var"):
    chapter.method(
        "*",
        _name,
        _name,
        f"xp.{_name}(x, axis={{axis}}, correction={{correction}}, keepdims={{keepdims}})",
        METHOD_NOTE + "; NumPy's ddof= is the standard's correction=",
        rewrite=f"xp.{_name}({{x}}, axis={{axis}}, correction={{correction}}, "
        "keepdims={keepdims})",
        example=f"x.{_name}(1, ddof=1)",
    )
chapter.method(
    "*",
    "cumsum",
    "cumulative_sum",
    "xp.cumulative_sum(x, axis={axis})",
    METHOD_NOTE,
    rewrite="xp.cumulative_sum({x}, axis={axis})",
    example="x.cumsum(1)",
)
chapter.method(
    "*",
    "cumprod",
    "cumulative_prod",
    "xp.cumulative_prod(x, axis={axis})",
    METHOD_NOTE,
    rewrite="xp.cumulative_prod({x}, axis={axis})",
    example="x.cumprod(1)",
)
chapter.method(
    "*",
    "argsort",
    "argsort",
    "xp.argsort(x, axis={axis})",
    METHOD_NOTE,
    rewrite="xp.argsort({x}, axis={axis})",
    example="x.argsort(1)",
)
chapter.method(
    "nc",
    "sort",
    "sort",
    "x[...] = xp.sort(x, axis={axis})",
    "NumPy's x.sort() sorts x in place and returns None: write xp.sort(x) into x, which "
    "every view of x shares (rebinding the name would leave them unsorted)",
    rewrite="{x}[...] = xp.sort({x}, axis={axis})",
    example="v.sort()",
)
chapter.method(
    "t",
    "sort",
    "sort",
    "(xp.sort(x, axis={axis}), xp.argsort(x, axis={axis}))",
    "torch's x.sort() returns (values, indices): xp.sort gives the values, xp.argsort the indices",
    no_rewrite=NO_TUPLE_REWRITE,
    parts=SORT_PARTS,
    example="x.sort(dim=0, descending=True)",
)
chapter.method(
    "j",
    "sort",
    "sort",
    "xp.sort(x, axis={axis})",
    METHOD_NOTE,
    rewrite="xp.sort({x}, axis={axis})",
    example="v.sort()",
)
chapter.method(
    "*",
    "sort",
    "sort",
    "xp.sort(x, axis={axis})",
    "NumPy's x.sort() sorts in place and returns None, torch's returns (values, indices); "
    "xp.sort returns the sorted values",
)
chapter.method(
    "*",
    "nonzero",
    "nonzero",
    "xp.nonzero(x)",
    "xp.nonzero returns a tuple of index arrays (torch's method returns one 2-D tensor)",
)

_CONJ_VIEW = (
    "NumPy's x.conj() of a real array returns a view of x, xp.conj a copy: a write through "
    "the result would no longer reach x"
)
for _name, _std in [
    ("abs", "abs"),
    ("exp", "exp"),
    ("log", "log"),
    ("sqrt", "sqrt"),
    ("sin", "sin"),
    ("cos", "cos"),
    ("tan", "tan"),
    ("tanh", "tanh"),
    ("sinh", "sinh"),
    ("cosh", "cosh"),
    ("asin", "asin"),
    ("acos", "acos"),
    ("atan", "atan"),
    ("floor", "floor"),
    ("ceil", "ceil"),
    ("trunc", "trunc"),
    ("sign", "sign"),
    ("log1p", "log1p"),
    ("expm1", "expm1"),
    ("log2", "log2"),
    ("log10", "log10"),
    ("square", "square"),
    ("reciprocal", "reciprocal"),
    ("neg", "negative"),
    ("negative", "negative"),
    ("conj", "conj"),
    ("conjugate", "conj"),
    ("isnan", "isnan"),
    ("isinf", "isinf"),
    ("isfinite", "isfinite"),
    ("logical_not", "logical_not"),
]:
    if _std == "conj":  # x.conj() of a real array is x itself in NumPy, a copy in xp.conj
        chapter.method("*", _name, _std, "xp.conj(x)", METHOD_NOTE, no_rewrite=_CONJ_VIEW)
        continue
    chapter.method(
        "*",
        _name,
        _std,
        f"xp.{_std}(x)",
        METHOD_NOTE,
        rewrite=f"xp.{_std}({{x}})",
        example=f"{'b' if _name == 'logical_not' else 'p'}.{_name}()",
    )
chapter.method(
    "t", "conj", "conj", "xp.conj(x)", METHOD_NOTE, rewrite="xp.conj({x})", example="p.conj()"
)
chapter.add(
    "*",
    "method",
    "round",
    NS,
    None,
    "x unchanged for decimals >= 0; xp.round(x / 10.0**-{decimals}) * 10**-{decimals} cast back",
    INT_ROUND,
    when="int_round_decimals",
    no_rewrite=f"{INT_ROUND}: left as written",
)
chapter.add(
    "*",
    "method",
    "round",
    NS,
    "round",
    "xp.round(x * 10.0**{decimals}) / 10.0**{decimals}",
    METHOD_NOTE + "; the standard's round has no decimals: scale, round, scale back",
    when="round_decimals",
    rewrite="xp.round({x} * 10.0**{decimals}) / 10.0**{decimals}",
    example="x.round(1)",
)
chapter.method(
    "*",
    "round",
    "round",
    "xp.round(x)",
    METHOD_NOTE + "; the standard's round has no decimals",
    rewrite="xp.round({x})",
    example="x.round()",
)
chapter.method(
    "*",
    "clip",
    "clip",
    "xp.clip(x, min={min}, max={max})",
    METHOD_NOTE,
    rewrite="xp.clip({x}, min={min}, max={max})",
    example="x.clip(0.0, 1.0)",
)
chapter.method(
    "t",
    "clamp",
    "clip",
    "xp.clip(x, min={min}, max={max})",
    renamed("xp.clip"),
    rewrite="xp.clip({x}, min={min}, max={max})",
    example="x.clamp(0.0, 1.0)",
)
chapter.add(
    "*",
    "method",
    "exp2",
    NS,
    "pow",
    "2.0 ** x",
    EXP2_NOTE,
    when="real_floating",
    rewrite="2.0 ** {x}",
    example="x.exp2()",
)
chapter.method(
    "*",
    "exp2",
    None,
    "xp.backend.exp2(x)",
    "the standard has no exp2; keep it through the escape hatch xp.backend.exp2(x)",
    no_rewrite=EXP2_CAST,
)
chapter.method("t", "sigmoid", None, SIGMOID, "the standard has no sigmoid")
chapter.method("t", "relu", "maximum", "xp.maximum(x, 0)", RELU_NOTE)
chapter.method(
    "t",
    "softmax",
    None,
    SOFTMAX,
    "the standard has no softmax",
    rewrite=SOFTMAX_REWRITE,
    example="x.softmax(1)",
)

for _name, _std in [
    ("add", "add"),
    ("sub", "subtract"),
    ("mul", "multiply"),
    ("div", "divide"),
    ("pow", "pow"),
    ("maximum", "maximum"),
    ("minimum", "minimum"),
    ("remainder", "remainder"),
    ("eq", "equal"),
    ("ne", "not_equal"),
    ("gt", "greater"),
    ("ge", "greater_equal"),
    ("lt", "less"),
    ("le", "less_equal"),
]:
    chapter.method(
        "t",
        _name,
        _std,
        f"xp.{_std}(x, {{arg0}})",
        METHOD_NOTE,
        rewrite=f"xp.{_std}({{x}}, {{arg0}})",
        example=f"p.{_name}(q)",
    )
for _libs, _name in (("t", "matmul"), ("t", "mm"), ("*", "dot")):
    chapter.method(
        _libs,
        _name,
        "matmul",
        "xp.matmul(x, y)",
        METHOD_NOTE + "; for two 1-D arrays use xp.vecdot",
        rewrite="xp.matmul({x}, {arg0})",
        example=f"x.{_name}(m)",
    )

_INPLACE_NOTE = (
    "in-place methods are outside the standard: write the new values into the array "
    "(x[...] = ...), so that every view of it sees them, as it sees the method's; "
    "rebinding the name would leave the arrays it shares memory with as they were"
)
for _name, _std, _suggestion in [
    ("add_", "add", "x[...] = xp.add(x, {arg0})"),
    ("sub_", "subtract", "x[...] = xp.subtract(x, {arg0})"),
    ("mul_", "multiply", "x[...] = xp.multiply(x, {arg0})"),
    ("div_", "divide", "x[...] = xp.divide(x, {arg0})"),
    ("clamp_", "clip", "x[...] = xp.clip(x, min={min}, max={max})"),
    ("zero_", "zeros_like", "x[...] = 0"),
    ("fill_", "full_like", "x[...] = {arg0}"),
]:
    _example = {"clamp_": "x.clamp_(0.0, 1.0)", "zero_": "x.zero_()", "fill_": "x.fill_(2.0)"}.get(
        _name, f"x.{_name}(y)"
    )
    chapter.method(
        "t",
        _name,
        _std,
        _suggestion,
        _INPLACE_NOTE,
        rewrite=re.sub(r"\bx\b", "{x}", _suggestion),
        example=_example,
    )
chapter.method(
    "nc",
    "fill",
    "full_like",
    "x[...] = {arg0}",
    _INPLACE_NOTE,
    rewrite="{x}[...] = {arg0}",
    example="x.fill(2.0)",
)

ENTRIES = chapter.entries
