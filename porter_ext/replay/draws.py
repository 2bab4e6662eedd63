"""Random draws in a replay on another library (issue 29 item 1).

The standard has no random numbers, so a rewrite leaves the person's random calls as they
are. On the original library a replay draws what the original drew (`replay.rng` restores
the generator states). On another library:

- a host generator's draws (NumPy's ``np.random.*``, ``default_rng``) are the same
  numbers there: the rebound ``np`` keeps its ``random``, and every draw, through it or a
  generator it made or the person passed in, is moved to the replay's library;
- a library's own generator (``torch.randn``) draws there through the person's module,
  and its draws are moved to the replay's library so that the cell runs on it; no other
  library draws those numbers, so what depends on them is judged by shape, dtype and
  finiteness only (`porter_ext.fix.draws`).
"""

from __future__ import annotations

import functools
import types
from typing import Any

from porter_ext.backends import Backend, backend_for, backend_of_module, convert_to


class Mover:
    """Moves what a draw returned (an array, or a tuple of them) to the replay's library."""

    def __init__(self, backend: Backend, device: str | None) -> None:
        self.backend, self.device = backend, device

    def __call__(self, value: Any) -> Any:
        if isinstance(value, tuple):
            return type(value)(self(v) for v in value)
        if host_generator_of(value) is not None:
            return HostGenerator(value, self)
        owner = backend_for(value)
        if owner is None or owner is self.backend or isinstance(value, owner.scalar_types()):
            return value
        return convert_to(value, self.backend, self.device).value

    def wrap(self, f: Any) -> Any:
        """``f``, its result moved."""

        @functools.wraps(f)
        def moved(*args: Any, **kwargs: Any) -> Any:
            return self(f(*args, **kwargs))

        return moved


class _Moved(types.ModuleType):
    """A module of the person's seen through a replay on another library: ``overlay`` first
    (callables whose draws are moved), then the module itself."""

    def __init__(self, module: Any, overlay: dict[str, Any]) -> None:
        super().__init__(getattr(module, "__name__", "module"), getattr(module, "__doc__", None))
        vars(self)["_porter_module"] = module
        vars(self)["_porter_overlay"] = overlay

    def __getattr__(self, name: str) -> Any:
        overlay = vars(self)["_porter_overlay"]
        if name in overlay:
            return overlay[name]
        return getattr(vars(self)["_porter_module"], name)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(vars(self)["_porter_module"])) | set(vars(self)["_porter_overlay"]))


class _HostRandom(types.ModuleType):
    """A host generator module (``numpy.random``) whose draws, and the draws of the
    generators it makes, are moved to the replay's library."""

    def __init__(self, module: Any, mover: Mover) -> None:
        super().__init__(module.__name__, module.__doc__)
        vars(self)["_porter_module"] = module
        vars(self)["_porter_mover"] = mover

    def __getattr__(self, name: str) -> Any:
        value = getattr(vars(self)["_porter_module"], name)
        mover = vars(self)["_porter_mover"]
        if isinstance(value, type):
            return _generator_class(value, mover)
        return mover.wrap(value) if callable(value) else value


def _generator_class(cls: type, mover: Mover) -> Any:
    """A generator class (``Generator``, ``RandomState``, ``SeedSequence``): calling it
    makes a generator whose draws are moved; ``isinstance`` still sees the class."""

    def make(*args: Any, **kwargs: Any) -> Any:
        return HostGenerator(cls(*args, **kwargs), mover)

    return make if _draws_arrays(cls) else cls


def _draws_arrays(cls: type) -> bool:
    return any(hasattr(cls, m) for m in ("random", "normal", "integers", "randint"))


class HostGenerator:
    """A host generator (``np.random.default_rng(0)``) whose draws are moved."""

    def __init__(self, generator: Any, mover: Mover) -> None:
        self._porter_generator, self._porter_mover = generator, mover

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._porter_generator, name)
        if callable(value) and not isinstance(value, type):
            return self._porter_mover.wrap(value)
        return value

    def __repr__(self) -> str:
        return repr(self._porter_generator)

    def __reduce__(self) -> tuple:
        # what a replay sends back as an output is the person's kind of generator
        return (_unwrapped, (self._porter_generator,))


def _unwrapped(generator: Any) -> Any:
    return generator


def host_generator_of(value: Any) -> Backend | None:
    """The library whose host generator ``value`` is (a ``numpy.random.Generator``)."""
    module = getattr(type(value), "__module__", None)
    owner = backend_of_module(module) if isinstance(module, str) else None
    if owner is None or owner.host_random is None:
        return None
    inside = module.startswith(f"{owner.module}.{owner.host_random}")
    return owner if inside and _draws_arrays(type(value)) else None


def moved_draws(
    person: Any, rebound: Any, backend: Backend, device: str | None, own: bool = False
) -> Any:
    """What a replay on ``backend`` binds where the person bound the module ``person``
    (``rebound``: the namespace it binds otherwise): the same, with the person's
    library's host generator's draws moved to ``backend`` (see the module doc), and its
    own generator's too where ``own``; or ``rebound`` itself."""
    if not isinstance(person, types.ModuleType) or not isinstance(rebound, types.ModuleType):
        return rebound
    owner = backend_of_module(person.__name__)
    if owner is None or owner is backend:
        return rebound
    mover = Mover(backend, device)
    if person.__name__ == owner.module and owner.host_random is not None:
        host = getattr(person, owner.host_random, None)
        if host is None or rebound is person:
            return rebound
        return _Moved(rebound, {owner.host_random: _HostRandom(host, mover)})
    inside = person.__name__.removeprefix(owner.module)
    if not own or rebound is not person or inside[:1] not in ("", "."):
        return rebound
    within = f"{inside[1:]}." if inside else ""
    names = [n.removeprefix(within) for n in owner.generator_draws if n.startswith(within)]
    overlay = _overlay(person, names, mover)
    return _Moved(person, overlay) if overlay else rebound


def _overlay(module: Any, names: list[str], mover: Mover) -> dict[str, Any]:
    """``module``'s draws among ``names`` (``randn``; ``random.normal`` for a submodule's),
    their results moved."""
    found: dict[str, Any] = {}
    for head in {n.partition(".")[0] for n in names}:
        value = getattr(module, head, None)
        if value is None:
            continue
        if head in names:
            found[head] = mover.wrap(value)
        elif isinstance(value, types.ModuleType):
            inner = [n.partition(".")[2] for n in names if n.startswith(f"{head}.")]
            found[head] = _Moved(value, _overlay(value, inner, mover))
    return found


def moved_generator(value: Any, backend: Backend, device: str | None) -> Any:
    """A host generator the person passed in, its draws moved to ``backend``; anything
    else as it is."""
    owner = host_generator_of(value)
    if owner is None or owner is backend:
        return value
    return HostGenerator(value, Mover(backend, device))
