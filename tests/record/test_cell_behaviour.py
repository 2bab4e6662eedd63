"""A ``%%port`` cell behaves exactly as the plain cell, in a real IPython shell (from the
reproducers adv_11, adv_13–17, adv_27, nb_03, nb_12, nb_13 of ../shared/repro)."""

from __future__ import annotations

import gc
import re
import threading
import warnings

import pytest

torch = pytest.importorskip("torch")

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def ip(port_shell):
    port_shell.run_cell("import numpy as np, torch, warnings", store_history=True)
    return port_shell


def run(ip, source, capsys=None):
    result = ip.run_cell(source, store_history=True)
    if capsys is not None:
        out = capsys.readouterr()
        result.text = _ANSI.sub("", out.out + out.err)
    return result


def test_line_numbers_count_the_cells_leading_blank_lines(ip):
    run(ip, "%%port --quiet --no-replay\n\nx = torch.ones(3).double()\nprint('-')\ny = x.sum(0)\n")
    lines = {c.name: c.line for c in ip.user_ns["_port"].entry.calls}
    assert lines["Tensor.double"] == 2 and lines["Tensor.sum"] == 4


def test_a_trailing_semicolon_suppresses_the_value(ip, capsys):
    run(ip, "x = 41")
    result = run(ip, "%%port --quiet --no-replay\nx + 1;", capsys)
    assert "Out[" not in result.text and result.result is None
    assert ip.user_ns.get("_") != 42
    shown = run(ip, "%%port --quiet --no-replay\nx + 1", capsys)
    assert "42" in shown.text


def test_code_that_reads_its_callers_frame_sees_the_persons_module(ip, capsys):
    run(ip, "import collections, enum, pickle, typing")
    result = run(
        ip,
        "%%port --quiet --no-replay\nP = collections.namedtuple('P', 'x')\n"
        "E = enum.Enum('E', 'A B')\nT = typing.TypeVar('T')\ns = pickle.dumps(P(1))\n",
    )
    assert result.error_in_exec is None
    assert ip.user_ns["P"].__module__ == "__main__"
    assert ip.user_ns["E"].__module__ == "__main__"
    assert ip.user_ns["T"].__module__ == "__main__"


def test_warnings_point_at_the_persons_line(ip):
    run(ip, "def lib():\n    warnings.warn('from lib', UserWarning, stacklevel=2)")
    for cell, line, category in [
        ("y = 1\nlib()", 2, UserWarning),
        ("a = np.log(np.zeros(2))", 1, RuntimeWarning),
        ("t = torch.ones(1)\nb = np.ones(2) / 0", 2, RuntimeWarning),
        # the cell's own warn, and a function of the cell's: they were reported at
        # porter's hook frame (stacklevel counted from it)
        ("y = 1\nwarnings.warn('from the cell')", 2, UserWarning),
        ("def g():\n    warnings.warn('from g', UserWarning, stacklevel=2)\n\ng()", 4, UserWarning),
        ("def h():\n    warnings.warn('in h')\n\nh()", 2, UserWarning),
    ]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run(ip, "%%port --quiet --no-replay\n" + cell)
        (warning,) = [w for w in caught if issubclass(w.category, category)]
        assert warning.filename.startswith("<ipython-input-"), (cell, warning.filename)
        assert warning.lineno == line, cell


def test_tracebacks_show_no_porter_frames(ip, capsys):
    run(ip, "def f(x):\n    return x.nope")
    capsys.readouterr()
    text = run(ip, "%%port --quiet --no-replay\ny = 1\nf(3)", capsys).text
    assert "AttributeError" in text and "return x.nope" in text
    assert "porter_ext" not in text
    text = run(
        ip, "%%port --quiet --no-replay --strict\nz = np.concatenate([np.ones(1)])", capsys
    ).text
    assert "NonStandardError" in text and "porter_ext" not in text


def test_the_recorders_bookkeeping_never_replaces_the_calls_exception(ip):
    run(
        ip,
        "class ModNone:\n    def __array__(self, dtype=None, copy=None): return np.ones(2)\n"
        "ModNone.__module__ = None\n"
        "class Meta(type):\n    def __hash__(cls): raise RuntimeError('no hash')\n"
        "class H(metaclass=Meta):\n    def __array__(self, dtype=None, copy=None): return np.ones(2)\n",
    )
    cell = (
        "out = []\nfor w in (ModNone(), H()):\n    try:\n        np.reshape(w, (7,))\n"
        "    except ValueError:\n        out.append('caught')\n    w2 = w\n    v = w2 + 0 if False else 1\n"
    )
    result = run(ip, "%%port --quiet --no-replay\n" + cell)
    assert result.error_in_exec is None
    assert ip.user_ns["out"] == ["caught", "caught"]


def test_functions_of_a_port_cell_keep_their_recursion_depth(ip):
    run(ip, "%%port --quiet --no-replay\ndef r(n): return 0 if n == 0 else 1 + r(n - 1)")
    assert run(ip, "v = r(800)").error_in_exec is None
    assert run(ip, "%%port --quiet --no-replay\nw = r(800)").error_in_exec is None


def test_other_threads_calls_are_not_recorded_into_the_cell(ip):
    run(ip, "a = np.ones(4)")
    run(
        ip,
        "%%port --quiet --no-replay\ndef work(x):\n    s = 0.0\n    for i in range(3):\n"
        "        s += float(np.multiply(x, i + 1).max())\n    return s",
    )
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            ip.user_ns["work"](ip.user_ns["a"])

    threads = [threading.Thread(target=loop) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for i in range(40):
            result = run(
                ip,
                f"%%port --quiet --no-replay\nb = np.add(a, {i}).sum()\nc = [np.exp(a) for _ in range(50)]",
            )
            assert result.error_in_exec is None
            names = {c.name for c in ip.user_ns["_port"].entry.calls}
            assert "numpy.multiply" not in names
    finally:
        stop.set()
        for t in threads:
            t.join()


def test_nothing_of_the_persons_outlives_the_cell(ip, tmp_path):
    run(
        ip,
        "import weakref\nbig = np.ones(1_000_000)\nbig_ref = weakref.ref(big)\n"
        "f = lambda: big.sum()\n"
        "class Holder:\n    def total(self): return 1\nh = Holder()\nh_ref = weakref.ref(h)",
    )
    run(ip, "%%port --quiet --no-replay\nv = f() + h.total()")
    run(ip, "del big, f, h")
    gc.collect()
    assert ip.user_ns["big_ref"]() is None
    assert ip.user_ns["h_ref"]() is None
    path = tmp_path / "x.txt"
    run(ip, f"%%port --quiet --no-replay\nopen({str(path)!r}, 'w').write('hello')")
    assert path.read_text() == "hello"


def test_verdicts_do_not_leak_from_a_strict_cell_into_later_cells(ip):
    run(ip, "from array_api_compat import array_namespace\nx = np.arange(6.0)")
    strict = run(
        ip,
        "%%port --quiet --no-replay --strict\nxp = array_namespace(x)\nb = xp.concatenate([x, x])",
    )
    assert type(strict.error_in_exec).__name__ == "NonStandardError"
    assert "{axis}" not in str(strict.error_in_exec)
    run(ip, "%%port --quiet --no-replay\nc = np.concatenate([x, x])")
    (call,) = [c for c in ip.user_ns["_port"].entry.calls if "concat" in c.name]
    assert (call.name, call.status) == ("numpy.concatenate", "non_standard")
    again = run(ip, "%%port --quiet --no-replay --strict\nd = np.concatenate([x, x])")
    assert type(again.error_in_exec).__name__ == "NonStandardError"


def test_clear_caches_is_public_and_recording_goes_on_after_it(ip):
    import porter_ext

    porter_ext.clear_caches()
    run(ip, "%%port --quiet --no-replay\ny = np.sum(np.ones(3))")
    assert {c.name for c in ip.user_ns["_port"].entry.calls} == {"numpy.sum", "numpy.ones"}


def test_top_level_await_runs_in_a_port_cell(ip):
    run(ip, "import asyncio\nasync def g():\n    return 5")
    result = run(ip, "%%port --quiet --no-replay\nv = await g()\nawait asyncio.sleep(0)\nw = v + 1")
    assert result.error_in_exec is None
    assert (ip.user_ns["v"], ip.user_ns["w"]) == (5, 6)


def test_top_level_await_inside_a_running_loop_finishes_what_needs_no_loop():
    import asyncio

    from porter_ext.record.cell import run_coroutine

    async def done():
        return 7

    async def kernel():  # as in a Jupyter kernel: a loop runs in this thread
        assert run_coroutine(done()) == 7
        with pytest.raises(RuntimeError, match="running event loop"):
            run_coroutine(asyncio.sleep(0.01))

    asyncio.run(kernel())


def test_warnings_point_at_the_persons_line_under_port_on(ip):
    run(ip, "%port on")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run(ip, "x = 1\na = np.log(np.zeros(2))")
    finally:
        run(ip, "%port off")
    (warning,) = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert warning.filename.startswith("<ipython-input-"), warning.filename
    assert warning.lineno == 2


def test_an_augmented_item_assignment_reads_the_item_before_its_value(ip):
    run(
        ip,
        "order = []\n"
        "class Logged(list):\n"
        "    def __getitem__(self, i):\n"
        "        order.append('read')\n"
        "        return list.__getitem__(self, i)\n"
        "def value():\n"
        "    order.append('value')\n"
        "    return 1\n",
    )
    expected = []
    for cell in ["x = Logged([1, 2])\nx[0] += value()", "x = np.arange(3)\nx[0] += value()"]:
        plain_order = run(ip, "order.clear()\n" + cell) and list(ip.user_ns["order"])
        run(ip, "%%port --quiet --no-replay\norder.clear()\n" + cell)
        assert ip.user_ns["order"] == plain_order, cell
        expected.append(list(ip.user_ns["x"]))
    assert expected == [[2, 2], [1, 1, 2]]
    # an item that cannot be read: the value is never evaluated, as without porter
    result = run(ip, "%%port --quiet --no-replay\norder.clear()\nx = np.arange(3)\nx[5] += value()")
    assert isinstance(result.error_in_exec, IndexError) and ip.user_ns["order"] == []


def test_numpy_reuses_temporaries_buffers_in_a_recorded_cell(ip):
    """NumPy's temporary elision (``np.sin(x) + np.cos(x)`` adds into the sine's buffer)
    needs the operand referenced once: the operator hook hands it over so."""
    body = (
        "tracemalloc.start()\n"
        "for _ in range(2):\n"
        "    y = np.sin(x) + np.cos(x)\n"
        "    z = -(y * 2.0)\n"
        "peak = tracemalloc.get_traced_memory()[1]\n"
        "tracemalloc.stop()\n"
        "del y, z\n"
    )
    run(ip, "import tracemalloc\nx = np.ones(1_000_000)")
    run(ip, "%%port --quiet --no-replay\n" + body)  # the library facts, learnt once
    run(ip, body)
    plain = ip.user_ns["peak"]
    run(ip, "%%port --quiet --no-replay\n" + body)
    assert ip.user_ns["peak"] <= plain + 100_000, (ip.user_ns["peak"], plain)
