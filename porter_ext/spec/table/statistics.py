"""Statistics and comparison: amax/amin, cumulative sums and products, the NaN-aware
reductions and closeness tests array-api-extra supplies, and whole-array equality.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import Chapter, renamed

chapter = Chapter()

for _name, _std in (("amax", "max"), ("amin", "min")):
    chapter.function(
        "njct",
        _name,
        _std,
        f"xp.{_std}(x, axis={{axis}}, keepdims={{keepdims}})",
        renamed(_std),
        rewrite=f"xp.{_std}({{x}}, axis={{axis}}, keepdims={{keepdims}})",
        example=f"lib.{_name}(x, 1)",
    )
chapter.function(
    "njct",
    "cumsum",
    "cumulative_sum",
    "xp.cumulative_sum(x, axis={axis})",
    "cumulative_sum (2023.12) needs axis= for arrays with more than one dimension, where "
    "NumPy flattens",
    rewrite="xp.cumulative_sum({x}, axis={axis})",
    example="lib.cumsum(x, 1)",
)
chapter.function(
    "njct",
    "cumprod",
    "cumulative_prod",
    "xp.cumulative_prod(x, axis={axis})",
    "cumulative_prod (2024.12) needs axis= for arrays with more than one dimension, where "
    "NumPy flattens",
    rewrite="xp.cumulative_prod({x}, axis={axis})",
    example="lib.cumprod(x, 1)",
)
chapter.function(
    "njc",
    "ptp",
    "max",
    "xp.max(x, axis={axis}) - xp.min(x, axis={axis})",
    "the standard has no ptp",
)
chapter.function(
    "njc",
    "average",
    "mean",
    "xp.mean(x, axis={axis})",
    "with weights: xp.sum(x * w, axis=...) / xp.sum(w, axis=...)",
)
chapter.function(
    "njct",
    "median",
    None,
    "xp.backend.median(x)",
    "the standard has no median (nor quantile); keep it through the escape hatch",
    no_rewrite="the standard has no median: the nearest portable form sorts along the axis "
    "(xp.sort) and takes the middle element, or the mean of the two middle ones for an "
    "even length; torch's median takes the lower one instead, and where the array holds "
    "a NaN the median is NaN while the sorted array's middle is a number, so no one "
    "rewrite holds",
)
_NO_QUANTILE = (
    "the standard has no quantile: the portable form sorts along the axis (xp.sort) and "
    "interpolates between the two nearest ranks (NumPy's default method='linear'), a "
    "dozen terms over the sorted array that would be written into the cell, and a NaN "
    "anywhere makes NumPy's result NaN where the sorted array's ranks are numbers; write "
    "it once as a function of your own, or keep it through the escape hatch"
)
for _name, _libs in (("percentile", "njc"), ("quantile", "njct")):
    chapter.function(
        _libs,
        _name,
        None,
        f"xp.backend.{_name}(x, ...)",
        "the standard has no quantiles; keep it through the escape hatch",
        no_rewrite=_NO_QUANTILE,
    )
for _name, _libs in [
    ("nansum", "njct"),
    ("nanmean", "njct"),
    ("nanmax", "njc"),
    ("nanmin", "njc"),
    ("nan_to_num", "njct"),
]:
    chapter.function(
        _libs,
        _name,
        None,
        f"xpx.{_name}(x)" if _name == "nan_to_num" else f"xpx.{_name}(x, axis={{axis}})",
        f"not in the standard; array-api-extra has {_name}",
        # nan_to_num's nan=/posinf=/neginf= and the reductions' keepdims are arguments
        # array-api-extra does not take: the rendering refuses the call that passes them
        rewrite=f"xpx.{_name}({{x}})"
        if _name == "nan_to_num"
        else f"xpx.{_name}({{x}}, axis={{axis}})",
        example=f"lib.{_name}(x)" if _name == "nan_to_num" else f"lib.{_name}(x, axis=1)",
    )
chapter.function(
    "njct",
    "cov",
    None,
    "xpx.cov(m)",
    "not in the standard; array-api-extra has cov",
    rewrite="xpx.cov({x})",
    example="lib.cov(x)",
)
chapter.function(
    "njct",
    "isclose",
    None,
    "xpx.isclose(a, b)",
    "not in the standard; array-api-extra has isclose (rtol/atol as in NumPy)",
    rewrite="xpx.isclose({x}, {arg1}, rtol={rtol}, atol={atol}, equal_nan={equal_nan})",
    example="lib.isclose(x, y, atol=2.0)",
)
chapter.function(
    "njct",
    "isin",
    None,
    "xpx.isin(a, b)",
    "not in the standard; array-api-extra has isin",
    rewrite="xpx.isin({x}, {arg1}, assume_unique={assume_unique}, invert={invert})",
    example="lib.isin(i, j)",
)
chapter.function(
    "njct",
    "allclose",
    None,
    "bool(xp.all(xpx.isclose(a, b)))",
    "not in the standard; array-api-extra has isclose (a host sync through bool)",
)
chapter.function(
    "njc",
    "array_equal",
    None,
    "a.shape == b.shape and bool(xp.all(a == b))",
    "not in the standard (a host sync through bool)",
)
chapter.function(
    "t",
    "equal",
    None,
    "a.shape == b.shape and bool(xp.all(a == b))",
    "torch.equal compares whole tensors; the standard's equal is element-wise",
)
for _name, _std, _libs in [
    ("deg2rad", "deg2rad", "njct"),
    ("radians", "deg2rad", "njc"),
    ("rad2deg", "rad2deg", "njct"),
    ("degrees", "rad2deg", "njc"),
    ("sinc", "sinc", "njct"),
    ("angle", "angle", "njct"),
]:
    chapter.function(
        _libs,
        _name,
        None,
        f"xpx.{_std}(x)",
        f"not in the standard; array-api-extra has {_std}",
        rewrite=f"xpx.{_std}({{x}}, deg={{deg}})" if _name == "angle" else f"xpx.{_std}({{x}})",
        example=f"lib.{_name}(x)",
    )
for _name in ("setdiff1d", "union1d"):
    chapter.function(
        "nj",
        _name,
        None,
        f"xpx.{_name}(x1, x2)",
        f"not in the standard; array-api-extra has {_name}",
        rewrite=f"xpx.{_name}({{x}}, {{arg1}})",
        example=f"lib.{_name}(i, j)",
    )
chapter.function(
    "njc",
    "pad",
    None,
    "xpx.pad(x, pad_width)",
    "not in the standard; array-api-extra has pad",
    # mode= other than "constant" is an argument the rewrite would drop: refused
    rewrite="xpx.pad({x}, {arg1}, constant_values={constant_values})",
    example="lib.pad(x, 1)",
)
chapter.function(
    "njc",
    "fill_diagonal",
    None,
    "x = xp.where(xp.eye(*x.shape, dtype=xp.bool, device=x.device), value, x)",
    "fill_diagonal writes in place, which standard arrays need not allow",
)

ENTRIES = chapter.entries
