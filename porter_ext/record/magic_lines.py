"""IPython's one-line magics and shell commands in a cell's source, masked so that the
source parses as Python for a rewrite, and put back afterwards."""

from __future__ import annotations

from collections.abc import Mapping

_MAGIC_MARK = "pass  # porter: IPython line {}"


def mask_magics(source: str) -> tuple[str, dict[str, str]]:
    """The cell with each one-line magic and shell command (``%load_ext x``, ``!ls``)
    replaced by a ``pass`` placeholder at its indentation, and the lines to put back."""
    out, lines = [], {}
    for number, line in enumerate(source.split("\n")):
        body = line.lstrip()
        if body.startswith(("%", "!")) and not body.startswith("%%"):
            mark = _MAGIC_MARK.format(number)
            lines[mark] = body
            line = line[: len(line) - len(body)] + mark
        out.append(line)
    return "\n".join(out), lines


def unmask(source: str, lines: Mapping[str, str]) -> str:
    out = []
    for line in source.split("\n"):
        body = line.lstrip()
        out.append(line[: len(line) - len(body)] + lines[body] if body in lines else line)
    return "\n".join(out)
