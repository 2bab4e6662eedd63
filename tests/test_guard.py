"""The one guard for porter's own failures: a warning for the person, a raise under
``PORTER_DEBUG=1`` (the suite runs with it set)."""

from __future__ import annotations

import pytest

from porter_ext.guard import PorterInternalError, debug, guarded, internal_error


def test_the_suite_runs_with_the_debug_flag():
    assert debug()


def test_under_debug_an_internal_error_is_raised(monkeypatch):
    monkeypatch.setenv("PORTER_DEBUG", "1")
    with (
        pytest.raises(PorterInternalError, match="reading a device failed inside porter"),
        guarded("reading a device"),
    ):
        raise KeyError("cuda")


def test_without_debug_it_becomes_a_warning_and_work_goes_on(monkeypatch):
    monkeypatch.setenv("PORTER_DEBUG", "0")
    warnings: list[str] = []
    with guarded("classifying a call", warnings):
        raise ValueError("bad condition")
    assert warnings == [
        "porter: classifying a call failed inside porter (ValueError: bad condition)"
    ]
    assert "ZeroDivisionError" in internal_error("x", ZeroDivisionError("y"), [])


def test_interrupts_are_never_swallowed(monkeypatch):
    monkeypatch.setenv("PORTER_DEBUG", "0")
    with pytest.raises(KeyboardInterrupt), guarded("anything", []):
        raise KeyboardInterrupt


def test_a_device_reader_that_fails_reaches_the_guard(monkeypatch, capsys):
    """A bug in a backend's device reader fails a test instead of a silent "unknown"."""
    import numpy as np

    from porter_ext.backends import device_of, get_backend

    backend = get_backend("numpy")

    def broken(x):
        raise RuntimeError("reader bug")

    monkeypatch.setattr(backend, "device_of", broken)
    monkeypatch.setenv("PORTER_DEBUG", "1")
    with pytest.raises(PorterInternalError, match="reader bug"):
        device_of(np.ones(2))
    monkeypatch.setenv("PORTER_DEBUG", "0")
    assert device_of(np.ones(2)) == "unknown"
    assert "reader bug" in capsys.readouterr().err
