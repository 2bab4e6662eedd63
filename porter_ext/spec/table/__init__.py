"""The table behind :mod:`porter_ext.spec.replacements`, grouped by what a porter meets.

Each chapter is a module that declares its entries as ``ENTRIES`` (written with
`porter_ext.spec.table.chapter`); the table is the chapters in the order below, which is
the order a lookup lists a callee's entries in. Every library-specific name is checked
against the installed library by ``tests/spec/test_replacements.py`` (CuPy excepted).
"""

from __future__ import annotations

from porter_ext.spec.replacement import Replacement
from porter_ext.spec.table import (
    attributes,
    conversion_methods,
    creation,
    elementwise,
    indexing,
    linalg,
    math_methods,
    nn,
    placement,
    random,
    runtime,
    shape_methods,
    shapes,
    statistics,
    ufuncs,
    usage,
)

#: the chapters in table order
CHAPTERS = (
    runtime,
    placement,
    creation,
    elementwise,
    shapes,
    indexing,
    linalg,
    statistics,
    nn,
    random,
    usage,
    math_methods,
    shape_methods,
    conversion_methods,
    attributes,
    ufuncs,
)

ENTRIES: tuple[Replacement, ...] = tuple(entry for chapter in CHAPTERS for entry in chapter.ENTRIES)
