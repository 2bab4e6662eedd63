/**
 * Marks in the editor: each finding of a cell's porter result underlined at its
 * recorded line and column through `@codemirror/lint` (as jupyterlab-lsp does), the
 * suggestion on hover, and, where the result carries a verified rewrite, a quick fix
 * that applies it. Registered with `IEditorExtensionRegistry`, so every cell editor
 * gets it; the marks follow the cell's outputs as they change. A file editor (a Python
 * file of the person's that a recorded cell called into) gets the same marks for the
 * findings written in it, from every open notebook's results, until a rewrite of the
 * file is applied (`applyfile.ts`: the findings describe text no longer there).
 */
import { ICodeCellModel } from '@jupyterlab/cells';
import {
  EditorExtensionRegistry,
  IEditorExtensionRegistry
} from '@jupyterlab/codemirror';
import { Diagnostic, setDiagnostics } from '@codemirror/lint';
import { Text } from '@codemirror/state';
import { EditorView, ViewPlugin } from '@codemirror/view';
import { Signal } from '@lumino/signaling';

import { fileAppliedChanged, isFileApplied } from './applyfile';
import { sourceState } from './apply';
import { applyOrSay, entryOfCell, shortName, sourceOffset } from './cells';
import { utf16Column } from './columns';
import {
  fileFindings,
  findingsIn,
  IFinding,
  INotebookResults
} from './findings';
import {
  invalidate,
  notebookCells,
  notebookOf,
  resultsChanged
} from './notebookcells';
import { IMarkPlace, markRange, marksKey } from './positions';
import { DEFAULT_SETTINGS, markedOnly } from './panelsettings';
import { visibleText } from './text';
import { ICellEntry, SourceState, verifiedRewrite } from './types';

/** The statuses marked (the `markedStatuses` setting). */
let marked: ReadonlySet<string> = new Set(DEFAULT_SETTINGS.markedStatuses);
const markedSignal = new Signal<object, void>({});

/** Mark findings of these statuses only; every editor's marks are drawn again. */
export function setMarkedStatuses(statuses: readonly string[]): void {
  const next = new Set(statuses);
  if (
    next.size !== marked.size ||
    [...next].some(status => !marked.has(status))
  ) {
    marked = next;
    markedSignal.emit();
  }
}

/** The document range of a mark on line `line` (1-based, in the editor's text). */
function span(
  doc: Text,
  line: number,
  place: IMarkPlace,
  name: string | null,
  check: boolean
): { from: number; to: number } | null {
  if (line < 1 || line > doc.lines) {
    return null;
  }
  const at = doc.line(line);
  if (check && name && !at.text.includes(shortName(name))) {
    return null; // the cell changed and the call is no longer on this line
  }
  const { from, to } = markRange(at.text, place, place.line, utf16Column);
  return { from: at.from + from, to: at.from + to };
}

/** Diagnostics of `findings` against the editor's text: `lines` is where the recorded
 * line 1 is (a cell's magic line); `check`: drop a named mark whose line no longer holds
 * its name (the text changed since the run). */
function toDiagnostics(
  findings: IFinding[],
  doc: Text,
  lines: number,
  check: boolean,
  actions?: Diagnostic['actions']
): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const f of markedOnly(findings, marked)) {
    // operators and indexing have no name on the line to check a changed cell by
    const named = f.kind !== 'operator' && f.kind !== 'index' && !!f.name;
    const where = span(
      doc,
      f.place.line + lines,
      f.place,
      f.name,
      named && check
    );
    if (!where) {
      continue;
    }
    out.push({
      ...where,
      severity: f.severity,
      source: 'porter',
      markClass: f.device
        ? 'porter-mark porter-mark-device'
        : `porter-mark porter-mark-${f.severity}`,
      message: visibleText(f.message),
      actions: f.place.origin ? undefined : actions
    });
  }
  return out;
}

/** The diagnostics of a cell against the editor's current text: its own result's
 * findings and those other cells' runs made in code it wrote. None while the cell holds
 * the applied rewrite (the findings are about text no longer there); the quick fix only
 * while it holds the recorded source (where Apply would not refuse). */
export function diagnosticsFor(
  model: ICodeCellModel,
  entry: ICellEntry | null,
  doc: Text
): Diagnostic[] {
  const text = doc.toString();
  const state: SourceState | null = entry ? sourceState(text, entry) : null;
  if (state === 'applied') {
    return [];
  }
  const notebook = notebookOf(model);
  const all = notebook ? notebookCells(notebook) : [];
  const here = all.findIndex(c => c.ref.id === model.sharedModel.id);
  const cells = here === -1 ? [] : all; // a cell on its own: its own findings only
  const { lines, exact } = sourceOffset(text, entry?.source ?? '');
  const rewrite = entry ? verifiedRewrite(entry) : null;
  const actions =
    rewrite && entry && state === 'recorded'
      ? [
          {
            name: 'Apply verified rewrite',
            apply: () => void applyOrSay(model, entry)
          }
        ]
      : undefined;
  return toDiagnostics(
    findingsIn(here, cells, entry),
    doc,
    lines,
    !exact,
    actions
  );
}

/** Dispatch `diagnostics` to `view` unless they are the ones shown (a dispatch closes
 * the hover tooltip open on them); returns what is shown now. */
function show(view: EditorView, diagnostics: Diagnostic[], shown: string) {
  const key = marksKey(diagnostics);
  if (key !== shown) {
    view.dispatch(setDiagnostics(view.state, diagnostics));
  }
  return key;
}

/** The CodeMirror extension for the editor of one code cell: its marks are drawn
 * again when its outputs change, when the notebook's results do, and at every change of
 * its text (typing, undo, redo, paste), which decides its source state. */
function cellMarks(model: ICodeCellModel) {
  return ViewPlugin.define((view: EditorView) => {
    let pending = 0;
    let shown = marksKey([]);
    const refresh = () => {
      pending = 0;
      const entry = entryOfCell(model);
      const diagnostics = diagnosticsFor(model, entry, view.state.doc);
      // another cell ran, the notebook changed: the same marks are not dispatched again
      shown = show(view, diagnostics, shown);
    };
    const schedule = () => {
      if (!pending) {
        pending = window.setTimeout(refresh, 0);
      }
    };
    // this cell's result changed: every cell of the notebook may mark code it wrote
    const ran = () => invalidate(notebookOf(model));
    const onResults = (_: unknown, notebook: object) => {
      if (notebook === notebookOf(model)) {
        schedule();
      }
    };
    model.outputs.changed.connect(schedule);
    model.outputs.changed.connect(ran);
    resultsChanged.connect(onResults);
    markedSignal.connect(schedule);
    schedule(); // not now: a view may not dispatch while it is being built
    return {
      update(update) {
        if (update.docChanged) {
          schedule();
        }
      },
      destroy() {
        window.clearTimeout(pending);
        resultsChanged.disconnect(onResults);
        markedSignal.disconnect(schedule);
        if (!model.isDisposed) {
          model.outputs.changed.disconnect(schedule);
          model.outputs.changed.disconnect(ran);
        }
      }
    };
  });
}

// --- file editors ----------------------------------------------------------------------

/** The server path of each file editor's model (a file editor's extension is built
 * before its widget is tracked, so the path is looked up at each refresh). */
const filePaths = new WeakMap<object, string>();
/** The open notebooks' results, as the file marks read them. */
let openNotebooks: () => INotebookResults[] = () => [];
const filesSignal = new Signal<object, void>({});

/** The file editor of `model` shows the file at server path `path` (again, after a
 * rename); its marks are drawn again. */
export function setFilePath(model: object, path: string): void {
  if (filePaths.get(model) !== path) {
    filePaths.set(model, path);
    filesSignal.emit();
  }
}

/** Where the file marks read the open notebooks' results; call `filesChanged` when a
 * notebook opens or closes. */
export function setNotebookSource(source: () => INotebookResults[]): void {
  openNotebooks = source;
  filesSignal.emit();
}

/** A notebook opened or closed: every file editor's marks are drawn again. */
export function filesChanged(): void {
  filesSignal.emit();
}

/** The diagnostics of the file at `path` against the editor's text. */
export function fileDiagnostics(path: string, doc: Text): Diagnostic[] {
  // the file may have been edited since the run: a mark whose line no longer holds
  // its call's name is dropped rather than put on another call
  return toDiagnostics(fileFindings(path, openNotebooks()), doc, 0, true);
}

/** The CodeMirror extension for a file editor (the model of a document, not a cell). */
function fileMarks(model: object) {
  return ViewPlugin.define((view: EditorView) => {
    let pending = 0;
    let shown = marksKey([]);
    const refresh = () => {
      pending = 0;
      const path = filePaths.get(model);
      // a rewrite applied: the findings are about text no longer there until a run
      const diagnostics =
        path && !isFileApplied(path)
          ? fileDiagnostics(path, view.state.doc)
          : [];
      shown = show(view, diagnostics, shown);
    };
    const schedule = () => {
      if (!pending) {
        pending = window.setTimeout(refresh, 0);
      }
    };
    resultsChanged.connect(schedule);
    markedSignal.connect(schedule);
    filesSignal.connect(schedule);
    fileAppliedChanged.connect(schedule);
    schedule();
    return {
      update(update) {
        if (update.docChanged) {
          schedule(); // an edit: marks whose call left its line go
        }
      },
      destroy() {
        window.clearTimeout(pending);
        resultsChanged.disconnect(schedule);
        markedSignal.disconnect(schedule);
        filesSignal.disconnect(schedule);
        fileAppliedChanged.disconnect(schedule);
      }
    };
  });
}

export function registerMarks(registry: IEditorExtensionRegistry): void {
  registry.addExtension({
    name: 'porter-ext:marks',
    factory: options => {
      const model = options.model as unknown as Partial<ICodeCellModel>;
      if (!model) {
        return null;
      }
      if (model.type === 'code' && model.outputs) {
        return EditorExtensionRegistry.createImmutableExtension(
          cellMarks(model as ICodeCellModel)
        );
      }
      if (options.inline || model.type !== undefined) {
        return null; // other cells (markdown, raw), inline editors
      }
      return EditorExtensionRegistry.createImmutableExtension(fileMarks(model));
    }
  });
}
