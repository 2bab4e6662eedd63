"""Linear algebra: dot and its relatives (matmul, tensordot, vecdot), norms, trace and
diagonal over the last two axes, and what lives in the standard's linalg extension.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import NS, Chapter, renamed

chapter = Chapter()

chapter.add(
    "njct",
    "function",
    "dot",
    NS,
    "tensordot",
    "xp.tensordot(a, b, axes=([-1], [-2])) for N-D b, xp.multiply(a, b) for a 0-D operand",
    "dot of an N-D array sums over the last axis of a and the second-to-last of b",
    when="beyond_matrices",
    no_rewrite="dot is matmul only for operands of one or two dimensions; with an "
    "operand of another rank (or not an array) it is tensordot or a product",
)
_DOT_NOTE = (
    "for 1-D and 2-D operands dot is matmul (two 1-D arrays: their inner product, "
    "xp.vecdot without conjugation); for N-D dot use xp.tensordot"
)
chapter.function(
    "njc",
    "dot",
    "matmul",
    "xp.matmul(a, b)",
    _DOT_NOTE,
    rewrite="xp.matmul({x}, {arg1})",
    example="lib.dot(x, m)",
)
chapter.function(
    "t",
    "dot",
    "matmul",
    "xp.matmul(a, b)",
    _DOT_NOTE + " (torch.dot takes 1-D arrays only)",
    # two 1-D tensors: matmul's inner product, which conjugates nothing, as torch.dot
    rewrite="xp.matmul({x}, {arg1})",
    example="lib.dot(v, v)",
)
for _name in ("mm", "bmm", "mv"):
    chapter.function("t", _name, "matmul", "xp.matmul(a, b)", renamed("matmul"))
chapter.function(
    "njct",
    "inner",
    "vecdot",
    "xp.vecdot(a, b)",
    "matches inner for 1-D arrays; vecdot conjugates its first argument for complex input",
)
chapter.function(
    "njct",
    "outer",
    "linalg.outer",
    "xp.linalg.outer(a, b)",
    "outer lives in the linalg extension",
    rewrite="xp.linalg.outer({x}, {arg1})",
    example="lib.outer(v, v)",
)
#: the 2-norm of the elements, the suggestion for every norm spelled without ord
VECTOR_NORM = "xp.linalg.vector_norm(x, axis={axis_kw}, keepdims={keepdims})"
chapter.function(
    "njct",
    "linalg.norm",
    "linalg.vector_norm",
    VECTOR_NORM,
    "the standard splits norm into linalg.vector_norm and linalg.matrix_norm (ord='fro', "
    "'nuc', or a matrix ord over two axes)",
    # without ord: the 2-norm of the elements over the axes (the Frobenius norm of a
    # matrix is that too); an ord is an argument the rewrite would drop, so it refuses
    rewrite="xp.linalg.vector_norm({x}, axis={axis_kw}, keepdims={keepdims})",
    example="lib.linalg.norm(x, axis=1)",
)
chapter.function(
    "t",
    "norm",
    "linalg.vector_norm",
    VECTOR_NORM,
    "the standard splits norm into linalg.vector_norm and linalg.matrix_norm",
)
chapter.function(
    "njct",
    "trace",
    "linalg.trace",
    "xp.linalg.trace(x)",
    "NumPy's trace uses the first two axes, the standard's linalg.trace the last two",
)
chapter.add(
    "njct",
    "function",
    "diagonal",
    NS,
    None,
    "xp.linalg.diagonal(xp.permute_dims(x, ...), offset={k})",
    "NumPy's and torch's diagonal use the first two axes (or dim1/dim2), the standard's "
    "linalg.diagonal the last two",
    when="not_matrix_diagonal",
    no_rewrite="diagonal of an array that is not 2-D (or over chosen axes) needs its axes "
    "moved last first: permute_dims, then linalg.diagonal",
)
chapter.function(
    "njct",
    "diagonal",
    "linalg.diagonal",
    "xp.linalg.diagonal(x, offset={k})",
    "for a 2-D array the first two axes are the last two: linalg.diagonal, offset as the keyword",
    rewrite="xp.linalg.diagonal({x}, offset={k})",
    example="lib.diagonal(m, 1)",
)
chapter.add(
    "njct",
    "function",
    "diag",
    NS,
    None,
    "xp.linalg.diagonal(x, offset={k}) for a 2-D x, xpx.create_diagonal(x, offset={k}) for 1-D",
    "diag reads the k-th diagonal of a 2-D array and builds a matrix from a 1-D one",
    when="diag_offset",
    no_rewrite="which standard call diag is depends on the rank of x, which the call does not show",
)
chapter.function(
    "njct",
    "diag",
    None,
    "xpx.create_diagonal(x)",
    "builds a diagonal matrix from a 1-D array (array-api-extra); to read the diagonal of "
    "a 2-D array use xp.linalg.diagonal(x)",
)
chapter.function("t", "det", "linalg.det", "xp.linalg.det(x)", "det lives in the linalg extension")
chapter.function(
    "t", "inverse", "linalg.inv", "xp.linalg.inv(x)", "the standard spells it linalg.inv"
)
chapter.function(
    "t",
    "svd",
    "linalg.svd",
    "xp.linalg.svd(x, full_matrices=False)",
    "torch.svd returns V where linalg.svd returns Vh (its conjugate transpose)",
)
chapter.function(
    "njct",
    "einsum",
    None,
    "xp.backend.einsum(subscripts, *operands)",
    "the standard has no einsum; rewrite with matmul/tensordot/vecdot, or keep it through "
    "the escape hatch to mark it as acknowledged",
)
chapter.function(
    "njct",
    "kron",
    None,
    "xpx.kron(a, b)",
    "not in the standard; array-api-extra has kron",
    rewrite="xpx.kron({x}, {arg1})",
    example="lib.kron(x, m)",
)

ENTRIES = chapter.entries
