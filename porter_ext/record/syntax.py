"""One cell source's syntax tree, parsed at most once per run of the cell.

A ``%%port`` cell is read by several stages before and while it runs: the replay's
analysis (which names it reads and writes) and the recorder's rewrite. Each used to
parse the source again. A `CellSyntax` is made when the cell starts and handed to them:
the first that needs the tree parses it, the others read the same one, and a cell run
again (whose analysis and compiled rewrite are kept) is not parsed at all.

The recorder's rewrite changes the tree it is given (`take`): it comes last, after the
readers are done with it; whatever asks for the tree after that gets a fresh parse.

A replay's worker gets the rewrite the person's kernel compiled (`compiled`): it neither
parses nor rewrites the cell.
"""

from __future__ import annotations

import ast


class CellSyntax:
    """The syntax of ``source`` (plain Python: IPython's syntax already transformed) as
    the cell compiles it: under ``filename``, with the compiler ``flags`` it runs with
    (IPython's ``__future__`` imports)."""

    __slots__ = ("_tree", "compiled", "filename", "flags", "source")

    def __init__(self, source: str, filename: str = "<cell>", flags: int = 0):
        self.source, self.filename, self.flags = source, filename, flags
        self._tree: ast.Module | None = None
        #: the cell's rewrite as compiled where it first ran (`compiled.exported`), or None
        self.compiled: bytes | None = None

    @property
    def tree(self) -> ast.Module:
        """The tree, parsed on first use (raises SyntaxError as Python would). Readers
        must not change it."""
        if self._tree is None:
            self._tree = parse(self.source, self.filename, self.flags)
        return self._tree

    def take(self) -> ast.Module:
        """The tree for a consumer that changes it (the recorder's rewrite): later
        readers get a fresh parse."""
        tree, self._tree = self.tree, None
        return tree


def parse(source: str, filename: str = "<cell>", flags: int = 0) -> ast.Module:
    """Parse a cell with the compiler flags it runs with; raises SyntaxError as Python
    would."""
    return compile(source, filename, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True)
