"""Calls whose result is a partition: only the k-th element's place is specified.

``partition(a, kth, axis=-1)`` puts the element that would be at ``kth`` in sorted order
there, the smaller ones before it and the larger ones after, each side in an order left
to the implementation; ``argpartition`` gives the indices that do so. Every library of
the NumPy family (NumPy, JAX, CuPy) spells them so, as functions and (``a.partition(kth)``
in place, ``a.argpartition(kth)``) as array methods; the standard has neither. Two runs
may therefore give different, equally valid results, which the compare stage checks as
partitions rather than element by element.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Partitioning:
    """How a partition call is spelled: where its arguments sit and what it returns."""

    #: the result is indices into the partitioned array, not its values
    indices: bool
    #: the method form works in place on the array (and returns None)
    in_place_method: bool
    #: the default axis (-1: the last); None flattens
    axis: int | None = -1


#: the last part of a call's name -> its spelling (function form: ``(a, kth, axis)``,
#: method form: ``a.NAME(kth, axis)``)
PARTITIONS: dict[str, Partitioning] = {
    "partition": Partitioning(indices=False, in_place_method=True),
    "argpartition": Partitioning(indices=True, in_place_method=False),
}


def partitioning(name: str) -> Partitioning | None:
    """The spelling of the partition call ``name`` (qualified, ``numpy.partition``,
    ``ndarray.argpartition``), or None when it is no partition call."""
    return PARTITIONS.get(name.rpartition(".")[2])
