/**
 * What the editor marks show, as data: the findings of a notebook's porter results
 * placed where their code is written — in a cell (its own, or the cell whose code
 * another cell's run called), or in a Python file of the person's (`origin.file`,
 * relative to the notebook's folder). Pure functions over the report's JSON, so that
 * jest tests them; `marks.ts` turns them into CodeMirror diagnostics.
 */
import { INotebookCell } from './notebookcells';
import {
  callPlace,
  cellLabel,
  findingPlace,
  IMarkPlace,
  originCell,
  Severity,
  severityOf
} from './positions';
import {
  ICall,
  ICallOrigin,
  ICellEntry,
  IDeviceFinding,
  IErrorInfo,
  IReplay,
  isFinding
} from './types';

/** One finding to mark: where, how severe, and what the hover says. */
export interface IFinding {
  place: IMarkPlace;
  /** The call's status, `device` or `replay_failure` (what the settings choose by). */
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

export function callFinding(call: ICall, calledFrom: string | null): IFinding {
  const use = call.suggestion ? `; use instead: ${call.suggestion}` : '';
  const why = call.message ? `\n${call.message}` : '';
  const from = calledFrom ? `\ncalled from ${calledFrom}` : '';
  return {
    place: callPlace(call),
    status: call.status,
    name: call.name,
    kind: call.kind,
    severity: severityOf(call.status),
    device: call.status === 'device_specific',
    message: `${call.name} [${call.status}]${use}${why}${from}`
  };
}

export function deviceFinding(
  finding: IDeviceFinding,
  place: IMarkPlace,
  calledFrom: string | null
): IFinding {
  const on = finding.backend ? ` on ${finding.backend}` : '';
  const from = calledFrom ? `\ncalled from ${calledFrom}` : '';
  return {
    place,
    status: 'device',
    name: finding.name,
    kind: 'device',
    severity: severityOf('device'),
    device: true,
    message: `${finding.name} [${finding.kind}${on}] ${finding.message ?? ''}${from}`
  };
}

/** A failed replay's mark on line `line` (of the cell, or of the file it failed in). */
function replayFinding(
  replay: IReplay,
  line: number,
  calledFrom: string | null
): IFinding {
  const from = calledFrom ? `\ncalled from ${calledFrom}` : '';
  return {
    place: { origin: null, line, col: 0, endLine: line + 1, endCol: null },
    status: 'replay_failure',
    name: '',
    kind: undefined,
    severity: severityOf('replay_failure'),
    device: false,
    message: `replay on ${replay.backend}: ${replay.status} ${replay.error?.type ?? ''}: ${replay.error?.message ?? ''}${from}`
  };
}

function failed(replay: IReplay): boolean {
  return replay.status === 'error' || replay.status === 'timeout';
}

/**
 * The findings to mark in the cell `here` (its position in `cells`): those of its own
 * result written in it (or written in a cell the notebook no longer has), and those
 * other cells' runs made in code it wrote. Findings written in a file are the file's
 * (`fileFindings`).
 */
export function findingsIn(
  here: number,
  cells: INotebookCell[],
  own: ICellEntry | null
): IFinding[] {
  const refs = cells.map(c => c.ref);
  const out: IFinding[] = [];
  const elsewhere = (origin: ICallOrigin | null): boolean =>
    origin !== null &&
    (originFile(origin) !== null || originCell(origin, refs) !== -1);
  if (own) {
    for (const call of own.calls ?? []) {
      if (!isFinding(call)) {
        continue;
      }
      if (!elsewhere(call.origin ?? null)) {
        const f = callFinding(call, null);
        if (call.origin) {
          // written in a cell not in this notebook: where this cell called into it
          f.place = {
            origin: null,
            line: call.line,
            col: call.col,
            endLine: call.end_line ?? null,
            endCol: call.end_col ?? null
          };
          f.message += `\nin code from ${cellLabel(call.origin.index, call.origin.execution_count)}, line ${call.origin.line}`;
        }
        out.push(f);
      }
    }
    for (const finding of own.device_findings ?? []) {
      const place = findingPlace(own, finding);
      if (place && !elsewhere(place.origin)) {
        out.push(deviceFinding(finding, place, null));
      }
    }
    for (const replay of own.replays ?? []) {
      // where the cell called in; a failure inside a file is marked there too
      const line = replay.error?.line;
      if (failed(replay) && line) {
        out.push(replayFinding(replay, line, null));
      }
    }
  }
  cells.forEach((cell, i) => {
    if (i === here || !cell.entry) {
      return;
    }
    const caller = cellLabel(cell.ref.index, cell.entry.execution_count);
    const mine = (origin: ICallOrigin | null | undefined): boolean =>
      !!origin && !originFile(origin) && originCell(origin, refs) === here;
    for (const call of cell.entry.calls ?? []) {
      if (isFinding(call) && mine(call.origin)) {
        out.push(callFinding(call, `${caller}, line ${call.line}`));
      }
    }
    for (const finding of cell.entry.device_findings ?? []) {
      const place = findingPlace(cell.entry, finding);
      if (place && mine(place.origin)) {
        out.push(
          deviceFinding(finding, place, `${caller}, line ${finding.line}`)
        );
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
    const here = (file: string | null): boolean =>
      file !== null && resolveFile(notebook.path, file) === path;
    const name = notebook.path.slice(notebook.path.lastIndexOf('/') + 1);
    const inNotebook = notebooks.length > 1 ? ` of ${name}` : '';
    for (const cell of notebook.cells) {
      const entry = cell.entry;
      if (!entry) {
        continue;
      }
      const caller = `${cellLabel(cell.ref.index, entry.execution_count ?? cell.ref.executionCount)}${inNotebook}`;
      for (const call of entry.calls ?? []) {
        if (isFinding(call) && here(originFile(call.origin))) {
          out.push(callFinding(call, `${caller}, line ${call.line}`));
        }
      }
      for (const finding of entry.device_findings ?? []) {
        const place = findingPlace(entry, finding);
        if (place && here(originFile(place.origin))) {
          out.push(
            deviceFinding(finding, place, `${caller}, line ${finding.line}`)
          );
        }
      }
      for (const replay of entry.replays ?? []) {
        const line = replay.error?.file_line;
        if (failed(replay) && line && here(errorFile(replay.error))) {
          const from = replay.error?.line
            ? `${caller}, line ${replay.error.line}`
            : caller;
          out.push(replayFinding(replay, line, from));
        }
      }
    }
  }
  return out;
}
