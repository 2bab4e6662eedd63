"""A notebook file as porter reads it: its JSON, and each cell checked before anything runs.

``porter run``, ``porter fix`` and ``porter lint`` read notebooks through here, so that a
malformed one (a cell whose ``source`` is a number or null, a cell without ``cell_type``,
JSON nested past what the parser can follow) is refused by each alike, with one line
that names the cell, before a kernel starts; nbformat's own checks would say "sequence
item 0" or let the cell fail later, inside porter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["NotebookError", "check_cells", "load_json", "shown_name"]


class NotebookError(ValueError):
    """A file that is not a notebook porter can read; the message is one line."""


def _invalid(path: Path | str, why: str) -> NotebookError:
    return NotebookError(f"cannot read {path}: not a valid notebook ({why})")


def load_json(text: str, path: Path | str) -> Any:
    """The file's JSON; a `NotebookError` for text that is none, or nests too deeply."""
    try:
        return json.loads(text)
    except RecursionError:
        return _raise(_invalid(path, "its JSON is nested too deeply to read"))
    except ValueError as exc:
        return _raise(_invalid(path, f"not JSON: {' '.join(str(exc).split())[:160]}"))


def _raise(error: NotebookError) -> Any:
    raise error from None


def _kind(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        odd = [v for v in value if not isinstance(v, str)][:1]
        return f"a list holding {_kind(odd[0])}" if odd else "a list"
    return "an object"


def _problem(data: Any) -> str | None:
    """What makes ``data`` (a notebook's JSON) unreadable, naming the cell; None: nothing."""
    if not isinstance(data, dict):
        return f"not a notebook: the file holds {_kind(data)}, not an object with `cells`"
    version = data.get("nbformat")
    if isinstance(version, int) and version < 4:
        return None  # cells live in worksheets; nbformat converts and checks them
    if "cells" not in data:
        return "it has no `cells` list"
    cells = data["cells"]
    if not isinstance(cells, list):
        return f"`cells` is {_kind(cells)}, not a list of cells"
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            return f"cell {number} is {_kind(cell)}, not an object with `cell_type` and `source`"
        if not isinstance(cell.get("cell_type"), str):
            what = "has no" if "cell_type" not in cell else "has a malformed"
            return f"cell {number} {what} `cell_type` (code, markdown or raw)"
        if "source" not in cell:
            return f"cell {number} has no `source`"
        source = cell["source"]
        if not isinstance(source, str) and _kind(source) != "a list":
            return (
                f"cell {number}'s `source` is {_kind(source)}; a cell's source is text "
                "(a string or a list of strings)"
            )
    return None


def check_cells(data: Any, path: Path | str) -> None:
    """Refuse ``data``, the JSON of the notebook at ``path``, when a cell is malformed:
    one `NotebookError` naming the cell (1-based, as JupyterLab counts)."""
    problem = _problem(data)
    if problem is not None:
        raise _invalid(path, problem)


def shown_name(path: Path) -> str:
    """The file's name as text: a byte that is not UTF-8 (kept by Python as a lone
    surrogate, which no UTF-8 file or terminal takes) is written as its escape."""
    try:
        raw = path.name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte stands for
        return path.name.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")
