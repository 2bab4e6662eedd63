"""Indexing and searching: gather and take, nonzero, unique and its ``return_*`` forms,
topk, and the questions torch asks of a tensor (is_tensor, is_floating_point).
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import NO_TUPLE_REWRITE, NS, Chapter, renamed

chapter = Chapter()

#: why unique of an array that may hold NaNs has no rewrite (NumPy, JAX, CuPy)
_JOINS_NANS = (
    "NumPy, JAX and CuPy join NaNs into one value (equal_nan=True) and count them together, "
    "where the standard's unique_* functions keep each NaN apart: on an array that may "
    "hold NaNs (not an integer or boolean array) the standard's form gives other values"
)


def _joins_nans(when: str, standard: str) -> None:
    """NumPy's, JAX's and CuPy's unique of an array that may hold NaNs (``when``): no
    rewrite into ``standard``, whose set semantics part from theirs on NaNs."""
    chapter.add(
        "njc",
        "function",
        "unique",
        NS,
        None,
        f"{standard}, where x holds no NaN",
        _JOINS_NANS,
        when=when,
        no_rewrite=f"{_JOINS_NANS}: left as written",
    )


chapter.function(
    "t",
    "gather",
    "take_along_axis",
    "xp.take_along_axis(x, indices, axis={axis})",
    "the standard spells it take_along_axis (2024.12)",
)
chapter.function("t", "index_select", "take", "xp.take(x, indices, axis={axis})", renamed("take"))
chapter.function("t", "masked_select", None, "x[mask]", "boolean indexing is standard")
chapter.function(
    "njct",
    "argwhere",
    "nonzero",
    "xp.stack(xp.nonzero(x), axis=-1)",
    "the standard has nonzero, which returns one index array per axis",
)
chapter.add(
    "njct",
    "function",
    "unique",
    NS,
    None,
    "xp.backend.unique(x, axis={axis})",
    "unique along an axis (unique rows) is not in the standard: xp.unique_values flattens; "
    "keep it through the escape hatch",
    when="axis_given",
    no_rewrite="the standard has no unique along an axis",
)
_joins_nans("counts_of_nan", "xp.unique_counts(x)")
chapter.add(
    "njct",
    "function",
    "unique",
    NS,
    "unique_counts",
    "xp.unique_counts(x)",
    "unique with return_counts=True alone is the standard's unique_counts (values, counts); "
    "np.unique sorts, as every installed library's unique_counts does though the standard "
    "does not promise it; on integers and booleans there is no NaN to count apart "
    "(torch.unique keeps NaNs apart, as the standard does)",
    when="counts_only",
    rewrite="xp.unique_counts({x})",
    example="lib.unique(i, return_counts=True)",
)
chapter.add(
    "njct",
    "function",
    "unique",
    NS,
    "unique_all",
    "xp.unique_all(x)",
    "return_counts/return_inverse/return_index map to xp.unique_counts, xp.unique_inverse "
    "and xp.unique_all, whose named tuples order their fields differently",
    when="unique_returns",
    no_rewrite="the standard's unique_* functions return named tuples in another order",
)
_joins_nans("may_hold_nan", "xp.sort(xp.unique_values(x))")
chapter.function(
    "njct",
    "unique",
    "unique_values",
    "xp.sort(xp.unique_values(x))",
    "np.unique sorts its result; xp.unique_values promises no order, so sort it",
    rewrite="xp.sort(xp.unique_values({x}))",
    example="lib.unique(i)",
)
chapter.add(
    "t",
    "function",
    "topk",
    NS,
    "sort",
    "xp.sort(x, axis=-1, descending=True)[..., :k]",
    "the standard has no topk; sort (values) or argsort (indices) and slice",
    no_rewrite=NO_TUPLE_REWRITE,
    example="lib.topk(v, 2)",
    parts=(
        ("values", "xp.sort({x}, axis=-1, descending=True)[..., :{arg1}]"),
        ("indices", "xp.argsort({x}, axis=-1, descending=True, stable=True)[..., :{arg1}]"),
    ),
)
# only the k-th element's place is specified: the compare stage judges the results as
# partitions (`porter_ext.compare.kinds.partition_order`), not element by element
for _name in ("partition", "argpartition"):
    chapter.add(
        "njc",
        "function",
        _name,
        NS,
        "sort",
        f"xp.{_name.replace('partition', 'sort')}(a, axis=-1): sorted, every k-th is in place",
        "array-api-extra's partition takes one k-th position",
        when="several_kth",
        no_rewrite="several k-th positions: array-api-extra's partition takes one",
    )
    chapter.function(
        "njc",
        _name,
        None,
        f"xpx.{_name}(a, kth, axis=-1)",
        f"not in the standard; array-api-extra has {_name}",
        rewrite=f"xpx.{_name}({{x}}, {{arg1}}, axis={{axis_kw}})",
        example=f"lib.{_name}(x, 1)",
    )
chapter.function(
    "t",
    "is_tensor",
    None,
    "array_api_compat.is_array_api_obj(x)",
    "the standard has no array test; array-api-compat has one for every library",
)
chapter.function(
    "t",
    "is_floating_point",
    "isdtype",
    "xp.isdtype(x.dtype, 'real floating')",
    "the standard asks dtype questions with isdtype",
)
chapter.function(
    "t",
    "is_complex",
    "isdtype",
    "xp.isdtype(x.dtype, 'complex floating')",
    "the standard asks dtype questions with isdtype",
)

ENTRIES = chapter.entries
