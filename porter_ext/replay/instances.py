"""Instances of the person's classes among a replay's inputs.

A class's rewrite (``porter fix``) is verified in a replay that runs the rewritten class
statement before the calling cell. An instance the cell makes there is one of the
rewritten class; an instance made before the cell (``model = Sequential([...])`` in an
earlier cell, then ``logits = model(Xb)``) arrives with the class as written, and would
run it in the replay whatever class statement ran before: `adopt` gives those instances,
the replay's own copies, the rewritten class.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["adopt", "made_before"]

#: how far the search looks into values (containers and objects' attributes)
_DEPTH = 6
_SEARCH = 10_000


def _reached(values: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """The values reached from ``values`` (name → value), each with the name it was
    reached from: themselves, items of lists, tuples, sets and dicts, and the attributes
    of objects (a model's layers), within a bounded search; not into classes or modules."""
    todo = [(name, value, 0) for name, value in values.items()]
    seen: set[int] = set()
    while todo and len(seen) < _SEARCH:
        name, value, depth = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        yield name, value
        if depth >= _DEPTH or isinstance(value, type | types.ModuleType):
            continue
        if type(value) in (list, tuple, set, frozenset):
            todo.extend((name, item, depth + 1) for item in value)
        elif type(value) is dict:
            todo.extend((name, item, depth + 1) for item in value.values())
        elif isinstance(getattr(value, "__dict__", None), dict):
            todo.extend((name, item, depth + 1) for item in vars(value).values())


def made_before(inputs: Mapping[str, Any], cls: Any) -> str | None:
    """The first input (its name) that holds an instance of the class ``cls``."""
    if not isinstance(cls, type):
        return None
    return next((name for name, value in _reached(inputs) if isinstance(value, cls)), None)


def _same_class(new: type) -> Callable[[Any], bool]:
    def old(value: Any) -> bool:
        kind = type(value)
        return (
            kind is not new
            and kind.__qualname__ == new.__qualname__
            and kind.__module__ == new.__module__
        )

    return old


def adopt(namespace: dict[str, Any], name: str) -> int:
    """Give the instances of the class ``name`` that the replay's inputs hold (made by
    the class as written) the class the replay just bound to ``name`` (the rewritten
    one); returns how many. Raises where an instance cannot take it (another layout):
    the replay must not pass while it runs the class as written."""
    new = namespace.get(name)
    if not isinstance(new, type):
        return 0
    old = _same_class(new)
    found = [value for _, value in _reached(namespace) if old(value)]
    for value in found:
        try:
            value.__class__ = new
        except TypeError as error:
            raise TypeError(
                f"an instance of {name} made before this cell cannot take its rewritten "
                f"class ({error})"
            ) from None
    return len(found)
