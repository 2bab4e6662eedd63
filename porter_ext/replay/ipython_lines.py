"""Code that IPython runs on the cell's behalf: ``%time y = f(x)`` reads ``x``, binds ``y``.

After IPython's input transformation a ``%time`` line is a call
``get_ipython().run_line_magic('time', 'y = f(x)')``: its argument is Python code run in
the cell's namespace, so the analysis must read it like the cell's own statements.
``%timeit`` runs its code inside a function of its own: what it assigns is never bound in
the cell (``%timeit counts = f(x)`` leaves ``counts`` as it was), so a later line reading
that name reads the cell's input. The call is read once, by the recorder
(`porter_ext.record.magic_code`).
"""

from __future__ import annotations

import ast

from porter_ext.record.magic_code import magic_call


def magic_code(call: ast.Call) -> tuple[list[ast.stmt], bool] | None:
    """The statements of ``get_ipython().run_line_magic('time', 'y = f(x)')`` and friends,
    and whether what they assign is bound in the cell's namespace."""
    magic = magic_call(call)
    if magic is None:
        return None
    stmts: list[ast.stmt] = []
    for piece in magic.pieces:
        try:
            stmts += ast.parse(piece.text).body
        except SyntaxError:
            continue
    return stmts, magic.binds
