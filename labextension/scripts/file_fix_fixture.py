"""Writes src/__tests__/fixtures/file_fix_notebook.json: a real ``%%port --fix`` run (a
real IPython shell, real workers) of two cells that call into the person's ``mymod.py``,
each cell's entry as its output carries it (`porter_ext.ui.mime.cell_bundle`), with the
module's text, so that the extension's jest specs read what porter writes.

    cd labextension && PYTHONPATH=.. ../.venv/bin/python scripts/file_fix_fixture.py
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

MODULE = '"""The person\'s module."""\ndef norm_rows(m):\n    n = m.pow(2).sum(1, keepdim=True).sqrt()\n    return m / n\n'
CELLS = [
    "import torch\nfrom mymod import norm_rows\na = torch.ones((3, 4))",
    "%%port --fix -b numpy\nb = norm_rows(a)",
    "%%port --fix -b numpy\nc = norm_rows(a * 2)",
]
OUT = Path(__file__).resolve().parents[1] / "src/__tests__/fixtures/file_fix_notebook.json"


def main() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from porter_ext.ui.mime import MIME_TYPE, cell_bundle

    folder = Path(tempfile.mkdtemp())
    (folder / "mymod.py").write_text(MODULE, encoding="utf-8")
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "porter_ext")
    cells = []
    for i, source in enumerate(CELLS):
        held = io.StringIO()
        with contextlib.redirect_stdout(held), contextlib.redirect_stderr(held):
            result = ip.run_cell(source, store_history=True)
        assert result.success, held.getvalue()
        entry = None
        if source.startswith("%%port"):
            port = ip.user_ns["_port"]
            entry = cell_bundle(port.entry)[MIME_TYPE]
        cells.append(
            {"index": i, "execution_count": result.execution_count, "id": f"c{i}", "entry": entry}
        )
    fixture = {
        "_comment": (
            "labextension/scripts/file_fix_fixture.py: a real IPython shell in a folder "
            "holding `module` as mymod.py ran these cells (%%port --fix -b numpy); each "
            "cell's porter entry as its output carries it (file_verdicts: the module's "
            "verified rewrite)"
        ),
        "notebook": "proj/fix.ipynb",
        "module": MODULE,
        "cells": cells,
    }
    OUT.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(OUT)


if __name__ == "__main__":
    main()
