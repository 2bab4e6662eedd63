/**
 * The Porting panel's findings, as data: one row per finding of a notebook's porter
 * results, placed in the cell where its code is written (`origin`) or in the Python
 * file of the person's it is written in (`origin.file`, grouped under the file), and
 * what the panel
 * does with them: filter, sort, group by replacement, and the arithmetic of showing only
 * the rows in view. Pure functions over the report's JSON (no DOM, no JupyterLab), so
 * that jest tests them; `panel.ts` draws what they return.
 *
 * Nothing here derives a verdict, a severity or a sentence: rows, their words (the
 * message, the place, the caller) and their severities are porter's (`diagnostics[]`);
 * a group's count adds up the `count` porter wrote on each row, and the notebook's
 * counts add up each cell's headline counts in the words porter wrote around them
 * (cells' results come one by one, so the sum over them is the one the panel makes).
 */
import { ICellRef, originCell, Severity } from './positions';
import { ICellEntry, IRow } from './types';

/** One code cell of the notebook: where it is, its latest porter result, whether that
 * result is stale (its rewrite was applied and the cell has not run since). */
export interface IResultCell {
  ref: ICellRef;
  entry: ICellEntry | null;
  stale: boolean;
}

/** One finding, as a row of the panel: porter's row (`diagnostics[]`), placed in the
 * notebook. */
export interface IDiagnostic {
  /** Unique within one collection, stable while the results do not change. */
  id: string;
  /** The row's kind: a call's status, or `device`, `replay_failure`, `mismatch`,
   * `dtype_changed`, `cell_error`. */
  status: string;
  /** The kind in porter's words (`kind_text`: the severity glyph's label). */
  kindText: string;
  /** The severity with the kind in porter's words (`severity_text`: the severity
   * glyph's title); in results older than them, the bare severity. */
  severityText: string;
  severity: Severity;
  /** Whether porter counts the row as a finding (else it is information). */
  finding: boolean;
  /** What the finding is about: the call's qualified name, a backend, an output. */
  name: string;
  /** The row's one line of text. */
  message: string;
  /** The row in one line with its place (a row's tooltip, its detail's title). */
  title: string;
  /** What the rows are grouped by: the replacement, or the kind of finding. */
  group: string;
  /** Notebook position of the cell where the finding is shown (and a click lands);
   * for a finding shown in a file, the calling cell's. */
  cell: number;
  cellLabel: string;
  /** The Python file of the person's where the finding is shown (and a click opens),
   * relative to the notebook's folder as the JSON says; null: shown in `cell`. */
  file: string | null;
  /** Line of that cell's recorded source, or of the file (1-based): where a click
   * puts the cursor; null: the finding has no line. */
  line: number | null;
  /** The line as the editor counts it (the `%%port` line is line 1): what is shown. */
  shownLine: number | null;
  /** Column in characters (0-based) on that line. */
  col: number;
  /** Where the row is, in porter's words (`place`: `norms.py line 5`); in results
   * older than them, the file's name (or nothing, for a row in a cell). */
  place: string;
  /** The calling cell and line in porter's words (`called_from_text`: `called from
   * cell 6 · In [9], line 2`), for a finding shown where another cell's code is; in
   * results older than them, the bare `called_from`. */
  calledFromText: string | null;
  /** Raw text (an exception's message) shown as text in a collapsible detail. */
  detail: string | null;
  /** porter's `count` of identical calls merged at this site (1 for other rows). */
  count: number;
  stale: boolean;
}

/**
 * Every row of the notebook's results, in notebook order, as porter's model wrote them
 * (`diagnostics[]`), placed: a row whose code another cell wrote is shown in that cell
 * (found by id, execution count or position; in the calling cell where the notebook no
 * longer has it), a row in a Python file of the person's under its file. Rows in a file
 * for which `appliedFile` (the file as the JSON names it) is true are stale: a rewrite
 * of it was applied since.
 */
export function collectDiagnostics(
  cells: IResultCell[],
  appliedFile: (file: string) => boolean = () => false
): IDiagnostic[] {
  const refs = cells.map(c => c.ref);
  const out: IDiagnostic[] = [];
  for (const cell of cells) {
    const entry = cell.entry;
    if (!entry) {
      continue;
    }
    const calling = cell.ref.index;
    (entry.diagnostics ?? []).forEach((row: IRow, n: number) => {
      const origin = row.origin ?? null;
      const at = origin && !row.file ? originCell(origin, refs) : -1;
      const shownIn = at === -1 ? cell.ref : refs[at];
      const foreign = !!origin && !row.file && at === -1;
      const file = row.file ?? null;
      out.push({
        id: `${calling}:${n}`,
        status: row.kind,
        kindText: row.kind_text ?? row.kind,
        severityText: row.severity_text ?? row.severity,
        severity: row.severity,
        finding: row.finding,
        name: row.name,
        message: row.message,
        title: row.title ?? row.message,
        group: row.group,
        cell: shownIn.index,
        cellLabel: at === -1 ? (entry.label ?? '') : (origin?.label ?? ''),
        file,
        // a row of a cell the notebook no longer has: where this cell called into it
        line: foreign
          ? (row.calling_line ?? null)
          : (row.source_line ?? row.line ?? null),
        shownLine: foreign ? null : (row.line ?? null),
        col: foreign ? 0 : (row.col ?? 0),
        place: row.place ?? file ?? '',
        calledFromText: row.called_from_text ?? row.called_from ?? null,
        detail: row.detail ?? null,
        count: row.count ?? 1,
        stale: cell.stale || (file !== null && appliedFile(file))
      });
    });
  }
  return out;
}

/** The notebook's counts, as the panel's head shows them: porter's per-cell headline
 * counts (`findings`, `notes`, over exactly each cell's rows) added up, put in the
 * words porter wrote for such sums (`headline.sum_format`, its `{findings}` and
 * `{notes}` standing for them); results older than those words show none. */
export function notebookCounts(entries: (ICellEntry | null)[]): string {
  let findings = 0;
  let notes = 0;
  let words = '';
  for (const entry of entries) {
    findings += entry?.headline?.counts?.findings ?? 0;
    notes += entry?.headline?.counts?.notes ?? 0;
    words = words || (entry?.headline?.sum_format ?? '');
  }
  return words
    .split('{findings}')
    .join(String(findings))
    .split('{notes}')
    .join(String(notes));
}

/** What a row says in full (its title), as porter wrote it. */
export function rowTitle(row: IDiagnostic): string {
  return row.title;
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
      `${row.name}\n${row.message}\n${row.group}\n${row.status}\n${row.kindText}\n${row.cellLabel}\n${row.file ?? ''}`.toLowerCase();
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
