"""What a cell's source binds and reads, as the cell rewrite (`porter_ext.fix.rewrite`)
needs it: where ``xp`` is bound, which names an expression reads, the cell's imports and
docstring, and the library a site belongs to.
"""

from __future__ import annotations

import ast

import libcst as cst

from porter_ext.fix.checks import Site


def ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


class ReplaceFirst(cst.CSTTransformer):
    """Replaces the first node (in source order) equal to ``old`` by ``new``."""

    def __init__(self, old: cst.CSTNode, new: cst.CSTNode) -> None:
        super().__init__()
        self.old, self.new, self.done = old, new, False

    def on_visit(self, node: cst.CSTNode) -> bool:
        return not self.done

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):  # type: ignore[override]
        if not self.done and original.deep_equals(self.old):
            self.done = True
            return self.new
        return updated


def site_libraries(site: Site) -> tuple[str, ...]:
    """The libraries a site's call may belong to: its entry's, or those whose arrays or
    modules its name starts with (``Tensor.reshape``: torch; ``ndarray.sum``: numpy, cupy)."""
    from porter_ext.backends import LIBRARIES, get_backend

    if site.entry is not None and site.entry.library != "*":
        return (site.entry.library,)
    head = site.name.partition(".")[0]
    return tuple(lib for lib in LIBRARIES if head in (get_backend(lib).array_type_name, lib))


def names_bound(module: cst.Module) -> set[str]:
    try:
        tree = ast.parse(module.code)
    except SyntaxError:
        return set()
    return {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def names_read(node: cst.CSTNode) -> set[str]:
    return set(names_read_text(cst.Module([]).code_for_node(node)))


def names_read_text(code: str) -> list[str]:
    """The names an expression's source reads, in order."""
    try:
        tree = ast.parse(f"({code})", mode="eval")
    except SyntaxError:
        return []
    return [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]


def binds_xp_at_top(module: cst.Module) -> bool:
    """Whether the cell's own level binds ``xp`` (not a function inside it)."""
    code = module.code
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id == "xp" and isinstance(sub.ctx, ast.Store):
                return True
    return False


def binds_xp(node: cst.CSTNode) -> bool:
    code = cst.Module([]).code_for_node(node)
    try:
        tree = ast.parse(code.strip() if not code.startswith((" ", "\t")) else "if 1:\n" + code)
    except SyntaxError:
        return False
    return any(
        isinstance(n, ast.Name) and n.id == "xp" and isinstance(n.ctx, ast.Store)
        for n in ast.walk(tree)
    ) or any(isinstance(n, ast.arg) and n.arg == "xp" for n in ast.walk(tree))


def is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, cst.Import | cst.ImportFrom) for s in statement.body
    )


def first_line_using(module: cst.Module) -> int:
    """Index of the first top-level statement that calls through ``xp`` (where ``xp`` must
    exist; a replay shows when the array it is taken from is not bound yet)."""
    for index, statement in enumerate(module.body):
        if "xp." in module.code_for_node(statement):
            return index
    return len(module.body)
