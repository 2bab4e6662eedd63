/**
 * Apply of a rewrite of the person's Python file, as data: which rewrites a notebook's
 * porter results offer (a `%%port --fix` cell's `file_verdicts` that porter accepted),
 * and whether one may be written over the file's current text: only when that text is
 * still the one porter recorded, told by its SHA-256 (`digest`, as porter computes it:
 * `porter_ext.fix.files.digest`). Pure but for WebCrypto, so that jest tests it;
 * `applyfile.ts` reads and writes the file.
 *
 * Nothing here decides a verdict or words one: `accepted` and `verified_on` are the
 * JSON's, and so are the words shown of each verdict (`summary`, `applied_text`).
 */
import { NOT_VERIFIED } from './apply';
import { errorFile, originFile, resolveFile } from './findings';
import { INotebookCell } from './notebookcells';
import { ICellEntry, IFileVerdict } from './types';

/** One rewrite of a file that the panel offers to apply: the verdicts of the calling
 * cells that said the same of the same text, merged. */
export interface IFileRewrite {
  /** Unique among a notebook's offers (what a row of the panel is known by). */
  key: string;
  /** The file as the JSON names it (relative to the notebook's folder). */
  file: string;
  /** Its server path (what the Contents API and the editors are named by). */
  path: string;
  /** SHA-256 (hex) of the file's text when porter recorded it. */
  digest: string;
  /** The file rewritten into the standard. */
  source: string;
  /** The specs the calling cells' replays verified it on, as porter wrote them. */
  verifiedOn: string[];
  /** porter's words of the first calling cell's verdict, shown after the file's name
   * (`summary`: `verified on numpy (called from cell 2 · In [3])`); null in results
   * older than them. */
  summary: string | null;
  /** What porter says once the rewrite was written over the file (`applied_text`);
   * null in results older than them. */
  appliedText: string | null;
  /** porter's words of the other calling cells' verdicts: those that verified the same
   * rewrite, then those that refused a rewrite of the file (`not verified by cell 3 ·
   * In [4]: the replays disagree`; in older results, the bare reason). */
  notes: string[];
}

/** What an Apply of a file's rewrite writes, or why it refuses (one of the two null). */
export type FilePlan =
  { text: string; reason: null } | { text: null; reason: string };

/** The words of a refusal because the file is not what porter recorded. */
export function changedReason(file: string): string {
  return `${file} changed since porter recorded it: run the cell again`;
}

function isVerdict(value: unknown): value is IFileVerdict {
  const v = value as IFileVerdict | null;
  return (
    !!v &&
    typeof v.file === 'string' &&
    v.file !== '' &&
    typeof v.digest === 'string' &&
    typeof v.source === 'string' &&
    typeof v.accepted === 'boolean'
  );
}

/** What porter said of a verdict, in its words (older results: the reason, if any). */
function words(verdict: IFileVerdict): string | null {
  return verdict.summary ?? verdict.reason ?? null;
}

function specs(verdict: IFileVerdict): string[] {
  return Array.isArray(verdict.verified_on)
    ? verdict.verified_on.filter(s => typeof s === 'string')
    : [];
}

/**
 * The rewrites of the person's files that the results of the notebook at server path
 * `notebook` offer, in notebook order: one per file and recorded text and rewrite that
 * porter accepted, with porter's words of each calling cell's verdict on it (and of any
 * calling cell whose run refused a rewrite of that file).
 */
export function fileRewrites(
  notebook: string,
  cells: readonly INotebookCell[]
): IFileRewrite[] {
  const offers = new Map<string, IFileRewrite>();
  const refused: { path: string; note: string }[] = [];
  for (const cell of cells) {
    const entry = cell.entry;
    const verdicts = Array.isArray(entry?.file_verdicts)
      ? entry!.file_verdicts
      : [];
    for (const verdict of verdicts.filter(isVerdict)) {
      const path = resolveFile(notebook, verdict.file);
      const note = words(verdict);
      if (!verdict.accepted) {
        if (note) {
          refused.push({ path, note });
        }
        continue;
      }
      const on = specs(verdict);
      const key = JSON.stringify([path, verdict.digest, verdict.source, on]);
      const offer = offers.get(key);
      if (offer) {
        if (note) {
          offer.notes.push(note);
        }
      } else {
        offers.set(key, {
          key,
          file: verdict.file,
          path,
          digest: verdict.digest,
          source: verdict.source,
          verifiedOn: on,
          summary: note,
          appliedText: verdict.applied_text ?? null,
          notes: []
        });
      }
    }
  }
  const out = [...offers.values()];
  for (const { path, note } of refused) {
    out.filter(o => o.path === path).forEach(o => o.notes.push(note));
  }
  return out;
}

/** SHA-256 (hex) of `text`'s UTF-8 bytes, as porter's `digest` (WebCrypto). */
export async function sha256Hex(text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const hash = await crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(hash), b =>
    b.toString(16).padStart(2, '0')
  ).join('');
}

/**
 * The file's text as Python reads its source (what porter's digest is of): without a
 * leading byte-order mark, every line ending `\n`. The Contents API gives the bytes
 * decoded as they are.
 */
export function asPythonReads(text: string): string {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  return body.replace(/\r\n?/g, '\n');
}

/** `source` written as the file at `text` is: its line endings, its byte-order mark. */
export function inFileForm(source: string, text: string): string {
  const ending = /\r\n/.test(text) ? '\r\n' : /\r/.test(text) ? '\r' : '\n';
  const body = ending === '\n' ? source : source.replace(/\n/g, ending);
  return text.startsWith('\uFEFF') ? `\uFEFF${body}` : body;
}

/**
 * Apply `offer` to a file whose current text is `text` (as read from disk, or as its
 * editor holds it): the text to write, or why not: porter did not verify it, the file
 * already holds it, or the file is no longer the text porter recorded.
 */
export async function planFileApply(
  text: string,
  offer: Pick<IFileRewrite, 'file' | 'digest' | 'source'> & {
    accepted?: boolean;
  }
): Promise<FilePlan> {
  if (offer.accepted === false) {
    return { text: null, reason: NOT_VERIFIED };
  }
  const read = asPythonReads(text);
  if (read === offer.source) {
    return {
      text: null,
      reason: `${offer.file} already holds porter's rewrite`
    };
  }
  if ((await sha256Hex(read)) !== offer.digest) {
    return { text: null, reason: changedReason(offer.file) };
  }
  return { text: inFileForm(offer.source, text), reason: null };
}

/**
 * The server paths of the person's files a cell's result says something about (its
 * calls written there, its replays that failed there, its rewrites of them), for the
 * notebook at server path `notebook`: a run of that cell makes them fresh again.
 */
export function filesOf(notebook: string, entry: ICellEntry | null): string[] {
  const files = new Set<string>();
  const add = (file: string | null) => {
    if (file) {
      files.add(resolveFile(notebook, file));
    }
  };
  for (const call of entry?.calls ?? []) {
    add(originFile(call.origin));
  }
  for (const replay of entry?.replays ?? []) {
    add(errorFile(replay.error));
  }
  const verdicts = entry?.file_verdicts;
  for (const verdict of Array.isArray(verdicts) ? verdicts : []) {
    add(isVerdict(verdict) ? verdict.file : null);
  }
  return [...files];
}
