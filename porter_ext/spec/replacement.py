"""One entry of the replacement table: a non-standard spelling and its portable form.

Its own module, beneath both the table's data (the ``table`` package) and the lookup
(``replacements``), so that neither imports the other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass

from porter_ext.backends.registry import LIBRARIES as _BACKENDS

#: the libraries entries may name, by their spec names (porter_ext.backends), and "*"
LIBRARIES: tuple[str, ...] = (*_BACKENDS, "*")
KINDS: tuple[str, ...] = ("function", "method", "attribute")
#: ``outside_namespace``: not judged by the standard, and the portable way (no finding)
STATUSES: tuple[str, ...] = (
    "non_standard",
    "non_standard_usage",
    "device_specific",
    "host_sync",
    "outside_namespace",
)


@dataclass(frozen=True)
class Replacement:
    """One non-standard spelling (or usage) of a callee and the portable way to write it."""

    library: str
    kind: str
    name: str
    status: str
    standard_name: str | None
    suggestion: str
    when: str | None = None
    note: str = ""
    #: an executable template over the call's source (`render_rewrite`), or None
    rewrite: str | None = None
    #: why there is no rewrite, said plainly (empty exactly when ``rewrite`` is set)
    no_rewrite: str = ""
    #: the original spelling on `EXAMPLE_INPUTS` (``lib.`` is the entry's library) that
    #: tests/spec/test_replacement_rewrites.py runs against the rewrite on every backend
    example: str | None = None
    #: a call that returns a tuple (``torch.max(x, dim=1)``: values, indices): each field
    #: read from it (``.values`` or ``[0]``, ``.indices`` or ``[1]``) with its own
    #: template, in field order; the call as a whole keeps ``rewrite``/``no_rewrite``
    parts: tuple[tuple[str, str], ...] = ()
    #: the rewrite through ``xp`` of a ``{lib}`` rewrite (``torch.tensor(data)`` →
    #: ``xp.asarray(data, copy=True)``), written where an array at hand gives ``xp``: the
    #: result then belongs to that array's library (a replay on JAX indexes a JAX array
    #: with it); ``rewrite`` is written where none does
    portable: str | None = None
