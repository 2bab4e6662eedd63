/**
 * Reading porter's results out of a live notebook: the latest cell entry among a code
 * cell's outputs, and where the recorded source sits in the cell's current text (a
 * `%%port` line above it shifts every recorded line by one).
 */
import { ICodeCellModel } from '@jupyterlab/cells';
import { IOutputModel } from '@jupyterlab/rendermime';

import { asCellEntry, CELL_MIME, ICellEntry, verifiedRewrite } from './types';

const cache = new WeakMap<IOutputModel, ICellEntry | null>();

/** The cell entry an output carries, read once per output model. */
export function entryOfOutput(output: IOutputModel): ICellEntry | null {
  let entry = cache.get(output);
  if (entry === undefined) {
    entry = asCellEntry(output.data[CELL_MIME]);
    cache.set(output, entry);
  }
  return entry;
}

/** The last porter result among a code cell's outputs, null without one. */
export function entryOfCell(model: ICodeCellModel): ICellEntry | null {
  const outputs = model.outputs;
  for (let i = outputs.length - 1; i >= 0; i--) {
    const entry = entryOfOutput(outputs.get(i));
    if (entry) {
      return entry;
    }
  }
  return null;
}

function countLines(text: string, end: number): number {
  let n = 0;
  for (
    let i = text.indexOf('\n');
    i !== -1 && i < end;
    i = text.indexOf('\n', i + 1)
  ) {
    n++;
  }
  return n;
}

/**
 * How many lines of the cell text come before the recorded source: `exact` when the
 * recorded source is still in the cell as it was recorded, else a guess from a leading
 * cell magic (marks then appear only where the call's name is still on its line).
 */
export function sourceOffset(
  cellText: string,
  source: string
): { lines: number; exact: boolean } {
  const at = source ? cellText.indexOf(source) : -1;
  if (at !== -1) {
    return { lines: countLines(cellText, at), exact: true };
  }
  return { lines: /^%%/.test(cellText) ? 1 : 0, exact: false };
}

/** The last segment of a qualified name: `sum` for `Tensor.sum`. */
export function shortName(name: string): string {
  const i = name.lastIndexOf('.');
  return i === -1 ? name : name.slice(i + 1);
}

/**
 * Put a verified rewrite into the cell in place of the source it was recorded from.
 * Returns why not when it cannot: the rewrite is not verified, or the cell changed.
 */
export function applyRewrite(
  model: ICodeCellModel,
  entry: ICellEntry
): string | null {
  const rewrite = verifiedRewrite(entry);
  if (!rewrite) {
    return 'porter applies only rewrites that replays verified';
  }
  const text = model.sharedModel.getSource();
  const at = entry.source ? text.indexOf(entry.source) : -1;
  if (at === -1) {
    return 'the cell changed since porter recorded it: run it again to get a fresh rewrite';
  }
  model.sharedModel.updateSource(at, at + entry.source.length, rewrite.source);
  return null;
}
