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


def test_a_failing_rewrite_for_recording_reaches_the_guard(port_shell, monkeypatch):
    """The %%port path's rewrite for recording went its own way (a warning) even under
    PORTER_DEBUG: now the one guard decides (``%port on``'s transformer too, see
    test_magics.py)."""
    import porter_ext.record.cell as cell_module

    def broken(*args, **kwargs):
        raise RuntimeError("transformer bug")

    monkeypatch.setattr(cell_module, "rewrite_and_compile", broken)
    ip = port_shell
    ip.run_cell("import numpy as np\nx = np.ones(3)")
    cell = "%%port --no-replay --quiet\ny = np.sum(x)"
    monkeypatch.setenv("PORTER_DEBUG", "0")
    result = ip.run_cell(cell)
    assert result.success and float(ip.user_ns["y"]) == 3.0  # it ran, unrecorded
    monkeypatch.setenv("PORTER_DEBUG", "1")
    failed = ip.run_cell(cell)
    assert "transformer bug" in repr(failed.error_in_exec)


def test_a_failure_repeated_in_a_loop_is_one_warning(monkeypatch):
    """The recorder's failures go through this guard too (no second guard of its own): a
    call in a loop that fails in porter each time warns once."""
    import numpy as np

    from porter_ext.record import recorder, run_recorded

    def broken(*args, **kwargs):
        raise RuntimeError("porter bug")

    monkeypatch.setattr(recorder.Recorder, "_verdict", broken)
    monkeypatch.setenv("PORTER_DEBUG", "0")
    ns = {"np": np, "a": np.ones(3)}
    run = run_recorded("for i in range(5):\n    b = np.exp(a)\n", ns)
    assert run.exception is None
    assert run.warnings == [
        "porter: recording the cell (it ran unchanged) failed inside porter "
        "(RuntimeError: porter bug)"
    ]
    warnings: list[str] = []
    for _ in range(3):
        internal_error("x", ValueError("y"), warnings)
    assert len(warnings) == 1


def test_a_headless_run_says_the_failures_its_kernel_printed_or_raised(
    tmp_path, monkeypatch, capsys
):
    """``porter fix`` exited 0 with a cell's rewrite silently missing: the kernel's
    ``internal_error`` (a warning on the cell's stderr, or PorterInternalError under
    PORTER_DEBUG=1) stayed in outputs a headless run never shows. Each is said once on
    porter's stderr, with its cell (and under PORTER_DEBUG=1 the command fails)."""
    import nbformat

    from porter_ext.headless import NotebookRun

    monkeypatch.setenv("PORTER_DEBUG", "0")
    warning = internal_error("verifying the rewrite of this cell (--fix)", KeyError("x"), [])
    monkeypatch.setenv("PORTER_DEBUG", "1")
    with pytest.raises(PorterInternalError) as raised:
        internal_error("replaying the cell", ValueError("boom"))
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text=f"{warning}\nporter: a note\n"),
        nbformat.v4.new_output("stream", name="stdout", text=f"{warning}\n"),
        nbformat.v4.new_output(
            "error", ename="PorterInternalError", evalue=str(raised.value), traceback=[]
        ),
    ]
    nb = nbformat.v4.new_notebook(cells=[cell])
    run = NotebookRun(tmp_path / "nb.ipynb", nb, timeout=10, backends=[], progress=False)
    try:
        run._porter_failures(cell, 3)
        run._porter_failures(cell, 3)  # a cell seen again says nothing new
    finally:
        run.close()
    assert run.failures == [
        "cell 3: verifying the rewrite of this cell (--fix) failed inside porter (KeyError: 'x')",
        "cell 3: replaying the cell failed inside porter (ValueError: boom)",
    ]
    assert capsys.readouterr().err.splitlines() == [f"porter: {f}" for f in run.failures]
