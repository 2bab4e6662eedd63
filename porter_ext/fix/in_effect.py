"""Putting a verified rewrite's definitions in effect in ``porter fix``'s own run, so that
later cells are verified against the earlier cells as ported.

Functions and imports are simply run again. A class is not: the objects the original run
made are instances of the class as it was, and a new class object of the same name would
make ``isinstance(layer, Tanh)`` false in a later cell. The class the person has keeps its
identity and takes the rewritten body (its methods, whose ``super()`` then names it);
where it cannot (another metaclass, other bases) it stays exactly as it was.
"""

from __future__ import annotations

import ast
import types
from typing import Any

__all__ = ["put_in_effect"]

#: what a class's own ``__dict__`` holds that belongs to that class object alone
_OWN = frozenset({"__dict__", "__weakref__", "__module__", "__qualname__"})


def put_in_effect(code: str, namespace: Any, cell: int | str) -> dict[str, Any]:
    """Run a rewritten cell's definitions and imports (never its other statements, which
    already ran as the original and agree) so later cells use the portable functions; a
    class already bound to its name keeps its identity (`_rebody`). Returns what each
    function name held before (the person's own function), so that later cells run it
    and verify the portable one (`porter_ext.fix.every_call`)."""
    from porter_ext.record.transformer import transform

    tree = ast.parse(code)
    keep = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    tree.body = [node for node in tree.body if isinstance(node, keep)]
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    before = {n.name: namespace.get(n.name) for n in tree.body if isinstance(n, functions)}
    if not tree.body:
        return before
    # recorded like any cell's code, so later cells see its calls
    tree = ast.fix_missing_locations(transform(tree, cell, source=code))
    filename = f"<porter fix of cell {cell}>"
    for statement in tree.body:  # one by one: a class is settled before the next reads it
        held = None
        if isinstance(statement, ast.ClassDef):
            held = namespace.get(statement.name)
        module = ast.Module(body=[statement], type_ignores=[])
        exec(compile(module, filename, "exec"), namespace)  # noqa: S102
        if isinstance(held, type) and isinstance(statement, ast.ClassDef):
            made = namespace.get(statement.name)
            if isinstance(made, type) and made is not held:
                _rebody(held, made)
                namespace[statement.name] = held
    return before


def _rebody(held: type, made: type) -> bool:
    """Give ``held`` (the person's class) the attributes of ``made`` (the same class
    statement, rewritten), so that its instances use the rewritten methods; False, and
    ``held`` untouched, where the two are not the same kind of class."""
    if type(held) is not type(made) or held.__bases__ != made.__bases__:
        return False
    if set(getattr(held, "__slots__", ())) != set(getattr(made, "__slots__", ())):
        return False
    for name, value in made.__dict__.items():
        if name in _OWN or isinstance(
            value, types.MemberDescriptorType | types.GetSetDescriptorType
        ):
            continue  # slots and the instance dict are tied to their own class
        _point_super_at(value, made, held)
        try:
            setattr(held, name, value)
        except (AttributeError, TypeError):
            continue  # a read-only class attribute: it stays as it was
    return True


def _point_super_at(value: Any, made: type, held: type) -> None:
    """A method that calls ``super()`` reads its class from a cell the compiler made for
    it: point that cell at ``held``, the class the method now belongs to."""
    functions = [value]
    if isinstance(value, staticmethod | classmethod):
        functions = [value.__func__]
    elif isinstance(value, property):
        functions = [value.fget, value.fset, value.fdel]
    for function in functions:
        if not isinstance(function, types.FunctionType) or function.__closure__ is None:
            continue
        for name, cell in zip(function.__code__.co_freevars, function.__closure__, strict=True):
            if name == "__class__" and cell.cell_contents is made:
                cell.cell_contents = held
