/**
 * Apply, as data: whether a verified rewrite may go into a cell, and the one edit that
 * puts it there. Pure (strings in, strings out), so that every Apply button (the
 * output's, the panel's, the mark's quick fix, the live widget's) calls the same tested
 * function; `cells.ts` performs the edit on the cell's model.
 *
 * The rule: the cell's current text, below its `%%port` line, must be the source porter
 * recorded, compared in a form that ignores a trailing newline and nothing else. Any
 * other difference, anywhere in the cell, refuses with the reason. The same comparison
 * (`sourceState`) tells every view whether the cell holds the recorded source, the
 * applied rewrite or neither, after any edit, undo or redo.
 */
import {
  ICellEntry,
  SourceState,
  sourceStateWords,
  verifiedRewrite
} from './types';

/** One replacement in the cell's text: UTF-16 offsets, as the shared model counts. */
export interface IApplyEdit {
  from: number;
  to: number;
  insert: string;
  /** The cell's whole text once the edit is made. */
  text: string;
}

/** What Apply does: the edit, or why it refuses (exactly one of the two is null). */
export type ApplyPlan =
  { edit: IApplyEdit; reason: null } | { edit: null; reason: string };

/** The line a `%%port` cell starts with (its options), the newline included. */
const PORT_MAGIC = /^%%port(?=[ \t\n])[^\n]*\n/;

export const NOT_VERIFIED =
  'porter applies only rewrites that replays verified';
export const CHANGED = 'the cell changed since porter recorded it';
const AGAIN = 'run it again to get a fresh rewrite';

/** The text without one trailing newline: the form Apply compares. */
export function comparable(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/**
 * The part of the cell above the recorded source: the `%%port` line of a `%%port` cell
 * (porter records the cell's body), nothing for a cell recorded whole (`%port on`).
 */
export function headerOf(cellText: string, recorded: string): string {
  if (recorded.startsWith('%%')) {
    return '';
  }
  const magic = PORT_MAGIC.exec(cellText);
  return magic ? magic[0] : '';
}

/**
 * The cell's text as Apply and the views compare it with a source porter wrote (the
 * recorded source, the rewrite): below the `%%port` line, without one trailing newline.
 */
export function comparableBody(cellText: string, recorded: string): string {
  return comparable(cellText.slice(headerOf(cellText, recorded).length));
}

/**
 * Where the cell's text stands against its result: the recorded source, the rewrite
 * porter proposed (`rewrite.source`, applied by Apply or typed back by undo and redo),
 * or neither. Decided from the cell entry alone.
 */
export function sourceState(
  cellText: string,
  entry: Pick<ICellEntry, 'source' | 'rewrite'>
): SourceState {
  const recorded = entry.source ?? '';
  const body = comparableBody(cellText, recorded);
  if (body === comparable(recorded)) {
    return 'recorded';
  }
  const rewrite = entry.rewrite?.source;
  return typeof rewrite === 'string' && body === comparable(rewrite)
    ? 'applied'
    : 'stale';
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    n++;
  }
  return n;
}

/** Where `now` first differs from `then`, in words, with cell line numbers. */
export function difference(now: string, then: string, above: number): string {
  const a = now.split('\n');
  const b = then.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) {
    i++;
  }
  const line = above + i + 1;
  if (i === b.length) {
    const last = above + a.length;
    return last === line
      ? `line ${line} was added after the recorded source`
      : `lines ${line}-${last} were added after the recorded source`;
  }
  if (i === a.length) {
    return `the recorded source went on at line ${line}, which is no longer there`;
  }
  return `line ${line} is not the line porter recorded`;
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * The smallest replacement that turns `before` into `after` (one edit, so one undo
 * step), never splitting a surrogate pair (the shared model would mangle a half).
 */
export function minimalEdit(before: string, after: string): IApplyEdit {
  const most = Math.min(before.length, after.length);
  let head = 0;
  while (head < most && before.charCodeAt(head) === after.charCodeAt(head)) {
    head++;
  }
  if (head > 0 && isHigh(before.charCodeAt(head - 1))) {
    head--;
  }
  let tail = 0;
  while (
    tail < most - head &&
    before.charCodeAt(before.length - 1 - tail) ===
      after.charCodeAt(after.length - 1 - tail)
  ) {
    tail++;
  }
  if (tail > 0 && isLow(before.charCodeAt(before.length - tail))) {
    tail--;
  }
  return {
    from: head,
    to: before.length - tail,
    insert: after.slice(head, after.length - tail),
    text: after
  };
}

/**
 * Apply `entry`'s verified rewrite to a cell whose text is `cellText`: the edit that
 * replaces the recorded source (the cell keeps its `%%port` line, and ends with a
 * newline exactly when it did), or why not: the rewrite is not verified, it is in the
 * cell already, or the cell is not, ignoring a trailing newline, what porter recorded.
 */
export function planApply(
  cellText: string,
  entry: Pick<ICellEntry, 'source' | 'rewrite' | 'source_states'>
): ApplyPlan {
  const rewrite = verifiedRewrite(entry as ICellEntry);
  if (!rewrite) {
    return { edit: null, reason: NOT_VERIFIED };
  }
  const recorded = entry.source ?? '';
  const header = headerOf(cellText, recorded);
  const body = cellText.slice(header.length);
  const state = sourceState(cellText, entry);
  if (state === 'applied') {
    return { edit: null, reason: sourceStateWords(entry, 'applied') };
  }
  if (state === 'stale') {
    const where = difference(
      comparable(body),
      comparable(recorded),
      countLines(header)
    );
    return { edit: null, reason: `${CHANGED} (${where}): ${AGAIN}` };
  }
  const ending = body.endsWith('\n') ? '\n' : '';
  const after = header + comparable(rewrite.source) + ending;
  return { edit: minimalEdit(cellText, after), reason: null };
}
