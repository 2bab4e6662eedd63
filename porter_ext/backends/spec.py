"""Backend specs: ``LIB[:DEVICE]`` strings such as ``torch``, ``jax:cpu:1``, ``strict:device1``.

Parsing is purely syntactic: whether the device exists is the adapter's business
(``Backend.resolve_device``), so a spec for a missing GPU parses and is later skipped
with its reason.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

#: the libraries a spec may name, in the order ``porter backends`` lists them
LIBRARIES: tuple[str, ...] = ("numpy", "torch", "jax", "cupy", "strict")

#: other spellings people type for a library
ALIASES: dict[str, str] = {
    "np": "numpy",
    "pytorch": "torch",
    "jnp": "jax",
    "array_api_strict": "strict",
    "array-api-strict": "strict",
}


class SpecError(ValueError):
    """A backend spec that does not parse; the message names the valid forms."""


@dataclass(frozen=True)
class BackendSpec:
    """A library and, optionally, one of its devices spelled as the library spells it."""

    library: str
    device: str | None = None

    def __str__(self) -> str:
        return self.library if self.device is None else f"{self.library}:{self.device}"


def _usage() -> str:
    return f"expected LIB[:DEVICE] with LIB one of {', '.join(LIBRARIES)} (e.g. torch:cuda:0, jax:cpu:1, strict:device1)"


def parse_spec(text: str) -> BackendSpec:
    """Parse one ``LIB[:DEVICE]``; raises SpecError naming the valid libraries."""
    if not isinstance(text, str):
        raise SpecError(f"backend spec must be a string, got {type(text).__name__}; {_usage()}")
    return _parse(text)


@functools.lru_cache(maxsize=256)
def _parse(text: str) -> BackendSpec:
    stripped = text.strip()
    library, sep, device = stripped.partition(":")
    library = library.strip().lower()
    library = ALIASES.get(library, library)
    if not library:
        raise SpecError(f"empty backend spec {text!r}; {_usage()}")
    if library not in LIBRARIES:
        raise SpecError(f"unknown library {library!r} in backend spec {text!r}; {_usage()}")
    device = device.strip()
    if sep and not device:
        raise SpecError(f"backend spec {text!r} has an empty device; {_usage()}")
    if any(c.isspace() for c in device):
        raise SpecError(f"device {device!r} in backend spec {text!r} contains spaces; {_usage()}")
    return BackendSpec(library, device or None)


def parse_specs(text: str) -> list[BackendSpec]:
    """Parse comma-separated specs; blanks are ignored and duplicates dropped, order kept."""
    specs: list[BackendSpec] = []
    for part in text.split(","):
        if not part.strip():
            continue
        spec = parse_spec(part)
        if spec not in specs:
            specs.append(spec)
    return specs
