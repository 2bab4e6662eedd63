"""A scope whose rewrites through ``xp`` read arrays of two libraries (NumPy arrays beside
torch tensors) gets no ``xp``: one ``xp = array_namespace(...)`` serves one library, and
replays, which move every input to one backend, never run the cell mixed, so they would
call such a rewrite verified while the person's own cell sent a tensor through NumPy's
namespace. Those sites are left as written, with that reason; a scope of one library is
ported as before."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from porter_ext.fix.rewrite import RunKnowledge, rewrite_source
from tests.fix.test_rewrite import FOO, FOO_PORTABLE
from tests.replay.isolation import run

torch = pytest.importorskip("torch")

IMPORTS = {"np": "numpy", "torch": "torch"}
CELL = "s = np.sum(a, 0)\nu = t.sum(0)\n"
#: what a run of CELL shows: np.sum returned a NumPy array, t.sum is a tensor's method
SEEN = RunKnowledge(
    results={(1, 4, "numpy.sum"): "numpy", (2, 4, "Tensor.sum"): "torch"},
    receivers={(2, 4, "Tensor.sum"): "torch"},
)


def _mixing(reason: str | None, *names: str) -> bool:
    return (
        reason is not None
        and reason.startswith("left as written")
        and "mixes numpy and torch arrays" in reason
        and all(name in reason for name in names)
    )


def test_a_cell_of_numpy_arrays_and_torch_tensors_gets_no_xp():
    result = rewrite_source(CELL, imports=IMPORTS, arrays={"a": "numpy", "t": "torch"}, run=SEEN)
    assert result.source == CELL
    assert "array_namespace" not in result.source
    assert [(s.name, s.replacement) for s in result.sites] == [
        ("numpy.sum", None),
        ("Tensor.sum", None),
    ]
    for site in result.sites:
        assert _mixing(site.reason, "(a, t)"), site.reason
        assert "one xp = array_namespace(...) serves only one library" in site.reason


def test_the_libraries_come_from_the_run_where_names_do_not_say():
    # the names are not known arrays: what the run saw at each call decides
    result = rewrite_source(CELL, imports=IMPORTS, run=SEEN)
    assert result.source == CELL
    assert all(_mixing(s.reason) for s in result.sites)
    # a name whose library nothing showed does not count as a second library
    result = rewrite_source(
        "s = np.sum(a, 0)\nu = np.sum(b, 1)\n", imports=IMPORTS, arrays={"a": "numpy"}
    )
    assert "xp = array_namespace(a)" in result.source
    assert [s.replacement for s in result.sites] == ["xp.sum(a, axis=0)", "xp.sum(b, axis=1)"]


@pytest.mark.parametrize(
    ("cell", "arrays", "expected"),
    [
        (
            "s = np.sum(a, 0)\nu = b.sum(0)\n",
            {"a": "numpy", "b": "numpy"},
            "xp = array_namespace(a)\ns = xp.sum(a, axis=0)\nu = xp.sum(b, axis=0)\n",
        ),
        (
            "s = torch.sum(t, 0)\nu = w.sum(0)\n",
            {"t": "torch", "w": "torch"},
            "xp = array_namespace(t)\ns = xp.sum(t, axis=0)\nu = xp.sum(w, axis=0)\n",
        ),
    ],
)
def test_a_cell_of_one_library_is_ported_as_before(cell, arrays, expected):
    result = rewrite_source(cell, imports=IMPORTS, arrays=arrays)
    assert result.source == "from array_api_compat import array_namespace\n\n" + expected
    assert all(s.replacement is not None and s.reason is None for s in result.sites)


def test_only_the_sites_through_xp_are_left_and_no_other_site_appears():
    # a write into an array goes through xpx.at, which needs no xp: it stays ported;
    # torch.abs(f()) has no array to take xp from (t is bound after it), so it is no
    # site, before the sites through xp are left as written and after
    cell = "a[0, 0] = 5.0\nt = g()\ny = torch.abs(f())\ns = np.sum(a, 0)\nu = t.sum(0)\n"
    seen = RunKnowledge(results={(3, 14, "f"): "torch"}, receivers={(5, 4, "Tensor.sum"): "torch"})
    result = rewrite_source(cell, imports=IMPORTS, arrays={"a": "numpy", "t": "torch"}, run=seen)
    assert result.source == "import array_api_extra as xpx\n\n" + cell.replace(
        "a[0, 0] = 5.0", "a = xpx.at(a)[0, 0].set(5.0)"
    )
    assert [(s.name, s.replacement) for s in result.sites] == [
        ("__setitem__", "a = xpx.at(a)[0, 0].set(5.0)"),
        ("numpy.sum", None),
        ("Tensor.sum", None),
    ]
    assert all(_mixing(s.reason, "(a, t)") for s in result.sites[1:])
    # narrowed to the sites that verified (`FixRun._propose`), the others still say why
    narrowed = rewrite_source(
        cell,
        imports=IMPORTS,
        arrays={"a": "numpy", "t": "torch"},
        run=seen,
        only={(1, 0, "__setitem__")},
    )
    assert narrowed.source == result.source
    sums = [s for s in narrowed.sites if s.name.endswith(".sum")]
    assert sums == result.sites[1:]


def test_a_function_that_mixes_is_left_as_written_and_the_cell_around_it_ported():
    cell = textwrap.dedent(
        """\
        def f(x, y):
            return x.sum(0), y.sum(0)

        p, q = f(a, t)
        r = b.sum(1)
        """
    )
    seen = RunKnowledge(
        receivers={(2, 11, "ndarray.sum"): "numpy", (2, 21, "Tensor.sum"): "torch"},
    )
    result = rewrite_source(
        cell, imports=IMPORTS, arrays={"a": "numpy", "t": "torch", "b": "numpy"}, run=seen
    )
    assert result.source == (
        "from array_api_compat import array_namespace\n\n"
        + cell.replace("r = b.sum(1)", "xp = array_namespace(b)\nr = xp.sum(b, axis=1)")
    )
    inner = [s for s in result.sites if s.line == 2]
    assert [s.replacement for s in inner] == [None, None]
    assert all(_mixing(s.reason, "f mixes", "(x, y)") for s in inner), inner


def test_a_function_s_own_names_are_not_the_cell_s_arrays():
    # an earlier cell's NumPy ``r`` is not foo's local r, nor the cell's x foo's parameter
    result = rewrite_source(FOO, imports=IMPORTS, arrays={"x": "torch", "r": "numpy"})
    assert result.source == FOO_PORTABLE


def test_a_cell_that_binds_xp_itself_and_mixes_is_left_as_written():
    cell = (
        "from array_api_compat import array_namespace\n"
        "xp = array_namespace(a)\ns = np.sum(a, 0)\nu = t.sum(0)\n"
    )
    result = rewrite_source(cell, imports=IMPORTS, arrays={"a": "numpy", "t": "torch"})
    assert result.source == cell
    assert all(_mixing(s.reason, "(a, t)") for s in result.sites)


def test_fix_in_the_session_does_not_verify_a_mixed_cell(port_shell):
    """End to end: the replays move ``a`` and ``t`` to one library, where one xp serves
    both; in the person's session the two are NumPy and torch, and must stay as written."""
    setup = "import numpy as np\nimport torch\na = np.ones((2, 3))\nt = torch.ones(2, 3)\n"
    assert run(port_shell, setup).success
    result = run(port_shell, "%%port -b numpy --fix --quiet\ns = np.sum(a, 0)\nu = t.sum(0)\n")
    assert result.success, result.output
    rewrite = port_shell.user_ns["_port"].entry.rewrite
    assert rewrite.status == "refused", rewrite
    # the cell's reason is its sites' one reason, not "no call here has a rewrite"
    assert _mixing(rewrite.reason, "(a, t)"), rewrite.reason
    assert "xp = array_namespace" not in rewrite.source
    assert "xp.sum(t" not in rewrite.source
    assert [s.applied for s in rewrite.sites] == [False, False]
    assert all(_mixing(s.reason, "(a, t)") for s in rewrite.sites), rewrite.sites
    # the person's cell ran as written
    assert isinstance(port_shell.user_ns["u"], torch.Tensor)
    np.testing.assert_array_equal(port_shell.user_ns["s"], np.full(3, 2.0))


def test_fix_in_the_session_ports_what_needs_no_xp_and_says_why_the_rest_stays(port_shell):
    setup = "import numpy as np\nimport torch\na = np.ones((2, 3))\nt = torch.ones(2, 3)\n"
    assert run(port_shell, setup).success
    body = "a[0, 0] = 5.0\ns = np.sum(a, 0)\nu = t.sum(0)\n"
    result = run(port_shell, f"%%port -b numpy --fix --quiet\n{body}")
    assert result.success, result.output
    rewrite = port_shell.user_ns["_port"].entry.rewrite
    assert rewrite.status == "partial", rewrite.reason
    assert rewrite.source == "import array_api_extra as xpx\n\n" + body.replace(
        "a[0, 0] = 5.0", "a = xpx.at(a)[0, 0].set(5.0)"
    )
    assert [s.applied for s in rewrite.sites] == [True, False, False]
    assert all(_mixing(s.reason, "(a, t)") for s in rewrite.sites[1:]), rewrite.sites
