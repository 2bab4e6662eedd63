"""How a chapter of the replacement table is written, and what many chapters say.

A chapter module makes one :class:`Chapter`, adds its entries in table order and
declares them as its ``ENTRIES``. Names are relative to each library's array namespace
(``"linalg.norm"``, ``"cuda.synchronize"`` for torch, ``"device_put"`` for jax's top
level; jax.numpy functions are plain names). Suggestion templates are filled by
``replacements.render_suggestion`` from the call's ``{fields}``: the array of a method is ``x``, and
``, axis={axis}`` disappears when the call passed no axis.
"""

from __future__ import annotations

from functools import partialmethod

from porter_ext.spec.replacement import Replacement

#: the library of each letter of an entry's ``libs`` (``"*"``: any library)
_LIBS = {"n": "numpy", "t": "torch", "j": "jax", "c": "cupy", "*": "*"}

#: the statuses of `porter_ext.spec.replacement.STATUSES` most entries have
NS = "non_standard"
USAGE = "non_standard_usage"
DEVICE = "device_specific"
SYNC = "host_sync"

#: what an entry without a rewrite says by default
NO_VERIFIED_REWRITE = "no verified rewrite: the suggestion is advice to apply by hand"
NO_RANDOM_REWRITE = (
    "random draws: a different generator gives different numbers, so no rewrite can be "
    "verified against the original"
)
NO_SEED_REWRITE = (
    "the standard has no random numbers, so nothing to seed: the nearest portable form is "
    "a host generator, rng = np.random.default_rng(seed), whose draws move with "
    "xp.asarray(..., device=device); no rewrite, since every draw after it would change"
)
NO_TUPLE_REWRITE = (
    "torch returns a (values, indices) named tuple here: the standard needs two calls, and "
    "code reading .values/.indices must change with them"
)
#: what an array method's entry says by default
METHOD_NOTE = "array methods are not in the standard; call the namespace function"


def renamed(name: str) -> str:
    """The note of an entry whose standard form is the same call under another name."""
    return f"the standard spells it {name}"


class Chapter:
    """The entries of one chapter of the table, in the order they are added."""

    def __init__(self) -> None:
        self._entries: list[Replacement] = []

    @property
    def entries(self) -> tuple[Replacement, ...]:
        return tuple(self._entries)

    def add(
        self,
        libs: str,
        kind: str,
        name: str,
        status: str,
        standard_name: str | None,
        suggestion: str,
        note: str,
        when: str | None = None,
        *,
        rewrite: str | None = None,
        example: str | None = None,
        no_rewrite: str = "",
        parts: tuple[tuple[str, str], ...] = (),
        portable: str | None = None,
    ) -> None:
        """One entry per library letter in ``libs`` (n numpy, t torch, j jax, c cupy, * any).

        Thirteen parameters by reason: they are the table's columns, the fields of
        `Replacement` (``libs`` for the library), which the entries spell out one by one.

        ``rewrite`` is the executable template (`porter_ext.spec.rewrites`) and ``example``
        the original spelling it is verified on; without a rewrite, ``no_rewrite`` says why
        (by default: none has been verified, the suggestion is advice). ``parts`` are the
        templates of the fields of a tuple result (``.values``/``[0]``, ``.indices``/``[1]``)."""
        if (rewrite is not None or parts) and example is None:
            raise ValueError(f"the rewrite of {name} has no example to verify it on")
        reason = "" if rewrite is not None else (no_rewrite or NO_VERIFIED_REWRITE)
        for letter in libs:
            self._entries.append(
                Replacement(
                    _LIBS[letter],
                    kind,
                    name,
                    status,
                    standard_name,
                    suggestion,
                    when,
                    note,
                    rewrite,
                    reason,
                    example,
                    parts,
                    portable,
                )
            )

    def non_standard(
        self,
        kind: str,
        libs: str,
        name: str,
        standard_name: str | None,
        suggestion: str,
        note: str,
        **rewrite: str,
    ) -> None:
        """An entry of ``kind`` the standard lacks or names otherwise, for any call;
        ``rewrite``: `add`'s keywords."""
        self.add(libs, kind, name, NS, standard_name, suggestion, note, **rewrite)

    #: a function the standard lacks or names otherwise
    function = partialmethod(non_standard, "function")
    #: an array method the standard lacks
    method = partialmethod(non_standard, "method")
