/**
 * The fixture of a real `%%port --fix -b numpy` run over the person's mymod.py
 * (scripts/file_fix_fixture.py): cells 1 and 2 call `norm_rows` of mymod.py (`module`,
 * its text when porter recorded it), and each verified the module's rewrite.
 */
import { INotebookCell } from '../notebookcells';
import { ICellEntry } from '../types';
import fixture from './fixtures/file_fix_notebook.json';

export const run = fixture as unknown as {
  notebook: string;
  module: string;
  cells: {
    index: number;
    execution_count: number | null;
    id: string;
    entry: ICellEntry | null;
  }[];
};

/** The notebook's cells, each entry a copy, changed by `edit` where a test wants. */
export function runCells(
  edit: (entry: ICellEntry, index: number) => ICellEntry = e => e
): INotebookCell[] {
  return run.cells.map(c => ({
    ref: { index: c.index, executionCount: c.execution_count, id: c.id },
    entry: c.entry ? edit(structuredClone(c.entry), c.index) : null
  }));
}
