"""A ``%%port`` cell is parsed once in the kernel: the replay's analysis and the
recorder's rewrite read one syntax tree (`record.syntax.CellSyntax`), and a cell run
again is not parsed at all (issue 17 item 4: a first ``%%port -b numpy,jax`` run parsed
the cell 5-6 times)."""

from __future__ import annotations

import ast
import builtins

import pytest

pytest.importorskip("jax")

BODY = (
    "xp = array_namespace(x)\n"
    "def scaled_by_marker(v):\n"
    "    return v * 2\n"
    "y_parse_marker = xp.sum(scaled_by_marker(x), axis=0)\n"
)


@pytest.fixture
def parses(monkeypatch):
    """The syntax trees made of the cell's body (IPython's own parse of the line that
    calls the %%port magic is not one)."""
    made: list[str] = []
    real = builtins.compile

    def compile_(source, filename, mode, flags=0, *args, **kwargs):
        if (
            flags & ast.PyCF_ONLY_AST
            and isinstance(source, str)
            and "y_parse_marker" in source
            and "run_cell_magic" not in source
        ):
            made.append(filename)
        return real(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", compile_)
    return made


def test_a_port_cell_is_parsed_once_and_a_cell_run_again_not_at_all(port_shell, parses):
    port_shell.run_cell(
        "import numpy as np\nfrom array_api_compat import array_namespace\n"
        "x = np.linspace(-1, 1, 12).reshape(3, 4)\n"
    )
    result = port_shell.run_cell(f"%%port -b numpy,jax --quiet\n{BODY}")
    assert result.success
    replays = {r.backend: r.status for r in port_shell.user_ns["_port"].entry.replays}
    assert replays == {"numpy": "ok", "jax": "ok"}
    assert port_shell.user_ns["y_parse_marker"].shape == (4,)
    assert len(parses) == 1, parses
    port_shell.run_cell(f"%%port -b numpy,jax --quiet\n{BODY}")
    assert len(parses) == 1, parses  # the analysis and the rewrite are kept
