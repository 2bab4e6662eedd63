"""Code that IPython's ``%time`` and ``%timeit`` run on a recorded cell's behalf.

After IPython's input transformation ``%timeit -n1 y = f(x)`` is the call
``get_ipython().run_line_magic('timeit', '-n1 y = f(x)')``: the magic parses its own
statement from that string and compiles it, so the cell's rewrite never sees it. What it
does see is IPython's ``shell.transform_ast``, which both magics call on the statement
before compiling it. `MagicRewriter` is such an AST transformer: called while the cell
runs a magic's line, it gives the statement the positions it has in the cell (the line
of the magic, the column where the statement starts after the magic's name and options)
and rewrites it for recording as the cell's own lines are, so that ``np.histogram`` on a
``%timeit`` line is a finding at its line and column like the same call on a plain line.

`magic_pieces` is the one reading of such a call; the replay's analysis reads the names
the statements bind and use from it too (``replay.ipython_lines``).
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass

from porter_ext.record.transformer import transform

#: IPython magics whose argument is Python code run in the cell's namespace
CODE_MAGICS = frozenset({"time", "timeit"})
#: those of them whose assignments bind names of the cell (``%timeit`` runs its code
#: inside a function of its own)
BINDING_MAGICS = frozenset({"time"})
#: the options each magic reads before its statement (``%timeit``'s "n:r:tcp:qov:")
_OPTIONS = {
    "timeit": re.compile(r"^\s*(?:-[nrpv]\s*\S+\s*|-[tcqo]\s*)*"),
    "time": re.compile(r"^\s*(?:--no-raise-error\s*)?"),
}
_POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


@dataclass(frozen=True)
class MagicPiece:
    """One piece of Python code a magic runs: its text, and where that text starts in
    the cell (``line`` 1-based, ``col`` in characters of the line as written)."""

    text: str
    line: int
    col: int


@dataclass(frozen=True)
class MagicCall:
    """A ``%time``/``%timeit`` line (or ``%%time``/``%%timeit`` cell) of a cell."""

    name: str
    pieces: tuple[MagicPiece, ...]

    @property
    def binds(self) -> bool:
        """Whether what its code assigns is bound in the cell's namespace."""
        return self.name in BINDING_MAGICS


def magic_call(call: ast.Call) -> MagicCall | None:
    """``get_ipython().run_line_magic('time', 'y = f(x)')`` (or ``run_cell_magic``) read
    as the code it runs; None for any other call.

    IPython writes ``%NAME ARGS`` at indentation ``I`` as that call at column ``I`` (the
    name and its arguments split at the first space), so the argument starts
    ``len(NAME) + 2`` characters after the call; a cell magic's body starts on the next
    line."""
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr in ("run_line_magic", "run_cell_magic")
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "get_ipython"
    ):
        return None
    texts = [a.value for a in call.args if isinstance(a, ast.Constant)]
    if len(texts) != len(call.args) or len(texts) < 2 or texts[0] not in CODE_MAGICS:
        return None
    name, argument = texts[0], texts[1]
    escapes = 1 if func.attr == "run_line_magic" else 2
    options = _OPTIONS[name].match(argument)
    skipped = options.end() if options else 0
    start = call.col_offset + escapes + len(name) + 1 + skipped
    pieces = [MagicPiece(argument[skipped:], call.lineno, start)]
    if func.attr == "run_cell_magic" and len(texts) >= 3:
        pieces.append(MagicPiece(texts[2], call.lineno + 1, 0))
    return MagicCall(name, tuple(p for p in pieces if p.text.strip()))


def code_magic_line(body: str) -> tuple[str, str] | None:
    """A ``%time``/``%timeit`` line as written (without its indentation) split into the
    magic's name with its options (``%timeit -n1 ``) and the statement it runs, where
    `magic_call` reads them; None for any other line."""
    if not body.startswith("%") or body.startswith("%%"):
        return None
    name, _, argument = body[1:].partition(" ")
    if name not in CODE_MAGICS:
        return None
    options = _OPTIONS[name].match(argument)
    start = 1 + len(name) + 1 + (options.end() if options else 0)
    return body[:start], body[start:]


def magic_calls(tree: ast.AST) -> dict[int, list[MagicCall]]:
    """The magic calls of a cell's tree, by the line they are on."""
    found: dict[int, list[MagicCall]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            magic = magic_call(node)
            if magic is not None:
                found.setdefault(node.lineno, []).append(magic)
    return found


def located(tree: ast.Module, piece: MagicPiece) -> str | None:
    """Give ``tree`` (IPython's parse of the piece's code) the positions the code has in
    the cell, in place; returns the text whose lines those positions index (the piece
    at its line and column, for `Columns`), or None when ``tree`` is not that code.

    The positions are read from a parse of the text as written: ``%time`` joins its
    words with single spaces before parsing, so the tree's own columns may not be the
    cell's."""
    try:
        mine = ast.parse(piece.text)
    except SyntaxError:
        return None
    if ast.dump(mine) != ast.dump(tree):
        return None
    prefix = piece.col  # ASCII (indentation, the magic's name, its options): bytes too
    for written, given in zip(ast.walk(mine), ast.walk(tree), strict=True):
        if not hasattr(written, "lineno"):
            continue
        for attribute in _POSITIONS:
            value = getattr(written, attribute, None)
            if value is None:
                continue
            if attribute.endswith("col_offset"):
                first = getattr(written, "lineno" if attribute == "col_offset" else "end_lineno")
                value += prefix if first == 1 else 0
            else:
                value += piece.line - 1
            setattr(given, attribute, value)
    return "\n" * (piece.line - 1) + " " * prefix + piece.text


class MagicRewriter:
    """An IPython AST transformer (``shell.ast_transformers``) that records the code of
    the ``%time``/``%timeit`` lines of one cell (see the module's docstring).

    ``code`` is the cell as it runs (IPython's transformation, the raw cell's line
    numbers), ``filename`` the name its code runs under: the line the cell is running
    tells which magic is asking. Anything else it is handed (another cell's magics, a
    ``%timeit`` typed in a cell porter does not record) is given back as it is."""

    def __init__(
        self, code: str, cell: int | str, filename: str, *, range_is_builtin: bool = False
    ):
        self.code, self.cell, self.filename = code, cell, filename
        self.range_is_builtin = range_is_builtin
        self._magics: dict[int, list[MagicCall]] | None = None

    @property
    def magics(self) -> dict[int, list[MagicCall]]:
        """The cell's magic calls by line, read when a magic first asks (most cells
        have none, and are not parsed again for them)."""
        if self._magics is None:
            found = {}
            if "get_ipython()" in self.code:
                flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
                found = magic_calls(compile(self.code, self.filename, "exec", flags))
            self._magics = found
        return self._magics

    def running_line(self) -> int | None:
        """The line of the cell that runs now (its innermost frame on this stack)."""
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def visit(self, node: ast.AST) -> ast.AST:
        if not isinstance(node, ast.Module):
            return node
        line = self.running_line()
        if line is None or not self.magics:
            return node
        for magic in self.magics.get(line, []):
            for piece in magic.pieces:
                source = located(node, piece)
                if source is not None:
                    return transform(
                        node, self.cell, range_is_builtin=self.range_is_builtin, source=source
                    )
        return node
