"""NumPy's ufunc methods (``np.add.reduce``, ``.accumulate``, ``.outer``, ``.at``), named
``"<ufunc>.<method>"``: the standard spells each as a function.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import Chapter

chapter = Chapter()

_UFUNC_NOTE = "ufunc methods are NumPy's; the standard spells the reduction as a function"
for _name, _std in [
    ("add.reduce", "sum"),
    ("multiply.reduce", "prod"),
    ("maximum.reduce", "max"),
    ("minimum.reduce", "min"),
    ("logical_and.reduce", "all"),
    ("logical_or.reduce", "any"),
]:
    chapter.function("nj", _name, _std, f"xp.{_std}(x, axis={{axis}})", _UFUNC_NOTE)
chapter.function(
    "nj", "add.accumulate", "cumulative_sum", "xp.cumulative_sum(x, axis={axis})", _UFUNC_NOTE
)
chapter.function(
    "nj",
    "multiply.accumulate",
    "cumulative_prod",
    "xp.cumulative_prod(x, axis={axis})",
    _UFUNC_NOTE,
)
for _name in ("add.outer", "multiply.outer", "subtract.outer"):
    chapter.function(
        "nj",
        _name,
        None,
        f"xp.{_name.split('.')[0]}(a[:, None], b[None, :])",
        "an outer operation is the elementwise function on broadcast operands",
    )
chapter.function(
    "n",
    "add.at",
    None,
    "xp.backend.add.at(x, idx, value)",
    "np.add.at adds once per occurrence of a repeated index; xpx.at(x, idx).add(value) and "
    "x[idx] += value add once per distinct index, so no portable spelling keeps repeated "
    "indices: keep it through the escape hatch (or count with a one-hot sum)",
)

ENTRIES = chapter.entries
