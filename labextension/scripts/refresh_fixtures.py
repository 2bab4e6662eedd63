"""Re-derives the model's derived fields of the recorded fixtures (module_notebook.json,
devices_notebook.json, file_fix_notebook.json): the calls, device findings, replays and
rewrites are what real porter runs recorded; the fields porter's model derives from them
(``diagnostics``, ``headline``, ``plan``, ``label``, verdicts, severities, the words of
rewrites and file verdicts) are written again by today's model, so that the extension's
jest specs read what porter writes now. A cell's ``first_line`` is 2 where its notebook
source starts with its ``%%port`` line (the file-fix run recorded its own).

    cd labextension && PYTHONPATH=.. ../.venv/bin/python scripts/refresh_fixtures.py
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
FIXTURES = HERE / "src/__tests__/fixtures"
NOTEBOOKS = HERE.parent / "notebooks"
DERIVED = ("headline", "plan", "diagnostics", "label", "source_states", "first_line")


def first_line(source: str | None) -> int:
    return 2 if source is not None and source.lstrip().startswith("%%port") else 1


def refreshed(entry: dict, source: str | None, firsts: dict[int, int]) -> dict:
    """The entry with its derived fields written again; ``firsts``: execution count →
    first line of the notebook's cells (where a call's code was written)."""
    from porter_ext.report.codec import cell_from_dict, cell_to_dict

    recorded = {k: v for k, v in entry.items() if k not in DERIVED}
    for call in [
        *recorded.get("calls", []),
        *(c for r in recorded.get("replays", []) for c in r.get("calls") or []),
    ]:
        origin = call.get("origin")
        if origin and not origin.get("file"):
            origin["first_line"] = firsts.get(origin.get("execution_count"), 1)
    return cell_to_dict(replace(cell_from_dict(recorded), first_line=first_line(source)))


def main() -> None:
    from porter_ext.model.headline import sum_text
    from porter_ext.report.codec import cell_from_dict

    module_sources = [
        "".join(c["source"])
        for c in json.loads((NOTEBOOKS / "03_port_a_module.ipynb").read_text())["cells"]
    ]
    for name, sources in (("module_notebook", module_sources), ("devices_notebook", None)):
        path = FIXTURES / f"{name}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        note = "; the model's derived fields refreshed by scripts/refresh_fixtures.py"
        if not data["_comment"].endswith(note):
            data["_comment"] += note
        def source_of(cell: dict) -> str | None:
            return cell.get("source") if sources is None else sources[cell["index"]]

        firsts = {
            c["execution_count"]: first_line(source_of(c))
            for c in data["cells"]
            if c.get("execution_count") is not None
        }
        for cell in data["cells"]:
            if cell.get("entry"):
                cell["entry"] = refreshed(cell["entry"], source_of(cell), firsts)
        if data.get("replayed"):
            data["replayed"] = refreshed(data["replayed"], "%%port -b numpy\n", firsts)
        # what the Porting panel's head says of these cells, in Python's words
        data["panel_counts"] = sum_text(
            [cell_from_dict(c["entry"]).headline for c in data["cells"] if c.get("entry")]
        )
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print("refreshed", path)
    refresh_file_fix()


def refresh_file_fix() -> None:
    """file_fix_notebook.json (scripts/file_fix_fixture.py): each entry read and written
    again, so its derived fields are today's."""
    from porter_ext.report.codec import cell_from_dict, cell_to_dict

    path = FIXTURES / "file_fix_notebook.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for cell in data["cells"]:
        if cell.get("entry"):
            cell["entry"] = json.loads(json.dumps(cell_to_dict(cell_from_dict(cell["entry"]))))
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("refreshed", path)


if __name__ == "__main__":
    main()
