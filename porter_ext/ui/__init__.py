"""The show stage: MIME bundles for a cell and a report.

A ``%%port`` cell's output is one plain MIME bundle (`cell_bundle`): text, the one HTML
template of a cell, and the cell's JSON, which porter's JupyterLab extension draws live
and after a reload alike. Importing this package is cheap: jinja2, matplotlib and
pandas load only when HTML is rendered, a plot drawn or a table made.
"""

from __future__ import annotations

from porter_ext.ui.mime import MIME_TYPE, cell_bundle, cell_html, cell_text, verdict
from porter_ext.ui.report import report_bundle, report_text

__all__ = [
    "MIME_TYPE",
    "cell_bundle",
    "cell_html",
    "cell_text",
    "report_bundle",
    "report_text",
    "verdict",
]
