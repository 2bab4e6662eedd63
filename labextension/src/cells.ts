/**
 * Reading porter's results out of a live notebook: the latest cell entry among a code
 * cell's outputs, and where the recorded source sits in the cell's current text (a
 * `%%port` line above it shifts every recorded line by one). Applying a rewrite to a
 * cell (the rule is `apply.ts`'s), and the cell's source state (recorded, applied or
 * stale) followed through every change of its text.
 */
import { Notification } from '@jupyterlab/apputils';
import { ICodeCellModel } from '@jupyterlab/cells';
import { IOutputModel } from '@jupyterlab/rendermime';
import { ISignal, Signal } from '@lumino/signaling';

import { comparable, planApply, sourceState } from './apply';
import { showRefusal } from './render';
import { asCellEntry, CELL_MIME, ICellEntry, SourceState } from './types';

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
  return null;
}

/** How long a refusal's toast stays (JupyterLab's default, 0, shows none: only the
 * notification centre's counter would change). */
export const REFUSAL_TOAST_MS = 10_000;

/** Say why an Apply refused, in a toast, and inline under `clicked` (the button the
 * person clicked in an output) where there is one. */
export function sayRefused(why: string, clicked: Element | null = null): void {
  Notification.warning(`porter: ${why}`, { autoClose: REFUSAL_TOAST_MS });
  if (clicked) {
    showRefusal(clicked, why);
  }
}

/** `applyRewrite`, and where it refuses, `sayRefused`; true when it applied. */
export function applyOrSay(
  model: ICodeCellModel,
  entry: ICellEntry,
  clicked: Element | null = null
): boolean {
  const why = applyRewrite(model, entry);
  if (why) {
    sayRefused(why, clicked);
  }
  return !why;
}

// --- the source state: recorded, applied or stale, after every change of the cell ------

/**
 * Where the cell's source stands against its last porter result (`sourceState`), null
 * for a cell without one. Read from the cell's text and the result's JSON alone, so an
 * Apply, an undo, a redo, a paste or a keystroke all give the same answer for the same
 * text.
 */
export function cellSourceState(model: ICodeCellModel): SourceState | null {
  const entry = entryOfCell(model);
  return entry ? sourceState(model.sharedModel.getSource(), entry) : null;
}

const states = new WeakMap<ICodeCellModel, SourceState | null>();
const stateSignal = new Signal<object, ICodeCellModel>({});

/** Emitted with a watched cell whose source state changed (`watchSourceState`). */
export const sourceStateChanged: ISignal<object, ICodeCellModel> = stateSignal;

/**
 * Follow the source state of `model` from now on: every change of its source or of
 * its outputs reads it again, and `sourceStateChanged` says when it changed. Watching a
 * cell twice watches it once.
 */
export function watchSourceState(model: ICodeCellModel): void {
  if (states.has(model)) {
    return;
  }
  states.set(model, cellSourceState(model));
  const check = () => {
    if (model.isDisposed) {
      return;
    }
    const now = cellSourceState(model);
    if (now !== states.get(model)) {
      states.set(model, now);
      stateSignal.emit(model);
    }
  };
  model.sharedModel.changed.connect(check);
  model.outputs.changed.connect(check);
}
