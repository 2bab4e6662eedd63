"""Finding adapters, listing what this machine has, and importing nothing on the way."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.backends import (
    Backend,
    BackendInfo,
    SpecError,
    backend_for,
    device_of,
    get_backend,
    list_backends,
)

from .helpers import run_snippet

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
xps = pytest.importorskip("array_api_strict")


def test_importing_backends_imports_no_array_library() -> None:
    loaded = run_snippet(
        """
        import json, sys
        import porter_ext.backends as b
        b.parse_specs("torch, jax:cpu:1, cupy, strict:device1")
        b.get_backend("torch"); b.get_backend("jax")
        b.backend_for([1, 2]); b.device_of(3.0)
        print(json.dumps(sorted(m for m in ("torch", "jax", "jaxlib", "cupy",
            "array_api_strict") if m in sys.modules)))
        """
    )
    assert loaded == []


def test_recognising_a_numpy_array_imports_nothing_else() -> None:
    loaded = run_snippet(
        """
        import json, sys
        import numpy as np
        import porter_ext.backends as b
        found = (b.backend_for(np.ones(2)).name, b.device_of(np.ones(2)))
        print(json.dumps([found, [m for m in ("torch", "jax", "cupy", "array_api_strict")
                                  if m in sys.modules]]))
        """
    )
    assert loaded == [["numpy", "cpu"], []]


@pytest.mark.parametrize("name", ["numpy", "torch", "jax", "cupy", "strict"])
def test_get_backend(name: str) -> None:
    backend = get_backend(name)
    assert isinstance(backend, Backend)
    assert backend.name == name
    assert get_backend(name.upper()) is backend


def test_get_backend_aliases_and_unknown() -> None:
    assert get_backend("array_api_strict").name == "strict"
    with pytest.raises(SpecError, match="numpy, torch, jax, cupy, strict"):
        get_backend("tensorflow")


@pytest.mark.parametrize(
    ("make", "library", "device"),
    [
        (lambda: np.ones(3), "numpy", "cpu"),
        (lambda: np.float32(1), "numpy", "cpu"),
        (lambda: torch.ones(3), "torch", "cpu"),
        (lambda: torch.ones(3, device="meta"), "torch", "meta"),
        (lambda: jnp.ones(3), "jax", "cpu:0"),
        (lambda: xps.ones(3), "strict", "CPU_DEVICE"),
        (lambda: xps.ones(3, device=xps.Device("device1")), "strict", "device1"),
    ],
)
def test_backend_for_and_device_of(make, library: str, device: str) -> None:
    x = make()
    assert backend_for(x).name == library
    assert device_of(x) == device


@pytest.mark.parametrize("thing", [1, 2.5, [1, 2], "abc", None, object()])
def test_non_arrays_have_no_backend(thing: object) -> None:
    assert backend_for(thing) is None
    assert device_of(thing) is None


def test_traced_jax_values_are_traced() -> None:
    seen = []

    @jax.jit
    def f(x):
        seen.append(device_of(x))
        return x * 2

    f(jnp.ones(3))
    assert seen == ["traced"]


def _by_spec() -> dict[str, BackendInfo]:
    return {info.spec: info for info in list_backends()}


def test_list_backends_available_libraries() -> None:
    infos = _by_spec()
    expected = {
        "numpy": (np.__version__, ["cpu"]),
        "torch": (None, ["cpu"]),
        "jax": (jax.__version__, ["cpu:0"]),
        "strict": (None, ["CPU_DEVICE"]),
    }
    for spec, (version, devices) in expected.items():
        info = infos[spec]
        assert info.available, info
        assert info.reason is None
        assert info.library == spec
        assert info.version and (version is None or info.version == version)
        assert info.devices == devices
    assert infos["torch"].version.startswith(torch.__version__.split("+")[0])


def test_list_backends_strict_fake_devices() -> None:
    infos = _by_spec()
    for device in ("device1", "device2"):
        assert infos[f"strict:{device}"].available
        assert infos[f"strict:{device}"].devices == [device]


def test_list_backends_missing_cupy_and_accelerators_have_reasons() -> None:
    infos = _by_spec()
    cupy = infos["cupy"]
    assert not cupy.available and cupy.devices == []
    assert cupy.reason
    try:
        import cupy as _  # noqa: F401
    except ImportError:
        assert cupy.reason == "cupy is not installed (pip install porter-ext[cupy])"

    if not torch.accelerator.is_available():
        (accel,) = [i for i in infos.values() if i.library == "torch" and not i.available]
        assert accel.spec == "torch:cuda"
        assert "torch.accelerator.is_available() is False" in accel.reason
    if not any(d.platform == "gpu" for d in jax.devices()):
        assert not infos["jax:gpu"].available
        assert "no GPU platform" in infos["jax:gpu"].reason


def test_list_backends_entries_are_the_reports_environment() -> None:
    # one type (issue 17 item 1): what `porter backends` lists is what the report holds,
    # and the report's codec spells it
    from porter_ext.model import BackendEntry, Environment
    from porter_ext.report.codec import environment_to_dict

    infos = list_backends()
    assert BackendInfo is BackendEntry
    data = environment_to_dict(Environment("3", infos))
    for entry in data["backends"]:
        assert list(entry) == ["spec", "library", "version", "available", "devices", "reason"]
        assert (entry["reason"] is None) == entry["available"]
