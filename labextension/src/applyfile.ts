/**
 * Apply of a verified rewrite of the person's Python file (`filerewrites.ts` says what
 * and whether): the file is read through the Contents API, its text checked against the
 * digest porter recorded, and the rewrite written through its editor's model when the
 * file is open (one undo step there, then saved) or through the Contents API when it is
 * not. The file is then applied: its findings describe text no longer there, so its
 * marks go and its rows are stale, until a cell that calls into it runs again or an
 * undo in its editor gives back the text porter recorded.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { minimalEdit } from './apply';
import {
  changedReason,
  IFileRewrite,
  planFileApply,
  sha256Hex
} from './filerewrites';

/** A file open in an editor, as Apply uses it. */
export interface IOpenFile {
  /** The editor's text now (unsaved edits included; `\n` line endings). */
  source(): string;
  /** Replace [from, to) (UTF-16 offsets) with `insert`, as one undo step. */
  replace(from: number, to: number, insert: string): void;
  /** Write the editor's text to the file. */
  save(): Promise<void>;
  /** Emitted when the editor's text changes. */
  readonly changed: ISignal<unknown, unknown>;
}

/** Where Apply reads and writes the person's files (server paths). */
export interface IFileAccess {
  read(path: string): Promise<string>;
  write(path: string, text: string): Promise<void>;
  /** The editor the file is open in, or null. */
  editor(path: string): IOpenFile | null;
}

/** What an applied file is known by: the digest of the text porter recorded. */
const applied = new Map<string, { digest: string; stop: () => void }>();
const appliedSignal = new Signal<object, string>({});

/** Emitted with a file's server path when it became applied, or fresh again. */
export const fileAppliedChanged: ISignal<object, string> = appliedSignal;

/** True while the file at server path `path` holds a rewrite porter's results predate. */
export function isFileApplied(path: string): boolean {
  return applied.has(path);
}

/** The file at `path` is described by fresh results again (a cell that calls into it
 * ran, or its editor's undo gave back the recorded text). */
export function fileFresh(path: string): void {
  const state = applied.get(path);
  if (state) {
    state.stop();
    applied.delete(path);
    appliedSignal.emit(path);
  }
}

function markApplied(offer: IFileRewrite, open: IOpenFile | null): void {
  fileFresh(offer.path);
  let stop = () => {};
  if (open) {
    // an undo in the editor that gives back the recorded text: fresh again
    const check = () => {
      void sha256Hex(open.source()).then(digest => {
        if (digest === offer.digest && applied.get(offer.path) === state) {
          fileFresh(offer.path);
        }
      });
    };
    open.changed.connect(check);
    stop = () => open.changed.disconnect(check);
  }
  const state = { digest: offer.digest, stop };
  applied.set(offer.path, state);
  appliedSignal.emit(offer.path);
}

function message(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

/**
 * Write `offer`'s rewrite over its file, or say why not (null: written): the file on
 * disk, and in its editor when it is open there, must be the text porter recorded.
 */
export async function applyFileRewrite(
  offer: IFileRewrite,
  access: IFileAccess
): Promise<string | null> {
  let disk: string;
  try {
    disk = await access.read(offer.path);
  } catch (reason) {
    return `${offer.file} could not be read: ${message(reason)}`;
  }
  const plan = await planFileApply(disk, offer);
  if (plan.text === null) {
    return plan.reason;
  }
  const open = access.editor(offer.path);
  try {
    if (open) {
      const now = open.source();
      const inEditor = await planFileApply(now, offer);
      if (inEditor.text === null) {
        return inEditor.reason === changedReason(offer.file)
          ? `${offer.file} was edited in its editor since porter recorded it: undo the edits or save them and run the cell again`
          : inEditor.reason;
      }
      const edit = minimalEdit(now, inEditor.text);
      open.replace(edit.from, edit.to, edit.insert);
      await open.save();
    } else {
      await access.write(offer.path, plan.text);
    }
  } catch (reason) {
    return `${offer.file} could not be written: ${message(reason)}`;
  }
  markApplied(offer, open);
  return null;
}
