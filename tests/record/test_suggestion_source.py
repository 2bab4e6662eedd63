"""A finding's suggestion is written with the person's expressions, never the run's values
(issue 19: `turn3/notebooks/suggestion_literals_and_triu_k.py`, LLMs-from-scratch ch03 and
the Python Data Science Handbook's 02.03). In a real IPython shell."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")


def suggestions(shell, cell: str) -> dict[str, str | None]:
    shell.run_cell(f"%%port --no-replay --quiet\n{cell}")
    entry = json.loads(shell.user_ns["_port"].to_json())
    return {c["name"]: c["suggestion"] for c in entry["calls"] if c["status"] != "standard"}


def test_shapes_and_receivers_are_the_persons_expressions(port_shell):
    port_shell.run_cell(
        "import torch\ncontext_length = 6\nb, num_tokens, num_heads, head_dim = 2, 6, 2, 1\n"
        "keys = torch.ones(b, num_tokens, num_heads * head_dim)\n"
    )
    found = suggestions(
        port_shell,
        "m = torch.ones(context_length, context_length)\n"
        "k4 = keys.view(b, num_tokens, num_heads, head_dim)\n"
        "mask = torch.triu(m, diagonal=1)\n",
    )
    assert found["torch.ones"] == "xp.ones((context_length, context_length))"
    assert found["Tensor.view"] == "xp.reshape(keys, (b, num_tokens, num_heads, head_dim))"
    assert found["torch.triu"] == "xp.triu(m, k=1)"


def test_a_list_where_an_array_goes_is_made_an_array_of_the_kind_the_function_takes(port_shell):
    port_shell.run_cell("import numpy as np\n")
    found = suggestions(port_shell, "v = np.exp([1, 2, 3])\n")
    assert found["numpy.exp"] == "xp.exp(xp.asarray([1, 2, 3], dtype=xp.float64))"
    import array_api_strict as xs

    # following it works where the standard is all there is
    xs.exp(xs.asarray([1, 2, 3], dtype=xs.float64))


def test_a_call_in_a_loop_keeps_one_suggestion(port_shell):
    port_shell.run_cell("import torch\nsizes = [2, 3, 4]\n")
    found = suggestions(port_shell, "for n in sizes:\n    m = torch.zeros(n, n)\n")
    assert found["torch.zeros"] == "xp.zeros((n, n))"
