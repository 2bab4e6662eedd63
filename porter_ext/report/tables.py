"""The report's cell entries as pandas tables: what ``_port.calls``, ``.numerics`` and
``.devices`` return. Columns are the keys of the matching report entries (CONTRACT.md),
with ``backend`` in front for the per-replay tables."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING

from porter_ext.model.calls import CallRecord

if TYPE_CHECKING:
    import pandas as pd

    from porter_ext.model.cells import CellEntry

CALL_COLUMNS = [f.name for f in fields(CallRecord) if f.name != "origin_cell"]  # (internal)
NUMERIC_COLUMNS = [
    "backend",
    "name",
    "shape",
    "dtype",
    "max_abs_err",
    "max_rel_err",
    "reference_err",
    "original_reference_err",
    "mismatched",
    "nan_mismatch",
    "within_tolerance",
    "difference",
    "deterministic",
    "rtol",
    "atol",
    "conversion",
    "note",
]
DEVICE_COLUMNS = ["backend", "name", "device", "expected_device", "device_ok", "conversion"]


def calls_frame(entry: CellEntry) -> pd.DataFrame:
    import pandas as pd

    rows = [{c: getattr(call, c) for c in CALL_COLUMNS} for call in entry.calls]
    return pd.DataFrame(rows, columns=CALL_COLUMNS)


def _output_rows(entry: CellEntry, columns: list[str]) -> list[dict]:
    rows = []
    for replay in entry.replays:
        if replay.role != "target":
            continue  # the control's verdict is each target row's ``deterministic``
        for out in replay.outputs:
            row = {c: getattr(out, c, None) for c in columns if c != "backend"}
            rows.append({"backend": replay.backend, **row})
    return rows


def numerics_frame(entry: CellEntry) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(_output_rows(entry, NUMERIC_COLUMNS), columns=NUMERIC_COLUMNS)


def devices_frame(entry: CellEntry) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(_output_rows(entry, DEVICE_COLUMNS), columns=DEVICE_COLUMNS)
