"""Attributes the standard array lacks or defines otherwise: ``x.T`` beyond 2-D,
``x.real``/``x.imag``, conjugate transposes, NumPy's ``flat`` and JAX's ``at``.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import NS, USAGE, Chapter

chapter = Chapter()

chapter.add(
    "*",
    "attribute",
    "T",
    USAGE,
    "permute_dims",
    "xp.permute_dims(x, {reversed_axes})",
    "the standard defines x.T for 2-D arrays only; use x.mT to transpose the last two axes "
    "of a stack of matrices",
    when="ndim_not_2",
    rewrite="xp.permute_dims({x}, tuple(range({x}.ndim - 1, -1, -1)))",
    example="v.T",
)
chapter.add(
    "*",
    "attribute",
    "real",
    NS,
    "real",
    "xp.real(x)",
    "the standard has the function xp.real, not the attribute",
)
chapter.add(
    "*",
    "attribute",
    "imag",
    NS,
    "imag",
    "xp.imag(x)",
    "the standard has the function xp.imag, not the attribute",
)
for _name in ("H", "mH"):
    chapter.add(
        "t",
        "attribute",
        _name,
        NS,
        "conj",
        "xp.conj(x.mT)",
        "the standard spells a conjugate transpose of the last two axes xp.conj(x.mT)",
    )
chapter.add(
    "n",
    "attribute",
    "flat",
    NS,
    "reshape",
    "xp.reshape(x, (-1,))",
    "the standard has no flat iterator",
)
chapter.add(
    "j",
    "attribute",
    "at",
    NS,
    None,
    "xpx.at(x, idx).set(value)",
    "array-api-extra's at gives functional updates on every library (.set, .add, "
    ".multiply, .divide, .power, .min, .max)",
)

ENTRIES = chapter.entries
