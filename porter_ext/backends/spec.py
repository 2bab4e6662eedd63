"""Backend specs: ``LIB[:DEVICE][@WHERE]`` strings such as ``torch``, ``jax:cpu:1``,
``strict:device1``, ``torch:cuda:0@/path/kernel-123.json``, ``dask@tcp://host:8786``.

WHERE names where the replay runs when it is not a local worker: a kernel's connection
file, a Jupyter (Enterprise) Kernel Gateway URL, or for Dask a scheduler address.

Parsing here is purely syntactic, over the library names and aliases the registry gives
(each adapter declares its own): whether the device exists is the adapter's business
(``Backend.resolve_device``), so a spec for a missing GPU parses and is later skipped
with its reason.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


class SpecError(ValueError):
    """A backend spec that does not parse; the message names the valid forms."""


@dataclass(frozen=True)
class BackendSpec:
    """A library, optionally one of its devices spelled as the library spells it, and
    optionally where the replay runs (``where``: connection file, gateway URL, scheduler)."""

    library: str
    device: str | None = None
    where: str | None = None

    def __str__(self) -> str:
        text = self.library if self.device is None else f"{self.library}:{self.device}"
        return text if self.where is None else f"{text}@{self.where}"

    @property
    def local(self) -> BackendSpec:
        """The same library and device without ``where``."""
        return BackendSpec(self.library, self.device)


def usage(libraries: tuple[str, ...]) -> str:
    return (
        f"expected LIB[:DEVICE][@WHERE] with LIB one of {', '.join(libraries)}"
        " (e.g. torch:cuda:0, jax:cpu:1, strict:device1, dask@tcp://host:8786)"
    )


def parse_spec_with(text: str, libraries: tuple[str, ...], aliases: dict[str, str]) -> BackendSpec:
    """Parse one ``LIB[:DEVICE][@WHERE]`` against these library names and aliases;
    raises SpecError naming the valid libraries."""
    if not isinstance(text, str):
        raise SpecError(
            f"backend spec must be a string, got {type(text).__name__}; {usage(libraries)}"
        )
    return _parse(text, libraries, tuple(sorted(aliases.items())))


@functools.lru_cache(maxsize=256)
def _parse(text: str, libraries: tuple[str, ...], alias_items: tuple) -> BackendSpec:
    ALIASES, LIBRARIES = dict(alias_items), libraries  # noqa: N806

    def _usage() -> str:
        return usage(LIBRARIES)

    stripped, at, where = text.strip().partition("@")
    where = where.strip()
    if at and not where:
        raise SpecError(f"backend spec {text!r} has an empty place after '@'; {_usage()}")
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
    return BackendSpec(library, device or None, where or None)


def parse_specs_with(
    text: str, libraries: tuple[str, ...], aliases: dict[str, str]
) -> list[BackendSpec]:
    """Parse comma-separated specs; blanks are ignored and duplicates dropped, order kept."""
    specs: list[BackendSpec] = []
    for part in text.split(","):
        if not part.strip():
            continue
        spec = parse_spec_with(part, libraries, aliases)
        if spec not in specs:
            specs.append(spec)
    return specs
