"""Shared fixtures for worker tests: one IPython shell with porter, and the check that a
``%%port`` cell leaves the person's namespace exactly as a plain run of the same cells."""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

os.environ.setdefault("JAX_PLATFORMS", "cpu")

_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "_port", "_", "__", "___"}


def shell() -> InteractiveShell:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "porter_ext")
    return ip


def run(ip: InteractiveShell, source: str) -> Any:
    """A cell, its printed output held back (kept on the result as ``.output``)."""
    held = io.StringIO()
    with contextlib.redirect_stdout(held), contextlib.redirect_stderr(held):
        result = ip.run_cell(source, store_history=True)
    result.output = held.getvalue()
    return result


def _names(ip: InteractiveShell) -> dict[str, Any]:
    hidden = set(ip.user_ns_hidden)
    return {
        k: v
        for k, v in ip.user_ns.items()
        if k not in hidden and k not in _IPYTHON_NAMES and not k.startswith("_")
    }


def observe(ip: InteractiveShell, probe: str) -> Any:
    """What ``probe`` (an expression over the person's names) gives now."""
    run(ip, f"__porter_probe__ = ({probe})")
    return ip.user_ns.pop("__porter_probe__")


def same_as_plain(
    ip: InteractiveShell,
    setup: str,
    cell: str,
    options: str,
    probe: str,
    assigned: tuple[str, ...] = (),
) -> Any:
    """Run ``setup`` then ``cell`` plainly, then again with ``%%port options``: the same
    names, the same identities for names the cell does not assign, the same ``probe``
    (values and next random draws). Returns the ``%%port`` cell's `_port`."""
    ip.reset(new_session=False)
    run(ip, setup)
    plain_result = run(ip, cell)
    plain_names = set(_names(ip))
    plain_probe = observe(ip, probe)

    ip.reset(new_session=False)
    run(ip, setup)
    before = {k: id(v) for k, v in _names(ip).items()}
    port_result = run(ip, f"%%port {options}\n{cell}")
    port = ip.user_ns.get("_port")
    after = _names(ip)
    assert set(after) == plain_names, (set(after) ^ plain_names, port_result.output)
    for name, ident in before.items():
        if name not in assigned:
            assert id(after[name]) == ident, f"{name} was rebound by the %%port cell"
    assert observe(ip, probe) == plain_probe, port_result.output
    assert (plain_result.error_in_exec is None) == (port_result.error_in_exec is None)
    return port


def replays(port: Any, role: str = "target") -> dict[str, Any]:
    return {r.backend: r for r in port.entry.replays if r.role == role}
