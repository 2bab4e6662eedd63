"""NumPy's ufunc methods (``np.add.reduce``, ``.accumulate``, ``.outer``, ``.at``), named
``"<ufunc>.<method>"``: the standard spells each as a function.

A ufunc's ``reduce`` and ``accumulate`` work along axis 0 unless told otherwise (NumPy's
``sum`` reduces every axis), so the rewrite writes ``axis=0`` where the call passed none;
their dtypes are the standard's (NumPy 2 widens integers and booleans to the default
integer, as ``xp.sum`` and ``xp.cumulative_sum`` do).
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import Chapter

chapter = Chapter()

_UFUNC_NOTE = (
    "ufunc methods are NumPy's; the standard spells the reduction as a function, along "
    "axis 0 as the ufunc's method works by default"
)


def _along_axis(name: str, standard: str, example: str, *, keepdims: bool) -> None:
    """``np.add.reduce(x)`` → ``xp.sum(x, axis=0)``; with an axis, that axis."""
    kept = ", keepdims={keepdims}" if keepdims else ""
    chapter.add(
        "nj",
        "function",
        name,
        "non_standard",
        standard,
        f"xp.{standard}(x, axis=0{kept})",
        _UFUNC_NOTE,
        when="no_axis",
        rewrite=f"xp.{standard}({{x}}, axis=0{kept})",
        example=f"lib.{example}(x)",
    )
    chapter.function(
        "nj",
        name,
        standard,
        f"xp.{standard}(x, axis={{axis}}{kept})",
        _UFUNC_NOTE,
        rewrite=f"xp.{standard}({{x}}, axis={{axis}}{kept})",
        example=f"lib.{example}(x, 1)",
    )


for _name, _std in [
    ("add.reduce", "sum"),
    ("multiply.reduce", "prod"),
    ("maximum.reduce", "max"),
    ("minimum.reduce", "min"),
    ("logical_and.reduce", "all"),
    ("logical_or.reduce", "any"),
]:
    _along_axis(_name, _std, _name, keepdims=True)
_along_axis("add.accumulate", "cumulative_sum", "add.accumulate", keepdims=False)
_along_axis("multiply.accumulate", "cumulative_prod", "multiply.accumulate", keepdims=False)
for _name in ("add.outer", "multiply.outer", "subtract.outer"):
    _ufunc = _name.split(".")[0]
    # two 1-D arrays: the first as a column against the second, broadcast
    chapter.add(
        "nj",
        "function",
        _name,
        "non_standard",
        _ufunc,
        f"xp.{_ufunc}(a[:, None], b)",
        "an outer operation of two 1-D arrays is the elementwise function on the first as a column",
        when="two_vectors",
        rewrite=f"xp.{_ufunc}({{x}}[:, None], {{arg1}})",
        example=f"lib.{_name}(v, v)",
    )
    chapter.function(
        "nj",
        _name,
        None,
        f"xp.{_ufunc}(a[:, None], b[None, :])",
        "an outer operation is the elementwise function on broadcast operands",
        no_rewrite="an outer operation of operands that are not two 1-D arrays needs "
        "one new axis per axis of the second operand (xp.reshape(a, a.shape + (1,) * "
        "b.ndim)); the call does not show the ranks",
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
