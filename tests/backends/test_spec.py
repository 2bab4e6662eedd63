"""Backend spec strings: LIB[:DEVICE]."""

from __future__ import annotations

import pytest

from porter_ext.backends import BackendSpec, SpecError, parse_spec, parse_specs


@pytest.mark.parametrize(
    ("text", "library", "device", "spelled"),
    [
        ("numpy", "numpy", None, "numpy"),
        ("torch", "torch", None, "torch"),
        ("torch:cpu", "torch", "cpu", "torch:cpu"),
        ("torch:cuda:0", "torch", "cuda:0", "torch:cuda:0"),
        ("jax:cpu:1", "jax", "cpu:1", "jax:cpu:1"),
        ("jax:gpu:0", "jax", "gpu:0", "jax:gpu:0"),
        ("cupy:cuda:1", "cupy", "cuda:1", "cupy:cuda:1"),
        ("strict:device1", "strict", "device1", "strict:device1"),
        ("strict:CPU_DEVICE", "strict", "CPU_DEVICE", "strict:CPU_DEVICE"),
        ("  JAX : cpu:1 ", "jax", "cpu:1", "jax:cpu:1"),
        ("array-api-strict:device2", "strict", "device2", "strict:device2"),
        ("array_api_strict", "strict", None, "strict"),
    ],
)
def test_parse_spec(text: str, library: str, device: str | None, spelled: str) -> None:
    spec = parse_spec(text)
    assert spec == BackendSpec(library, device)
    assert str(spec) == spelled
    assert parse_spec(str(spec)) == spec


def test_device_keeps_the_library_spelling() -> None:
    assert parse_spec("strict:CPU_DEVICE").device == "CPU_DEVICE"


@pytest.mark.parametrize("text", ["tensorflow", "mxnet:gpu", "numpyy"])
def test_unknown_library_names_the_valid_ones(text: str) -> None:
    with pytest.raises(SpecError) as raised:
        parse_spec(text)
    message = str(raised.value)
    assert "LIB[:DEVICE]" in message
    for library in ("numpy", "torch", "jax", "cupy", "strict"):
        assert library in message
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize("text", ["", "   ", ":cpu", "torch:", "torch:  ", "jax:cpu 1"])
def test_malformed_specs(text: str) -> None:
    with pytest.raises(SpecError, match=r"LIB\[:DEVICE\]"):
        parse_spec(text)


def test_spec_must_be_a_string() -> None:
    with pytest.raises(SpecError):
        parse_spec(None)  # type: ignore[arg-type]


def test_parse_specs_splits_strips_and_dedupes_in_order() -> None:
    specs = parse_specs(" torch , jax:cpu:1,numpy, torch,jax:cpu:1 ,, strict:device1 ")
    assert [str(s) for s in specs] == ["torch", "jax:cpu:1", "numpy", "strict:device1"]


def test_parse_specs_dedupes_aliases() -> None:
    assert parse_specs("strict, array_api_strict") == [BackendSpec("strict")]


def test_parse_specs_empty() -> None:
    assert parse_specs("") == []


def test_parse_specs_reports_the_bad_part() -> None:
    with pytest.raises(SpecError, match="'tf'"):
        parse_specs("numpy, tf")


def test_spec_is_frozen_and_hashable() -> None:
    spec = BackendSpec("jax", "cpu:1")
    assert {spec: 1}[BackendSpec("jax", "cpu:1")] == 1
    with pytest.raises(AttributeError):
        spec.device = "cpu:0"  # type: ignore[misc]
