"""Standard names used the non-standard way: ``torch.max(a, b)``, std/var without
correction=, an axis given by position or as dim=, one-argument where, round with
decimals, clip with a_min/a_max.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import NO_TUPLE_REWRITE, NS, USAGE, Chapter
from porter_ext.spec.table.linalg import VECTOR_NORM

chapter = Chapter()

_PAIR_NOTE = (
    "torch.{name}(a, b) is element-wise; the standard's {name} reduces one array and "
    "{pair} compares two"
)
_TUPLE_NOTE = (
    "torch returns (values, indices) here; xp.{name} gives the values and xp.arg{name} the indices"
)
for _name, _pair in (("max", "maximum"), ("min", "minimum")):
    for _kind, _status, _two, _rewrite, _example in (
        ("function", USAGE, "xp.{pair}(a, b)", "xp.{pair}({{arg0}}, {{arg1}})", "lib.{name}(x, y)"),
        ("method", NS, "xp.{pair}(x, other)", "xp.{pair}({{x}}, {{arg0}})", "x.{name}(y)"),
    ):
        chapter.add(
            "t",
            _kind,
            _name,
            _status,
            _pair,
            _two.format(pair=_pair),
            _PAIR_NOTE.format(name=_name, pair=_pair),
            when="two_arrays",
            rewrite=_rewrite.format(pair=_pair),
            example=_example.format(name=_name),
        )
        for _when, _axis in (("positional_axis", "1"), ("dim_keyword", "dim=1, keepdim=True")):
            _values = f"xp.{_name}({{x}}, axis={{axis}}, keepdims={{keepdims}})"
            chapter.add(
                "t",
                _kind,
                _name,
                _status,
                _name,
                f"(xp.{_name}(x, axis={{axis}}, keepdims={{keepdims}}), "
                f"xp.arg{_name}(x, axis={{axis}}, keepdims={{keepdims}}))",
                _TUPLE_NOTE.format(name=_name),
                when=_when,
                no_rewrite=NO_TUPLE_REWRITE,
                parts=(("values", _values), ("indices", _values.replace("xp.", "xp.arg", 1))),
                example=f"lib.{_name}(x, {_axis})"
                if _kind == "function"
                else f"x.{_name}({_axis})",
            )

_CORRECTION_NOTE = (
    "torch's {name} divides by N - 1 by default (correction=1), the standard's by N "
    "(correction=0): pass correction= to keep the numbers"
)
for _name in ("std", "var"):
    _default = f"xp.{_name}(x, axis={{axis}}, correction=1, keepdims={{keepdims}})"
    _explicit = f"xp.{_name}(x, axis={{axis}}, correction={{correction}}, keepdims={{keepdims}})"
    _note = _CORRECTION_NOTE.format(name=_name)
    chapter.add("t", "function", _name, USAGE, _name, _default, _note, when="default_correction")
    chapter.add(
        "t",
        "function",
        _name,
        USAGE,
        _name,
        _explicit,
        "the standard spells unbiased= as correction= (1 or 0)",
        when="unbiased_keyword",
    )
    chapter.add(
        "t",
        "method",
        _name,
        NS,
        _name,
        _default,
        _note,
        when="default_correction",
        rewrite=_default.replace("(x,", "({x},"),
        example=f"x.{_name}(1)",
    )
    chapter.add(
        "*",
        "function",
        _name,
        USAGE,
        _name,
        _explicit,
        "the standard spells ddof= as correction=",
        when="ddof_keyword",
    )

#: the fields of torch's sort, (values, indices), the function's and the method's
SORT_PARTS = (
    ("values", "xp.sort({x}, axis={axis}, descending={descending})"),
    ("indices", "xp.argsort({x}, axis={axis}, descending={descending})"),
)
chapter.add(
    "t",
    "function",
    "sort",
    USAGE,
    "sort",
    "(xp.sort(x, axis={axis}), xp.argsort(x, axis={axis}))",
    "torch.sort returns (values, indices); the standard's sort returns the values and "
    "argsort the indices",
    no_rewrite=NO_TUPLE_REWRITE,
    parts=SORT_PARTS,
    example="lib.sort(x, descending=True)",
)

#: rounding an integer array to decimals: NumPy keeps the dtype, the scaled form does not
INT_ROUND = (
    "round of an integer array keeps its integers (x itself for decimals >= 0), while the "
    "standard's round has no decimals and the scaled form gives floats"
)
_AXIS_NOTE = "the standard takes axis as a keyword argument"
_DIM_NOTE = "the standard spells dim= as axis= and keepdim= as keepdims="
for _name in (
    "sum",
    "prod",
    "mean",
    "std",
    "var",
    "max",
    "min",
    "any",
    "all",
    "argmax",
    "argmin",
    "count_nonzero",
):
    _template = f"xp.{_name}(x, axis={{axis}}, keepdims={{keepdims}})"
    _rewrite = f"xp.{_name}({{x}}, axis={{axis}}, keepdims={{keepdims}})"
    _input = "b" if _name in ("any", "all") else "x"
    chapter.add(
        "*",
        "function",
        _name,
        USAGE,
        _name,
        _template,
        _AXIS_NOTE,
        when="positional_axis",
        rewrite=_rewrite,
        example=f"lib.{_name}({_input}, 1)",
    )
    if _name in ("max", "min", "std", "var"):  # torch's own entries take these with dim=
        chapter.add("*", "function", _name, USAGE, _name, _template, _DIM_NOTE, when="dim_keyword")
    else:
        chapter.add(
            "*",
            "function",
            _name,
            USAGE,
            _name,
            _template,
            _DIM_NOTE,
            when="dim_keyword",
            rewrite=_rewrite,
            example=f"lib.{_name}({_input}, dim=1)",
        )
for _name, _template in [
    ("concat", "xp.concat(arrays, axis={axis})"),
    ("stack", "xp.stack(arrays, axis={axis})"),
    ("flip", "xp.flip(x, axis={axis})"),
    ("sort", "xp.sort(x, axis={axis})"),
    ("argsort", "xp.argsort(x, axis={axis})"),
]:
    _rewrite = _template.replace("(x,", "({x},").replace("(arrays,", "({x},")
    _input = "[x, y]" if _name in ("concat", "stack") else "x"
    chapter.add(
        "*",
        "function",
        _name,
        USAGE,
        _name,
        _template,
        _AXIS_NOTE,
        when="positional_axis",
        rewrite=_rewrite,
        example=f"lib.{_name}({_input}, 1)",
    )
    if _name == "sort":  # torch's own entry: torch.sort returns (values, indices)
        chapter.add("*", "function", _name, USAGE, _name, _template, _DIM_NOTE, when="dim_keyword")
        continue
    _dim = "dims=(1,)" if _name == "flip" else "dim=1"
    chapter.add(
        "*",
        "function",
        _name,
        USAGE,
        _name,
        _template,
        _DIM_NOTE,
        when="dim_keyword",
        rewrite=_rewrite,
        example=f"lib.{_name}({_input}, {_dim})",
    )
chapter.add(
    "*",
    "function",
    "roll",
    USAGE,
    "roll",
    "xp.roll(x, {arg1}, axis={axis_kw})",
    _DIM_NOTE,
    when="dim_keyword",
)
chapter.add(
    "*",
    "function",
    "squeeze",
    USAGE,
    "squeeze",
    "xp.squeeze(x, axis=...)",
    "the standard's squeeze needs the axis to remove",
    when="no_axis",
)
chapter.add(
    "*",
    "function",
    "squeeze",
    USAGE,
    "squeeze",
    "xp.squeeze(x, axis={axis})",
    _DIM_NOTE,
    when="dim_keyword",
)
chapter.add(
    "*",
    "function",
    "linalg.vector_norm",
    USAGE,
    "linalg.vector_norm",
    VECTOR_NORM,
    _DIM_NOTE,
    when="dim_keyword",
)
chapter.add(
    "*",
    "function",
    "where",
    USAGE,
    "nonzero",
    "xp.nonzero(condition)",
    "one-argument where is nonzero; the standard's where always takes three",
    when="single_arg",
    rewrite="xp.nonzero({x})",
    example="lib.where(b)",
)
chapter.add(
    "*",
    "function",
    "round",
    USAGE,
    None,
    "x unchanged for decimals >= 0; xp.round(x / 10.0**-{decimals}) * 10**-{decimals} cast back",
    INT_ROUND,
    when="int_round_decimals",
    no_rewrite=f"{INT_ROUND}: left as written",
)
chapter.add(
    "*",
    "function",
    "round",
    USAGE,
    "round",
    "xp.round(x * 10.0**{decimals}) / 10.0**{decimals}",
    "the standard's round has no decimals",
    when="round_decimals",
    rewrite="xp.round({x} * 10.0**{decimals}) / 10.0**{decimals}",
    example="lib.round(x, 1)",
)
chapter.add(
    "*",
    "function",
    "clip",
    USAGE,
    "clip",
    "xp.clip(x, min={min}, max={max})",
    "the standard spells a_min/a_max as min/max",
    when="a_min_keyword",
    rewrite="xp.clip({x}, min={min}, max={max})",
    example="lib.clip(x, a_min=0.0, a_max=1.0)",
)

ENTRIES = chapter.entries
