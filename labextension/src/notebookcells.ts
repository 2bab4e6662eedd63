/**
 * The porter results of a whole notebook, read from its shared model (every cell's
 * outputs are there, whether or not its editor exists): what a cell's marks need to
 * show findings that another cell's run made in code this cell wrote. Read once per
 * change of any cell's outputs, not once per editor.
 */
import { ICodeCellModel } from '@jupyterlab/cells';
import { ISignal, Signal } from '@lumino/signaling';

import { ICellRef } from './positions';
import { asCellEntry, CELL_MIME, ICellEntry } from './types';

/** What porter reads of one shared cell (`@jupyter/ydoc`'s YCodeCell). */
interface ISharedCellLike {
  readonly id: string;
  readonly cell_type: string;
  readonly execution_count?: number | null;
  getOutputs?(): { data?: Record<string, unknown> }[];
}

/** One code cell of a notebook: where it is, and its latest porter result. */
export interface INotebookCell {
  ref: ICellRef;
  entry: ICellEntry | null;
}

interface INotebookLike {
  readonly cells: ISharedCellLike[];
}

const index = new WeakMap<object, INotebookCell[]>();
const changed = new Signal<object, object>({});

/** Emitted with a shared notebook whose cells' porter results may have changed. */
export const resultsChanged: ISignal<object, object> = changed;

const watched = new WeakSet<object>();

/** True for a change of the shared notebook that adds, moves or removes cells: its
 * metadata (the kernel's language_info) and state (dirty) change no position, id or
 * result, and reading the index again for them would mark every cell again. */
export function movesCells(change: unknown): boolean {
  return !!(change as { cellsChange?: unknown } | null)?.cellsChange;
}

/** The shared notebook a cell belongs to, or null (a cell on its own). Cells added,
 * moved or removed change the positions: the index is read again then too. */
export function notebookOf(model: ICodeCellModel): object | null {
  const shared = model.sharedModel as unknown as { notebook?: object | null };
  const notebook = shared.notebook ?? null;
  if (notebook && !watched.has(notebook)) {
    watched.add(notebook);
    const signal = (notebook as { changed?: ISignal<object, unknown> }).changed;
    signal?.connect((_, change) => {
      if (movesCells(change)) {
        invalidate(notebook);
      }
    });
  }
  return notebook;
}

/** A cell's outputs changed: the notebook's index is read again on next use. */
export function invalidate(notebook: object | null): void {
  if (notebook) {
    index.delete(notebook);
    changed.emit(notebook);
  }
}

function latestEntry(cell: ISharedCellLike): ICellEntry | null {
  const outputs = cell.getOutputs ? cell.getOutputs() : [];
  for (let i = outputs.length - 1; i >= 0; i--) {
    const entry = asCellEntry(outputs[i]?.data?.[CELL_MIME]);
    if (entry) {
      return entry;
    }
  }
  return null;
}

/** Every cell of the notebook with its position, execution count, id and result. */
export function notebookCells(notebook: object): INotebookCell[] {
  let cells = index.get(notebook);
  if (!cells) {
    cells = (notebook as INotebookLike).cells.map((cell, i) => ({
      ref: {
        index: i,
        executionCount:
          cell.cell_type === 'code' ? (cell.execution_count ?? null) : null,
        id: cell.id ?? null
      },
      entry: cell.cell_type === 'code' ? latestEntry(cell) : null
    }));
    index.set(notebook, cells);
  }
  return cells;
}
