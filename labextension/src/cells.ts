/**
 * Reading porter's results out of a live notebook: the latest cell entry among a code
 * cell's outputs, and where the recorded source sits in the cell's current text (a
 * `%%port` line above it shifts every recorded line by one). Applying a rewrite to a
 * cell (the rule is `apply.ts`'s) and which results are stale since.
 */
import { ICodeCellModel } from '@jupyterlab/cells';
import { IOutputModel } from '@jupyterlab/rendermime';
import { ISignal, Signal } from '@lumino/signaling';

import { comparable, planApply } from './apply';
import { asCellEntry, CELL_MIME, ICellEntry } from './types';

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
  // a typed cell has no trailing newline where the recorded body has one
  const at = source ? cellText.indexOf(comparable(source)) : -1;
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

/** The shared model's own undo history of a cell (per cell in JupyterLab 4). */
interface IUndoable {
  undoManager?: { stopCapturing(): void } | null;
}

/**
 * Put a verified rewrite into the cell in place of the source it was recorded from, as
 * one edit of the shared model (one undo step: Ctrl+Z in the cell restores the
 * original). Returns why not when it cannot (see `planApply`: the rule is there).
 */
export function applyRewrite(
  model: ICodeCellModel,
  entry: ICellEntry
): string | null {
  const shared = model.sharedModel;
  const plan = planApply(shared.getSource(), entry);
  if (plan.edit === null) {
    return plan.reason;
  }
  const { from, to, insert } = plan.edit;
  const history = (shared as unknown as IUndoable).undoManager;
  history?.stopCapturing(); // not merged with what was typed just before
  shared.updateSource(from, to, insert);
  history?.stopCapturing();
  markApplied(model, entry);
  return null;
}

// --- stale results: a rewrite was applied and the cell has not run since ---------------

const applied = new WeakSet<ICodeCellModel>();
const stale = new Signal<object, ICodeCellModel>({});

/**
 * Emitted with a cell whose result became stale (its rewrite was applied) or fresh
 * again (it ran, or an undo gave back the source porter recorded).
 */
export const staleChanged: ISignal<object, ICodeCellModel> = stale;

/**
 * True while the result of `model`'s cell describes source no longer there: its
 * rewrite was applied, and the cell has neither run since nor been undone. (Per cell:
 * what a view holds of the result may be a copy of the output's JSON.)
 */
export function isStale(model: ICodeCellModel): boolean {
  return applied.has(model);
}

function markApplied(model: ICodeCellModel, entry: ICellEntry): void {
  if (applied.has(model)) {
    return;
  }
  const fresh = () => {
    applied.delete(model);
    model.outputs.changed.disconnect(ran);
    model.sharedModel.changed.disconnect(edited);
    stale.emit(model);
  };
  const ran = () => fresh();
  const edited = () => {
    if (planApply(model.sharedModel.getSource(), entry).edit !== null) {
      fresh(); // undone: the cell holds what porter recorded again
    }
  };
  applied.add(model);
  model.outputs.changed.connect(ran);
  model.sharedModel.changed.connect(edited);
  stale.emit(model);
}
