"""Shape manipulation: concat, permute_dims, reshape, stack and split under their
non-standard names, and shape questions asked as functions (``np.ndim``, ``np.size``).
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import NS, Chapter, renamed

chapter = Chapter()

chapter.function(
    "njct",
    "concatenate",
    "concat",
    "xp.concat(arrays, axis={axis})",
    renamed("concat"),
    rewrite="xp.concat({x}, axis={axis})",
    example="lib.concatenate([x, y], 1)",
)
chapter.function(
    "t",
    "cat",
    "concat",
    "xp.concat(arrays, axis={axis})",
    renamed("concat"),
    rewrite="xp.concat({x}, axis={axis})",
    example="lib.cat([x, y], 1)",
)
chapter.function(
    "njc",
    "transpose",
    "permute_dims",
    "xp.permute_dims(x, {axes})",
    "the standard needs the axes spelled out (transpose without axes reverses them all); "
    "xp.matrix_transpose(x) swaps the last two",
)
#: two axes of a function's operand exchanged, at any rank
_SWAP = "xp.moveaxis({x}, ({arg1}, {arg2}), ({arg2}, {arg1}))"
chapter.function(
    "njc",
    "swapaxes",
    "moveaxis",
    "xp.moveaxis(x, ({arg1}, {arg2}), ({arg2}, {arg1}))",
    "the standard has no swapaxes: xp.moveaxis moves each axis to the other's place",
    rewrite=_SWAP,
    example="lib.swapaxes(x, 0, 1)",
)
for _name in ("transpose", "swapaxes", "swapdims"):
    chapter.function(
        "t",
        _name,
        "moveaxis",
        "xp.moveaxis(x, ({arg1}, {arg2}), ({arg2}, {arg1}))",
        f"torch.{_name} exchanges two axes: xp.moveaxis moves each to the other's place "
        "(any rank), or use xp.matrix_transpose(x) for the last two",
        rewrite=_SWAP,
        example=f"lib.{_name}(x, 0, 1)",
    )
chapter.function(
    "t", "permute", "permute_dims", "xp.permute_dims(x, {axes})", renamed("permute_dims")
)
chapter.function(
    "t",
    "t",
    "matrix_transpose",
    "xp.matrix_transpose(x)",
    "the standard's matrix_transpose swaps the last two axes",
)
chapter.function(
    "t",
    "movedim",
    "moveaxis",
    "xp.moveaxis(x, {arg1}, {arg2})",
    "the standard spells it moveaxis (2023.12)",
)
chapter.function(
    "t",
    "unsqueeze",
    "expand_dims",
    "xp.expand_dims(x, axis={axis})",
    renamed("expand_dims"),
    rewrite="xp.expand_dims({x}, axis={axis})",
    example="lib.unsqueeze(x, 0)",
)
chapter.function(
    "njct",
    "ravel",
    "reshape",
    "xp.reshape(x, (-1,))",
    "the standard has no ravel",
    rewrite="xp.reshape({x}, (-1,))",
    example="lib.ravel(x)",
)
chapter.function(
    "t",
    "flatten",
    "reshape",
    "xp.reshape(x, (-1,))",
    "the standard has no flatten; with start_dim, reshape to the partial shape",
    rewrite="xp.reshape({x}, (-1,))",
    example="lib.flatten(x)",
)
chapter.function(
    "njct",
    "hstack",
    "concat",
    "xp.concat(arrays, axis=1)",
    "hstack joins 1-D arrays along axis 0 and others along axis 1: pick the axis",
    # as NumPy decides it: by the rank of the first array (0-D arrays, which hstack makes
    # 1-D, fail in concat and are not verified)
    rewrite="xp.concat({x}, axis=0 if {x}[0].ndim == 1 else 1)",
    example="lib.hstack([x, y])",
)
chapter.add(
    "njct",
    "function",
    "vstack",
    NS,
    "stack",
    "xp.stack(arrays, axis=0)",
    "vstack makes 1-D arrays the rows of a new array: the standard's stack",
    when="vectors",
    rewrite="xp.stack({x}, axis=0)",
    example="lib.vstack([v, v])",
)
chapter.add(
    "njct",
    "function",
    "vstack",
    NS,
    None,
    "xp.concat([xp.reshape(a, (1, -1)) if a.ndim == 1 else a for a in arrays], axis=0)",
    "vstack first makes 1-D arrays rows, then joins along axis 0",
    when="mixed_ranks",
    no_rewrite="the arrays joined have several ranks (or are not all arrays): no one "
    "standard call joins them; reshape the 1-D ones to rows, then xp.concat",
)
chapter.function(
    "njct",
    "vstack",
    "concat",
    "xp.concat(arrays, axis=0)",
    "vstack first makes 1-D arrays rows; for 1-D inputs use xp.stack(arrays, axis=0)",
    rewrite="xp.concat({x}, axis=0)",
    example="lib.vstack([x, y])",
)
chapter.function(
    "njct",
    "column_stack",
    "stack",
    "xp.stack(arrays, axis=1)",
    "matches column_stack for 1-D inputs; 2-D inputs need xp.concat(arrays, axis=1)",
)
for _n in (1, 2, 3):
    chapter.function(
        "njct",
        f"atleast_{_n}d",
        None,
        f"xpx.atleast_nd(x, ndim={_n})",
        "not in the standard; array-api-extra has atleast_nd (which prepends new axes)",
    )
chapter.function(
    "njct",
    "flipud",
    "flip",
    "xp.flip(x, axis=0)",
    "the standard flips with flip(axis=)",
    rewrite="xp.flip({x}, axis=0)",
    example="lib.flipud(x)",
)
chapter.function(
    "njct",
    "fliplr",
    "flip",
    "xp.flip(x, axis=1)",
    "the standard flips with flip(axis=)",
    rewrite="xp.flip({x}, axis=1)",
    example="lib.fliplr(x)",
)
_SLICES = "tuple(x[i:j] for i, j in zip(bounds[:-1], bounds[1:]))"
_SPLIT_NOTE = (
    "the standard has no split: the parts are slices of the array (views, in a list, as "
    "the call returns them), written from the indices the call gives"
)
# NumPy's family cuts at indices (or into a number of equal sections); the parts are
# the slices between them (`porter_ext.spec.sections`)
for _name, _parts, _example in [
    ("split", "sections", "lib.split(x, [1])"),
    ("vsplit", "row_sections", "lib.vsplit(x, 2)"),
    ("hsplit", "column_sections", "lib.hsplit(x, [1, 2])"),
]:
    chapter.function(
        "njc",
        _name,
        None,
        "[x[:i, ...], x[i:j, ...], x[j:, ...]]"
        if _name != "hsplit"
        else "[x[:, :i, ...], x[:, i:j, ...], x[:, j:, ...]]",
        _SPLIT_NOTE,
        rewrite=f"{{{_parts}}}",
        example=_example,
    )
chapter.function(
    "t",
    "split",
    None,
    _SLICES,
    "the standard has no split; slice, or use xp.unstack when every piece has size 1",
)
chapter.function(
    "njc",
    "array_split",
    None,
    _SLICES,
    "the standard has no split; slice, or use xp.unstack when every piece has size 1",
)
chapter.function("t", "chunk", None, _SLICES, "the standard has no chunk; slice")
chapter.function("t", "unbind", "unstack", "xp.unstack(x, axis={axis})", renamed("unstack"))
chapter.function(
    "t",
    "broadcast_tensors",
    "broadcast_arrays",
    "xp.broadcast_arrays(*arrays)",
    renamed("broadcast_arrays"),
)
chapter.function(
    "t",
    "repeat_interleave",
    "repeat",
    "xp.repeat(x, {arg1}, axis={axis_kw})",
    "the standard spells it repeat (2023.12)",
)
chapter.function("njc", "ndim", "ndim", "x.ndim", "the standard has the attribute, not a function")
chapter.function(
    "nj", "shape", "shape", "x.shape", "the standard has the attribute, not a function"
)
chapter.function(
    "njc",
    "size",
    "size",
    "array_api_compat.size(x)",
    "x.size is the standard attribute but may be None for unknown shapes (and is a method "
    "in PyTorch); array_api_compat.size works everywhere",
)
chapter.function(
    "t",
    "numel",
    "size",
    "array_api_compat.size(x)",
    "x.size is the standard attribute (a method in PyTorch); array_api_compat.size works "
    "everywhere",
)

ENTRIES = chapter.entries
