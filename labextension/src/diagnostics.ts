/**
 * The Porting panel's findings, as data: one row per finding of a notebook's porter
 * results, placed in the cell where its code is written (`origin`) or in the Python
 * file of the person's it is written in (`origin.file`, grouped under the file), and
 * what the panel
 * does with them: filter, sort, group by replacement, and the arithmetic of showing only
 * the rows in view. Pure functions over the report's JSON (no DOM, no JupyterLab), so
 * that jest tests them; `panel.ts` draws what they return.
 *
 * Nothing here derives a verdict: the words are the JSON's (names, statuses, messages,
 * suggestions); a group's count adds up the `count` porter wrote on each call.
 */
import {
  callPlace,
  cellLabel,
  findingPlace,
  ICellRef,
  IMarkPlace,
  originCell,
  Severity,
  severityOf
} from './positions';
import { errorFile, originFile } from './findings';
import { num } from './text';
import { ICellEntry, IErrorInfo, IReplay, isFinding, isMuted } from './types';

/** One code cell of the notebook: where it is, its latest porter result, whether that
 * result is stale (its rewrite was applied and the cell has not run since). */
export interface IResultCell {
  ref: ICellRef;
  entry: ICellEntry | null;
  stale: boolean;
}

/** The statuses of rows that are not calls. */
export const DEVICE = 'device';
export const REPLAY_FAILURE = 'replay_failure';
export const MISMATCH = 'mismatch';
export const CELL_ERROR = 'cell_error';

/** One finding, as a row of the panel. */
export interface IDiagnostic {
  /** Unique within one collection, stable while the results do not change. */
  id: string;
  /** A call's status, or `device`, `replay_failure`, `mismatch`, `cell_error`. */
  status: string;
  severity: Severity;
  /** What the finding is about: the call's qualified name, a backend, an output. */
  name: string;
  /** The row's one line of text (the first line of any exception text). */
  message: string;
  /** What the rows are grouped by: the replacement, or the kind of finding. */
  group: string;
  /** Notebook position of the cell where the finding is shown (and a click lands);
   * for a finding shown in a file, the calling cell's. */
  cell: number;
  cellLabel: string;
  /** The Python file of the person's where the finding is shown (and a click opens),
   * relative to the notebook's folder as the JSON says; null: shown in `cell`. */
  file: string | null;
  /** Line of that cell's recorded source, or of the file (1-based); null: the finding
   * has no line. */
  line: number | null;
  /** Column in characters (0-based) on that line. */
  col: number;
  /** The calling cell and line, for a finding shown where another cell's code is. */
  calledFrom: string | null;
  /** Raw text (an exception's message) shown as text in a collapsible detail. */
  detail: string | null;
  /** porter's `count` of identical calls merged at this site (1 for other rows). */
  count: number;
  stale: boolean;
}

/** A row before it is placed in a cell. */
type IRowText = Omit<IDiagnostic, 'id' | 'cell' | 'cellLabel' | 'stale'>;

/** Severity of a row by its status. */
export function rowSeverity(status: string): Severity {
  return status === CELL_ERROR || status === MISMATCH
    ? 'error'
    : severityOf(status);
}

function firstLine(text: string): string {
  const i = text.indexOf('\n');
  return i === -1 ? text : `${text.slice(0, i)} …`;
}

/** Where a finding is shown, resolved against the notebook's cells. */
interface IShownAt {
  cell: ICellRef;
  file: string | null;
  line: number | null;
  col: number;
  calledFrom: string | null;
  /** The origin names a cell the notebook does not have: said in the message. */
  foreign: string;
}

function shownAt(
  place: IMarkPlace | null,
  calling: ICellRef,
  callingLabel: string,
  line: number | null,
  refs: ICellRef[]
): IShownAt {
  if (!place) {
    return {
      cell: calling,
      file: null,
      line,
      col: 0,
      calledFrom: null,
      foreign: ''
    };
  }
  const origin = place.origin;
  const file = originFile(origin);
  const at = origin && !file ? originCell(origin, refs) : -1;
  if (origin && !file && at === -1) {
    const from = cellLabel(origin.index, origin.execution_count);
    return {
      cell: calling,
      file: null,
      line,
      col: 0,
      calledFrom: null,
      foreign: ` (in code from ${from}, line ${origin.line})`
    };
  }
  // in the calling cell, in the cell that wrote the code, or in the person's file
  return {
    cell: at === -1 ? calling : refs[at],
    file,
    line: place.line,
    col: place.col,
    calledFrom: origin ? `${callingLabel}, line ${line}` : null,
    foreign: ''
  };
}

/** Where an exception is shown: the file it was raised in, at its line there, the
 * calling cell's line named; else the cell's line. */
function errorAt(
  error: IErrorInfo | null | undefined,
  callingLabel: string
): Pick<IDiagnostic, 'file' | 'line' | 'calledFrom'> {
  const file = errorFile(error);
  if (file && error?.file_line) {
    const from = error.line ? `${callingLabel}, line ${error.line}` : null;
    return { file, line: error.file_line, calledFrom: from ?? callingLabel };
  }
  return { file: null, line: error?.line ?? null, calledFrom: null };
}

/** The rows of one replay: its failure and the outputs that differ. */
function replayRows(replay: IReplay, callingLabel: string): IRowText[] {
  const rows: IRowText[] = [];
  if (replay.status === 'error' || replay.status === 'timeout') {
    const why = replay.error
      ? `${replay.error.type}: ${replay.error.message}`
      : (replay.reason ?? '');
    rows.push({
      status: REPLAY_FAILURE,
      severity: rowSeverity(REPLAY_FAILURE),
      name: replay.backend,
      message:
        `replay on ${replay.backend}: ${replay.status} ${firstLine(why)}`.trim(),
      group: 'replay failures',
      ...errorAt(replay.error, callingLabel),
      col: 0,
      detail: why || null,
      count: 1
    });
  }
  for (const o of replay.outputs ?? []) {
    if (o.within_tolerance === false) {
      rows.push({
        status: MISMATCH,
        severity: rowSeverity(MISMATCH),
        name: o.name,
        message: `${replay.backend}: ${o.name} differs (max abs err ${num(o.max_abs_err)}, ${o.mismatched ?? '?'} mismatched)`,
        group: 'mismatches',
        file: null,
        line: null,
        col: 0,
        calledFrom: null,
        detail: null,
        count: 1
      });
    }
  }
  return rows;
}

/**
 * Every finding of the notebook's results as rows, in notebook order: non-standard
 * calls (grouped by their replacement), device findings, the cell's own error, replay
 * failures and outputs that differ. A finding made by code written in another cell is
 * shown in that cell, at its line there, the calling cell named; one made by code in a
 * Python file of the person's (a call, or a replay that failed there) is shown in the
 * file, at its line there, the calling cell named. Rows in a file for which
 * `appliedFile` (the file as the JSON names it) is true are stale: a rewrite of it was
 * applied since.
 */
export function collectDiagnostics(
  cells: IResultCell[],
  appliedFile: (file: string) => boolean = () => false
): IDiagnostic[] {
  // `cells` are the notebook's cells in order (markdown too, without an entry): an
  // origin is found among them by id, execution count or position
  const refs = cells.map(c => c.ref);
  const out: IDiagnostic[] = [];
  for (const cell of cells) {
    const entry = cell.entry;
    if (!entry) {
      continue;
    }
    const calling = cell.ref.index;
    const label = cellLabel(
      calling,
      entry.execution_count ?? cell.ref.executionCount
    );
    let n = 0;
    const push = (row: IRowText, at: ICellRef) => {
      out.push({
        ...row,
        id: `${calling}:${n++}`,
        cell: at.index,
        cellLabel:
          at === cell.ref ? label : cellLabel(at.index, at.executionCount),
        stale: cell.stale || (row.file !== null && appliedFile(row.file))
      });
    };
    for (const call of entry.calls ?? []) {
      if (!isFinding(call)) {
        continue;
      }
      const at = shownAt(callPlace(call), cell.ref, label, call.line, refs);
      const why = call.message ? `: ${firstLine(call.message)}` : '';
      // rows in a file are grouped by the file: the row names the replacement
      const use = at.file && call.suggestion ? ` → ${call.suggestion}` : '';
      push(
        {
          status: call.status,
          severity: isMuted(call) ? 'info' : rowSeverity(call.status),
          name: call.name,
          message: `${call.name}${use}${at.foreign}${why}`,
          group:
            call.suggestion ??
            call.standard_name ??
            `${call.status}, no standard replacement`,
          file: at.file,
          line: at.line,
          col: at.col,
          calledFrom: at.calledFrom,
          detail: null,
          count: call.count ?? 1
        },
        at.cell
      );
    }
    for (const f of entry.device_findings ?? []) {
      const place = findingPlace(entry, f);
      const at = shownAt(place, cell.ref, label, f.line ?? null, refs);
      const on = f.backend ? ` on ${f.backend}` : '';
      push(
        {
          status: DEVICE,
          severity: rowSeverity(DEVICE),
          name: f.name,
          message:
            `${f.name} [${f.kind}${on}]${at.foreign} ${f.message ?? ''}`.trim(),
          group: `device: ${f.kind}`,
          file: at.file,
          line: at.line,
          col: at.col,
          calledFrom: at.calledFrom,
          detail: null,
          count: 1
        },
        at.cell
      );
    }
    if (entry.error) {
      const text = `${entry.error.type}: ${entry.error.message}`;
      push(
        {
          status: CELL_ERROR,
          severity: rowSeverity(CELL_ERROR),
          name: entry.error.type,
          message: `the cell raised ${firstLine(text)}`,
          group: 'errors of the cell',
          ...errorAt(entry.error, label),
          col: 0,
          detail: text,
          count: 1
        },
        cell.ref
      );
    }
    for (const replay of entry.replays ?? []) {
      replayRows(replay, label).forEach(row => push(row, cell.ref));
    }
  }
  return out;
}

/** Where a row's finding is: `norms.py line 5` in a file, `cell 3 · In [2], line 4`
 * in a cell. */
export function rowPlace(row: IDiagnostic): string {
  if (row.file !== null) {
    return row.line === null ? row.file : `${row.file} line ${row.line}`;
  }
  return row.line === null
    ? `${row.cellLabel}`
    : `${row.cellLabel}, line ${row.line}`;
}

/** What a row says in full (its title): its place, its name, its calling cell, its message. */
export function rowTitle(row: IDiagnostic): string {
  const where = rowPlace(row);
  const from = row.calledFrom ? ` (called from ${row.calledFrom})` : '';
  return `${where}: ${row.name}${from} — ${row.message}`;
}

// --- filter, sort, group ---------------------------------------------------------------

/**
 * The rows whose name, message, replacement, status or cell match every word of
 * `query` (case-insensitive); all rows for an empty query.
 */
export function filterDiagnostics(
  rows: IDiagnostic[],
  query: string
): IDiagnostic[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) {
    return rows;
  }
  return rows.filter(row => {
    const text =
      `${row.name}\n${row.message}\n${row.group}\n${row.status}\n${row.cellLabel}\n${row.file ?? ''}`.toLowerCase();
    return words.every(w => text.includes(w));
  });
}

export type SortKey = 'place' | 'severity' | 'message';

const SEVERITY_ORDER: Record<Severity, number> = {
  error: 0,
  warning: 1,
  info: 2
};

/** Rows in cells first, by cell; then rows in files, by file. */
function byPlace(a: IDiagnostic, b: IDiagnostic): number {
  const files =
    Number(a.file !== null) - Number(b.file !== null) ||
    (a.file ?? '').localeCompare(b.file ?? '');
  return (
    files ||
    (a.file === null ? a.cell - b.cell : 0) ||
    (a.line ?? Infinity) - (b.line ?? Infinity) ||
    a.col - b.col
  );
}

const COMPARE: Record<SortKey, (a: IDiagnostic, b: IDiagnostic) => number> = {
  place: byPlace,
  severity: (a, b) =>
    SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || byPlace(a, b),
  message: (a, b) =>
    (a.message < b.message ? -1 : a.message > b.message ? 1 : 0) ||
    byPlace(a, b)
};

/** The rows sorted by `key` (ties by place, then as given), reversed when not ascending. */
export function sortDiagnostics(
  rows: IDiagnostic[],
  key: SortKey,
  ascending = true
): IDiagnostic[] {
  const sign = ascending ? 1 : -1;
  return rows
    .map((row, i) => ({ row, i }))
    .sort((a, b) => sign * COMPARE[key](a.row, b.row) || a.i - b.i)
    .map(x => x.row);
}

/** Rows that share a replacement (or a kind of finding), or the file they are in. */
export interface IGroup {
  /** Unique among the groups (what collapsing one remembers). */
  key: string;
  /** What its head says: the replacement, the kind, or the file. */
  label: string;
  /** The file whose findings these are; null for a group of findings in cells. */
  file: string | null;
  rows: IDiagnostic[];
  /** The calls porter counted at these sites, added up. */
  count: number;
  /** The most severe of its rows. */
  severity: Severity;
}

/** The rows grouped by `group` (rows in a file: by their file), the groups in the
 * order of their first row. */
export function groupDiagnostics(rows: IDiagnostic[]): IGroup[] {
  const groups = new Map<string, IGroup>();
  for (const row of rows) {
    const key = row.file === null ? row.group : `file:${row.file}`;
    let group = groups.get(key);
    if (!group) {
      group = {
        key,
        label: row.file ?? row.group,
        file: row.file,
        rows: [],
        count: 0,
        severity: row.severity
      };
      groups.set(key, group);
    }
    group.rows.push(row);
    group.count += row.count;
    if (SEVERITY_ORDER[row.severity] < SEVERITY_ORDER[group.severity]) {
      group.severity = row.severity;
    }
  }
  return [...groups.values()];
}

/** One line of the panel's list: a group's head, or one of its rows. */
export type ListItem =
  | { kind: 'group'; group: IGroup; collapsed: boolean }
  | { kind: 'row'; row: IDiagnostic };

/** The list the panel scrolls through: each group's head, then its rows unless the
 * group is collapsed. */
export function flatten(
  groups: IGroup[],
  collapsed: ReadonlySet<string>
): ListItem[] {
  const items: ListItem[] = [];
  for (const group of groups) {
    const closed = collapsed.has(group.key);
    items.push({ kind: 'group', group, collapsed: closed });
    if (!closed) {
      group.rows.forEach(row => items.push({ kind: 'row', row }));
    }
  }
  return items;
}

// --- windowing -----------------------------------------------------------------------

/** Which items of a list of fixed-height rows to build: [start, end), and the height
 * of the whole list (the scroll range). */
export interface IWindow {
  start: number;
  end: number;
  /** Pixels above the first built row. */
  offset: number;
  height: number;
}

/**
 * The rows in view of a list of `total` rows of `rowHeight` pixels scrolled to
 * `scrollTop` in a viewport of `viewport` pixels, with `overscan` rows more on each
 * side (so a small scroll shows built rows before the next frame builds more).
 */
export function windowOf(
  total: number,
  rowHeight: number,
  scrollTop: number,
  viewport: number,
  overscan = 8
): IWindow {
  const height = total * rowHeight;
  const top = Math.max(0, Math.min(scrollTop, Math.max(0, height - viewport)));
  const first = Math.floor(top / rowHeight);
  const last = Math.ceil((top + Math.max(0, viewport)) / rowHeight);
  const start = Math.max(0, first - overscan);
  const end = Math.min(total, Math.max(start, last + overscan));
  return { start, end, offset: start * rowHeight, height };
}

/** The scroll position that brings item `index` into view (unchanged if it is). */
export function scrollToShow(
  index: number,
  rowHeight: number,
  scrollTop: number,
  viewport: number
): number {
  const top = index * rowHeight;
  if (top < scrollTop) {
    return top;
  }
  if (top + rowHeight > scrollTop + viewport) {
    return Math.max(0, top + rowHeight - viewport);
  }
  return scrollTop;
}
