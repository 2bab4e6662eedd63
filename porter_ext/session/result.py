"""A cell's result as the person sees it (``_port``), and the environment of a report."""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from typing import Any

from porter_ext.model.cells import CellEntry
from porter_ext.model.environment import BackendEntry
from porter_ext.model.report import Environment


class PortResult:
    """A cell's result, bound to ``_port``: tables as DataFrames, JSON as in the report."""

    def __init__(self, entry: CellEntry, warnings: list[str] | None = None):
        self.entry = entry
        self.warnings = list(warnings or [])

    @property
    def calls(self):
        from porter_ext.report.tables import calls_frame

        return calls_frame(self.entry)

    @property
    def numerics(self):
        from porter_ext.report.tables import numerics_frame

        return numerics_frame(self.entry)

    @property
    def devices(self):
        from porter_ext.report.tables import devices_frame

        return devices_frame(self.entry)

    @property
    def rewrite(self) -> str | None:
        """The rewritten source of the cell (``--fix``) when replays verified it, in whole
        or narrowed to the sites that verify; None otherwise (see ``entry.rewrite``)."""
        rewrite = self.entry.rewrite
        return None if rewrite is None or rewrite.status == "refused" else rewrite.source

    def apply(self, line: str = "%%port") -> bool:
        """Replace the cell's source with the rewrite, below ``line``, in a live front end
        (IPython's ``set_next_input(..., replace=True)``); False when there is none."""
        from IPython import get_ipython

        shell = get_ipython()
        if self.rewrite is None or shell is None:
            return False
        shell.set_next_input(f"{line}\n{self.rewrite}", replace=True)
        return True

    def to_dict(self) -> dict[str, Any]:
        """The cell entry of the report (CONTRACT.md), as JSON data."""
        from porter_ext.report.codec import cell_to_dict

        return cell_to_dict(self.entry)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        # one plain bundle: porter's JSON (drawn by porter's JupyterLab extension, live
        # and after a reload alike), text/html from the one cell template, text/plain
        from porter_ext.ui.mime import cell_bundle

        return cell_bundle(self.entry)

    def __repr__(self) -> str:
        from porter_ext.ui.mime import cell_text

        return cell_text(self.entry)


class UnrecordedResult(PortResult):
    """A ``%%port`` cell that ran without recording (see `porter_ext.session.turns`): its
    one warning says why; its entry holds no calls and is in no report."""

    def __init__(self, entry: CellEntry, reason: str):
        super().__init__(entry, [reason])
        self.reason = reason

    def _ipython_display_(self) -> None:
        """Nothing to show but the warning, which the magic prints."""

    def __repr__(self) -> str:
        return self.reason


def environment(elsewhere: Mapping[str, list[BackendEntry]] | None = None) -> Environment:
    """Python and every backend porter can see (unavailable ones with their reasons);
    ``elsewhere``: the libraries this process has not imported, as another process saw
    them (`porter_ext.backends.list_backends`)."""
    from porter_ext.backends import list_backends

    return Environment(python=platform.python_version(), backends=list_backends(elsewhere))
