"""Array methods that reshape, transpose, broadcast, index or read the diagonal of an
array, each a namespace function in the standard.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import METHOD_NOTE, NS, Chapter
from porter_ext.spec.table.linalg import VECTOR_NORM

chapter = Chapter()

#: two axes exchanged, at any rank: each moved to the other's place
SWAP_AXES = "xp.moveaxis({x}, ({arg0}, {arg1}), ({arg1}, {arg0}))"
#: masked_fill: the value cast to the tensor's dtype on its device, where the mask is True
MASKED_FILL = "xp.where({arg0}, xp.asarray({arg1}, dtype={x}.dtype, device={x}.device), {x})"

chapter.method(
    "*",
    "reshape",
    "reshape",
    "xp.reshape(x, {shape})",
    METHOD_NOTE,
    rewrite="xp.reshape({x}, {shape})",
    example="x.reshape(3, 2)",
)
chapter.method(
    "t",
    "view",
    "reshape",
    "xp.reshape(x, {shape})",
    "view never copies; xp.reshape(x, shape, copy=False) fails where a view is impossible",
    rewrite="xp.reshape({x}, {shape})",
    example="x.view(3, 2)",
)
chapter.method("t", "view_as", "reshape", "xp.reshape(x, y.shape)", METHOD_NOTE)
# NumPy's flatten always copies (a write to its result leaves x alone) where reshape and
# ravel give a view when they can: the copy is kept. torch's flatten is a view where it can be.
chapter.method(
    "t",
    "flatten",
    "reshape",
    "xp.reshape(x, (-1,))",
    METHOD_NOTE,
    rewrite="xp.reshape({x}, (-1,))",
    example="x.flatten()",
)
chapter.method(
    "*",
    "flatten",
    "reshape",
    "xp.reshape(xp.asarray(x, copy=True), (-1,))",
    METHOD_NOTE + "; flatten copies, reshape may return a view: the copy keeps later "
    "writes to the result off x",
    rewrite="xp.reshape(xp.asarray({x}, copy=True), (-1,))",
    example="x.flatten()",
)
chapter.method(
    "*",
    "ravel",
    "reshape",
    "xp.reshape(x, (-1,))",
    METHOD_NOTE,
    rewrite="xp.reshape({x}, (-1,))",
    example="x.ravel()",
)
chapter.method(
    "t",
    "transpose",
    "moveaxis",
    "xp.moveaxis(x, ({arg0}, {arg1}), ({arg1}, {arg0}))",
    "torch's x.transpose(i, j) exchanges two axes: xp.moveaxis moves each to the other's "
    "place (any rank), or use xp.matrix_transpose(x) for the last two",
    rewrite=SWAP_AXES,
    example="x.transpose(0, 1)",
)
chapter.method(
    "*",
    "transpose",
    "permute_dims",
    "xp.permute_dims(x, {axes})",
    METHOD_NOTE + "; x.transpose() reverses all axes",
    # the axes as one tuple, or spread over the operands (x.transpose(1, 0)); without
    # any the call reverses them, which the rewrite would need the rank for
    rewrite="xp.permute_dims({x}, {shape})",
    example="x.transpose(1, 0)",
)
chapter.method(
    "*",
    "swapaxes",
    "moveaxis",
    "xp.moveaxis(x, ({arg0}, {arg1}), ({arg1}, {arg0}))",
    "the standard has no swapaxes: xp.moveaxis moves each axis to the other's place",
    rewrite=SWAP_AXES,
    example="x.swapaxes(0, 1)",
)
chapter.method("t", "permute", "permute_dims", "xp.permute_dims(x, {axes})", METHOD_NOTE)
chapter.method("t", "t", "matrix_transpose", "xp.matrix_transpose(x)", METHOD_NOTE)
chapter.method(
    "*",
    "squeeze",
    "squeeze",
    "xp.squeeze(x, {axis})",
    METHOD_NOTE + "; the standard's squeeze needs the axis to remove",
)
chapter.method(
    "t",
    "unsqueeze",
    "expand_dims",
    "xp.expand_dims(x, axis={axis})",
    METHOD_NOTE,
    rewrite="xp.expand_dims({x}, axis={axis})",
    example="x.unsqueeze(0)",
)
chapter.method("t", "expand", "broadcast_to", "xp.broadcast_to(x, {shape})", METHOD_NOTE)
chapter.method("t", "expand_as", "broadcast_to", "xp.broadcast_to(x, y.shape)", METHOD_NOTE)
chapter.method(
    "t",
    "repeat",
    "tile",
    "xp.tile(x, {shape})",
    "torch's x.repeat(...) tiles the whole tensor: that is xp.tile",
)
chapter.method("*", "repeat", "repeat", "xp.repeat(x, {arg0}, axis={axis_kw})", METHOD_NOTE)
chapter.method(
    "t",
    "repeat_interleave",
    "repeat",
    "xp.repeat(x, {arg0}, axis={axis_kw})",
    "the standard spells it repeat (2023.12)",
)
chapter.method(
    "*",
    "flip",
    "flip",
    "xp.flip(x, axis={axis})",
    METHOD_NOTE,
    rewrite="xp.flip({x}, axis={axis})",
    example="x.flip(1)",
)
chapter.method("*", "take", "take", "xp.take(x, indices, axis={axis_kw})", METHOD_NOTE)
chapter.method(
    "t",
    "gather",
    "take_along_axis",
    "xp.take_along_axis(x, indices, axis={axis})",
    "the standard spells it take_along_axis (2024.12)",
)
chapter.method("t", "index_select", "take", "xp.take(x, indices, axis={axis})", METHOD_NOTE)
for _name, _rewrite in [
    ("masked_fill", MASKED_FILL),
    # in place: the new values written into the tensor, which its views see
    ("masked_fill_", "{x}[...] = " + MASKED_FILL),
]:
    chapter.method(
        "t",
        _name,
        "where",
        "xp.where({arg0}, xp.asarray({arg1}, dtype=x.dtype, device=x.device), x)",
        METHOD_NOTE + "; the value takes the tensor's dtype, as masked_fill casts it",
        rewrite=_rewrite,
        example=f"x.{_name}(b, -1.5)",
    )
chapter.method("t", "unbind", "unstack", "xp.unstack(x, axis={axis})", METHOD_NOTE)
chapter.add(
    "*",
    "method",
    "diagonal",
    NS,
    None,
    "xp.linalg.diagonal(xp.permute_dims(x, ...), offset={k})",
    "NumPy's and torch's diagonal use the first two axes (or axis1/axis2, dim1/dim2), the "
    "standard's linalg.diagonal the last two",
    when="not_matrix_diagonal",
    no_rewrite="diagonal of an array that is not 2-D (or over chosen axes) needs its axes "
    "moved last first: permute_dims, then linalg.diagonal",
)
chapter.method(
    "*",
    "diagonal",
    "linalg.diagonal",
    "xp.linalg.diagonal(x, offset={k})",
    "for a 2-D array the first two axes are the last two: linalg.diagonal, offset as the keyword",
    rewrite="xp.linalg.diagonal({x}, offset={k})",
    example="m.diagonal(1)",
)
chapter.method(
    "*",
    "trace",
    "linalg.trace",
    "xp.linalg.trace(x)",
    "NumPy's trace uses the first two axes, the standard's linalg.trace the last two",
)
chapter.method(
    "t",
    "norm",
    "linalg.vector_norm",
    VECTOR_NORM,
    "the standard splits norm into linalg.vector_norm and linalg.matrix_norm",
)

ENTRIES = chapter.entries
