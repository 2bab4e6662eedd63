"""The suggestions of ../shared/repro/nb_08_wrong_suggestions.py, as %%port records them:
none of them may change the meaning of the call it replaces."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

SOURCE = """x = np.array([3.0, 1.0, 2.0])
x.sort()
r = x.round(1)
u = np.unique(np.ones((3, 2)), axis=0)
d = np.diag(x, k=-1)
t = torch.arange(6.0).reshape(2, 3)
m = t.max(dim=1)
i = torch.tensor([4]).item()
f = torch.tensor([4.5]).item()"""


@pytest.fixture(scope="module")
def suggestions() -> dict[tuple[int, str], str]:
    pytest.importorskip("torch")
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "porter_ext")
    shell.run_cell("import numpy as np, torch")
    shell.run_cell("%%port --quiet --no-replay\n" + SOURCE)
    calls = shell.user_ns["_port"].calls
    return {(r.line, r["name"]): r.suggestion for _, r in calls.iterrows()}


def test_in_place_sort_writes_into_the_array(suggestions):
    """Sorted in place, as NumPy's method does: rebinding ``x`` would leave its views unsorted."""
    assert suggestions[(2, "ndarray.sort")] == "x[...] = xp.sort(x)"


def test_round_keeps_its_decimals(suggestions):
    assert suggestions[(3, "ndarray.round")] == "xp.round(x * 10.0**1) / 10.0**1"


def test_unique_along_an_axis_is_not_unique_values(suggestions):
    suggestion = suggestions[(4, "numpy.unique")]
    assert "unique_values" not in suggestion and "axis=0" in suggestion


def test_diag_keeps_its_offset(suggestions):
    assert suggestions[(5, "numpy.diag")].count("offset=-1") == 2


def test_max_with_dim_gives_values_and_indices(suggestions):
    assert suggestions[(7, "Tensor.max")] == "(xp.max(t, axis=1), xp.argmax(t, axis=1))"


def test_item_follows_the_dtype(suggestions):
    assert suggestions[(8, "Tensor.item")] == "int(torch.tensor([4]))"
    assert suggestions[(9, "Tensor.item")] == "float(torch.tensor([4.5]))"
