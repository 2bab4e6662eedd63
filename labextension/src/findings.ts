/**
 * What the editor marks show, as data: the findings of a notebook's porter results
 * placed where their code is written — in a cell (its own, or the cell whose code
 * another cell's run called), or in a Python file of the person's (`origin.file`,
 * relative to the notebook's folder). Pure functions over the report's JSON, so that
 * jest tests them; `marks.ts` turns them into CodeMirror diagnostics.
 */
import { INotebookCell } from './notebookcells';
import { IMarkPlace, originCell, Severity } from './positions';
import { ICallOrigin, ICellEntry, IErrorInfo, IRow } from './types';

/** One finding to mark: where, how severe, and what the hover says. */
export interface IFinding {
  place: IMarkPlace;
  /** The row's kind: a call's status, `device`, `replay_failure`, ... (what the
   * settings choose by). */
  status: string;
  name: string;
  kind: string | undefined;
  severity: Severity;
  device: boolean;
  message: string;
}

/** The file an origin names (relative to the notebook's folder), or null: a cell. */
export function originFile(
  origin: ICallOrigin | null | undefined
): string | null {
  return typeof origin?.file === 'string' && origin.file ? origin.file : null;
}

/** The file (relative to the notebook's folder) an exception was raised in, or null. */
export function errorFile(error: IErrorInfo | null | undefined): string | null {
  return typeof error?.file === 'string' && error.file ? error.file : null;
}

/**
 * The server path of `file` (relative to the folder of the notebook at `notebook`, a
 * server path): what JupyterLab's document manager opens and its editors are named by.
 * `.` and `..` are resolved; a path that climbs above the server root stays as written.
 */
export function resolveFile(notebook: string, file: string): string {
  const parts = notebook.split('/').slice(0, -1);
  for (const part of file.split('/')) {
    if (part === '..') {
      if (!parts.length) {
        return file;
      }
      parts.pop();
    } else if (part && part !== '.') {
      parts.push(part);
    }
  }
  return parts.join('/');
}

/** The rows of an entry (porter's `diagnostics`: an entry written before them has none). */
export function rowsOf(entry: ICellEntry | null | undefined): IRow[] {
  return entry?.diagnostics ?? [];
}

/** Rows about an exception: marked on their whole line. */
const WHOLE_LINE = new Set(['replay_failure', 'cell_error']);

/** A row as a mark: where (in the recorded source of the cell, or in the file), how
 * severe and what the hover says, all as porter's model wrote them. */
export function rowFinding(row: IRow, origin: ICallOrigin | null): IFinding {
  const line = row.source_line ?? row.line ?? 1;
  // the end, as the row's own lines count, moved to the recorded source's
  const shift = (row.line ?? line) - line;
  const whole = WHOLE_LINE.has(row.kind);
  return {
    place: {
      origin,
      line,
      col: row.col ?? 0,
      endLine: whole
        ? line + 1
        : row.end_line === null || row.end_line === undefined
          ? null
          : row.end_line - shift,
      endCol: row.end_col ?? null
    },
    status: row.kind,
    name: whole ? '' : row.name,
    kind: row.call_kind ?? row.kind,
    severity: row.severity,
    device: row.kind === 'device_specific' || row.kind === 'device',
    message: row.hover ?? row.message
  };
}

/**
 * The findings to mark in the cell `here` (its position in `cells`): the rows of its
 * own result shown in it (a row whose code is in a cell the notebook no longer has is
 * marked where this cell called into it), and the rows of other cells' results shown
 * in code it wrote. Rows shown in a file are the file's (`fileFindings`).
 */
export function findingsIn(
  here: number,
  cells: INotebookCell[],
  own: ICellEntry | null
): IFinding[] {
  const refs = cells.map(c => c.ref);
  const out: IFinding[] = [];
  for (const row of rowsOf(own)) {
    const origin = row.origin ?? null;
    if (row.file && WHOLE_LINE.has(row.kind) && row.calling_line) {
      // raised in a file: the cell still shows the line that called into it
      const f = rowFinding(row, null);
      const line = row.calling_line;
      f.place = { origin: null, line, col: 0, endLine: line + 1, endCol: null };
      out.push(f);
      continue;
    }
    if (row.file || row.line === null || row.line === undefined) {
      continue; // in a file, or about no line (an output)
    }
    if (!origin) {
      out.push(rowFinding(row, null));
    } else if (originCell(origin, refs) === -1) {
      // written in a cell not in this notebook: where this cell called into it
      const f = rowFinding(row, null);
      const line = row.calling_line ?? f.place.line;
      f.place = { origin: null, line, col: 0, endLine: null, endCol: null };
      out.push(f);
    }
  }
  cells.forEach((cell, i) => {
    if (i === here || !cell.entry) {
      return;
    }
    for (const row of rowsOf(cell.entry)) {
      const origin = row.origin ?? null;
      if (origin && !originFile(origin) && originCell(origin, refs) === here) {
        out.push(rowFinding(row, origin));
      }
    }
  });
  return out;
}

/** An open notebook, as the marks of a file read it: its server path and its cells. */
export interface INotebookResults {
  path: string;
  cells: INotebookCell[];
}

/**
 * The findings to mark in the file at server path `path`: every call, device finding
 * and failed replay of the notebooks' results written there, each naming the cell that
 * called into the file (and, with several notebooks open, the notebook).
 */
export function fileFindings(
  path: string,
  notebooks: INotebookResults[]
): IFinding[] {
  const out: IFinding[] = [];
  for (const notebook of notebooks) {
    const name = notebook.path.slice(notebook.path.lastIndexOf('/') + 1);
    for (const cell of notebook.cells) {
      for (const row of rowsOf(cell.entry)) {
        if (row.file && resolveFile(notebook.path, row.file) === path) {
          const f = rowFinding(row, row.origin ?? null);
          if (notebooks.length > 1) {
            f.message += ` (${name})`; // several notebooks open: which one called
          }
          out.push(f);
        }
      }
    }
  }
  return out;
}
