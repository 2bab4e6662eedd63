/**
 * Where a finding is shown: the cell where its code is written, at its recorded line
 * and column range. A call made by code another cell wrote carries `origin`
 * (CONTRACT.md): it is marked in that cell, the calling cell named in the hover; code
 * written in a Python file of the person's carries `origin.file` and is shown in the
 * file (`findings.ts`). A device finding is marked where its call is. Pure functions
 * over the report's JSON.
 */
import { ICall, ICallOrigin, ICellEntry, IDeviceFinding } from './types';

/** What identifies a notebook cell: its position, its execution count, its id. */
export interface ICellRef {
  index: number;
  executionCount: number | null;
  id: string | null;
}

/** A mark: in which cell (null: the cell holding the result), and its range there. */
export interface IMarkPlace {
  origin: ICallOrigin | null;
  line: number;
  col: number;
  /** Where the marked expression ends (null: the end of the name at `col`). */
  endLine: number | null;
  endCol: number | null;
}

export type Severity = 'error' | 'warning' | 'info';

/** Severity by status: outside the standard is an error, a usage outside it or a
 * device matter a warning, a deliberate or speed matter information. */
export function severityOf(status: string): Severity {
  switch (status) {
    case 'non_standard':
    case 'replay_failure':
      return 'error';
    case 'acknowledged':
    case 'host_sync':
    case 'outside_namespace':
      return 'info';
    default:
      return 'warning'; // non_standard_usage, device_specific, device findings
  }
}

/** How every view names a cell: its notebook position, `In [n]` beside it. */
export function cellLabel(
  index: number | null | undefined,
  executionCount: number | null | undefined
): string {
  const count =
    executionCount === null || executionCount === undefined
      ? ''
      : `In [${executionCount}]`;
  if (index === null || index === undefined) {
    return count || 'cell';
  }
  return count ? `cell ${index} · ${count}` : `cell ${index}`;
}

/** Where a call is marked: where it is written. */
export function callPlace(call: ICall): IMarkPlace {
  const origin = call.origin ?? null;
  if (origin) {
    return {
      origin,
      line: origin.line,
      col: origin.col,
      endLine: origin.end_line ?? null,
      endCol: origin.end_col ?? null
    };
  }
  return {
    origin: null,
    line: call.line,
    col: call.col,
    endLine: call.end_line ?? null,
    endCol: call.end_col ?? null
  };
}

/** The call a device finding is about: the same line and name, in the cell's run or
 * in the replay on the finding's backend. */
export function callOfFinding(
  entry: ICellEntry,
  finding: IDeviceFinding
): ICall | null {
  if (finding.line === null || finding.line === undefined) {
    return null;
  }
  const runs = [entry.calls ?? []];
  for (const replay of entry.replays ?? []) {
    if (replay.backend === finding.backend && replay.calls) {
      runs.push(replay.calls);
    }
  }
  for (const calls of runs) {
    const call = calls.find(
      c => c.line === finding.line && c.name === finding.name
    );
    if (call) {
      return call;
    }
  }
  return null;
}

/** Where a device finding is marked: where its call is, else its line (column 0). */
export function findingPlace(
  entry: ICellEntry,
  finding: IDeviceFinding
): IMarkPlace | null {
  if (finding.line === null || finding.line === undefined) {
    return null;
  }
  const call = callOfFinding(entry, finding);
  if (call) {
    return callPlace(call);
  }
  return {
    origin: null,
    line: finding.line,
    col: 0,
    endLine: null,
    endCol: null
  };
}

/**
 * The position in `cells` of the cell an origin names: by the front end's cell id,
 * else by execution count, else by notebook position; -1 when none matches.
 */
export function originCell(origin: ICallOrigin, cells: ICellRef[]): number {
  if (origin.file) {
    return -1; // written in a Python file of the person's, not in a cell
  }
  if (origin.cell_id) {
    const i = cells.findIndex(c => c.id === origin.cell_id);
    if (i !== -1) {
      return i;
    }
  }
  const count = origin.execution_count;
  if (count !== null && count !== undefined) {
    const i = cells.findIndex(c => c.executionCount === count);
    if (i !== -1) {
      return i;
    }
  }
  const index = origin.index;
  if (index !== null && index !== undefined) {
    return cells.findIndex(c => c.index === index);
  }
  return -1;
}

/** True when the origin names the cell `ref` (among `cells`). */
export function namesCell(
  origin: ICallOrigin,
  ref: ICellRef,
  cells: ICellRef[]
): boolean {
  const at = originCell(origin, cells);
  return at !== -1 && cells[at].index === ref.index;
}

/** The UTF-16 range of a mark on its line's text, from character columns (`toUnits`
 * converts one), clamped to the line; `nameEnd` is where a name at `col` ends (the
 * fallback without an end column). Null when the line is not there. */
export function markRange(
  text: string,
  place: IMarkPlace,
  line: number,
  toUnits: (text: string, col: number) => number
): { from: number; to: number } {
  const from = toUnits(text, place.col);
  let to: number;
  if (place.endCol !== null && place.endLine === line) {
    to = toUnits(text, place.endCol);
  } else if (place.endLine !== null && place.endLine > line) {
    to = text.length; // the expression goes on: to the end of its first line
  } else {
    const m = /[A-Za-z_][\w.]*/y;
    m.lastIndex = from;
    const name = m.exec(text);
    to = name ? from + name[0].length : text.length;
  }
  return to > from ? { from, to } : { from: 0, to: text.length };
}

/** What a cell's marks show: their ranges, severities, classes, words and whether they
 * offer a quick fix. Marks are dispatched again only when this changes: a dispatch
 * closes the hover tooltip open on them. */
export function marksKey(
  marks: {
    from: number;
    to: number;
    severity: string;
    markClass?: string;
    message: string;
    actions?: readonly unknown[];
  }[]
): string {
  return JSON.stringify(
    marks.map(m => [
      m.from,
      m.to,
      m.severity,
      m.markClass ?? '',
      m.message,
      m.actions?.length ?? 0
    ])
  );
}
