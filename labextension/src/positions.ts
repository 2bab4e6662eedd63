/**
 * Where a finding is shown: the cell where its code is written, at its recorded line
 * and column range. A call made by code another cell wrote carries `origin`
 * (CONTRACT.md): it is marked in that cell, the calling cell named in the hover; code
 * written in a Python file of the person's carries `origin.file` and is shown in the
 * file (`findings.ts`). A device finding is marked where its call is. Pure functions
 * over the report's JSON.
 */
import type * as schema from './schema.generated';
import { ICallOrigin } from './types';

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

/** How severe a row is: porter's model decides it (`calls[].severity`, `diagnostics[].severity`). */
export type Severity = schema.Severity;

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
