"""The sites of a rewritten cell: where a call, an operation or a loop is written.

The rewrite (transformer.py) gives each hook call its site as a constant. Compiled code
can only hold plain tuples as constants, so the rewrite writes each site as one and
`compiled.py` puts these named tuples in their place in the compiled code objects (the
same objects every time the code runs: the hooks' fast paths compare sites by identity).
A hook reads the fields by name, at the cost of a tuple's own index.
"""

from __future__ import annotations

from typing import NamedTuple


class Place(NamedTuple):
    """Where a site is written, and what is written there (a call's callee as spelled, an
    operation's name): what the records of one site are merged by."""

    cell: int | str
    line: int
    col: int
    #: a call's callee as written (`CallSite.spelled`), or an operation's name
    written: str | None
    end_line: int
    end_col: int


class CallSite(NamedTuple):
    """A call ``f(...)``: 1-based ``line``, ``col`` in characters, its end likewise."""

    cell: int | str
    line: int
    col: int
    #: the callee's name as written (``f`` of ``f(x)``, ``sum`` of ``x.sum()``), or None
    spelled: str | None
    #: the slot of what the site has only ever seen as plain Python (a callee, or a
    #: method's receiver type; see transformer.py), and the key of its fast path
    slot: int
    #: the callee's shape: ``transformer.NAME_SITE``, ``METHOD_SITE`` or ``OTHER_SITE``
    shape: int
    end_line: int
    end_col: int

    @property
    def place(self) -> Place:
        return Place(self.cell, self.line, self.col, self.spelled, self.end_line, self.end_col)


class OperationSite(NamedTuple):
    """An operator, index or attribute: ``a + b``, ``x[k]``, ``x[k] = v``, ``x.T``."""

    cell: int | str
    line: int
    col: int
    #: the operation: ``__add__``, ``__getitem__``, ``__setitem__``, ``__iadd__``, or the
    #: attribute's name
    name: str
    #: one slot per operand read twice (its type, while plain), None for an operand read
    #: once; () when no operand has one (the hook settles plain values itself)
    slots: tuple[int | None, ...]
    #: the key of the site's fast path
    key: int
    end_line: int
    end_col: int

    @property
    def place(self) -> Place:
        return Place(self.cell, self.line, self.col, self.name, self.end_line, self.end_col)


class LoopSite(NamedTuple):
    """A ``for``/``while`` loop or a comprehension whose body records something."""

    cell: int | str
    line: int
    #: filled once the loop runs its plain copy (`Recorder.iteration`)
    slot: int


Site = CallSite | OperationSite | LoopSite
#: the kinds of site, in the order `compiled.exported` numbers them
SITE_TYPES: tuple[type, ...] = (CallSite, OperationSite, LoopSite)
