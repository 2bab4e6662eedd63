"""How the model's records hand their fields on: a type that extends another (a live
replay and the report's entry extend `ReplayOutcome`; a leaf's diff extends
`OutputComparison`; a lint finding extends the static check's site) is made from an
instance of the other by taking the values of the shared fields."""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import Any


def fields_of(record: object, base: type) -> dict[str, Any]:
    """``record``'s values of ``base``'s fields (``record`` is a ``base``, or extends it)."""
    return {name: getattr(record, name) for name in _names(base)}


@cache
def _names(base: type) -> tuple[str, ...]:
    """``base``'s field names, read once (`dataclasses.fields` costs a scan per call)."""
    return tuple(f.name for f in fields(base))
