/**
 * Marks in the editor: each finding of a cell's porter result underlined at its
 * recorded line and column through `@codemirror/lint` (as jupyterlab-lsp does), the
 * suggestion on hover, and, where the result carries a verified rewrite, a quick fix
 * that applies it. Registered with `IEditorExtensionRegistry`, so every cell editor
 * gets it; the marks follow the cell's outputs as they change.
 */
import { Notification } from '@jupyterlab/apputils';
import { ICodeCellModel } from '@jupyterlab/cells';
import {
  EditorExtensionRegistry,
  IEditorExtensionRegistry
} from '@jupyterlab/codemirror';
import { Diagnostic, setDiagnostics } from '@codemirror/lint';
import { Text } from '@codemirror/state';
import { EditorView, ViewPlugin } from '@codemirror/view';
import { Signal } from '@lumino/signaling';

import {
  applyRewrite,
  entryOfCell,
  isStale,
  shortName,
  sourceOffset,
  staleChanged
} from './cells';
import { utf16Column } from './columns';
import {
  INotebookCell,
  invalidate,
  notebookCells,
  notebookOf,
  resultsChanged
} from './notebookcells';
import {
  callPlace,
  cellLabel,
  findingPlace,
  IMarkPlace,
  markRange,
  marksKey,
  originCell,
  Severity,
  severityOf
} from './positions';
import { DEFAULT_SETTINGS, markedOnly } from './panelsettings';
import { visibleText } from './text';
import {
  ICall,
  ICallOrigin,
  ICellEntry,
  IDeviceFinding,
  isFinding,
  verifiedRewrite
} from './types';

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

/** One finding to mark in a cell: where, how severe, and what the hover says. */
interface IFinding {
  place: IMarkPlace;
  /** The call's status, `device` or `replay_failure` (what the settings choose by). */
  status: string;
  name: string;
  kind: string | undefined;
  severity: Severity;
  device: boolean;
  message: string;
}

function callFinding(call: ICall, calledFrom: string | null): IFinding {
  const use = call.suggestion ? `; use instead: ${call.suggestion}` : '';
  const why = call.message ? `\n${call.message}` : '';
  const from = calledFrom ? `\ncalled from ${calledFrom}` : '';
  return {
    place: callPlace(call),
    status: call.status,
    name: call.name,
    kind: call.kind,
    severity: severityOf(call.status),
    device: call.status === 'device_specific',
    message: `${call.name} [${call.status}]${use}${why}${from}`
  };
}

/**
 * The findings to mark in the cell `here` (its position in `cells`): those of its own
 * result written in it (or written in a cell the notebook no longer has), and those
 * other cells' runs made in code it wrote.
 */
export function findingsIn(
  here: number,
  cells: INotebookCell[],
  own: ICellEntry | null
): IFinding[] {
  const refs = cells.map(c => c.ref);
  const out: IFinding[] = [];
  const elsewhere = (origin: ICallOrigin | null): boolean =>
    origin !== null && originCell(origin, refs) !== -1;
  if (own) {
    for (const call of own.calls ?? []) {
      if (!isFinding(call)) {
        continue;
      }
      if (!elsewhere(call.origin ?? null)) {
        const f = callFinding(call, null);
        if (call.origin) {
          // written in a cell not in this notebook: where this cell called into it
          f.place = {
            origin: null,
            line: call.line,
            col: call.col,
            endLine: call.end_line ?? null,
            endCol: call.end_col ?? null
          };
          f.message += `\nin code from ${cellLabel(call.origin.index, call.origin.execution_count)}, line ${call.origin.line}`;
        }
        out.push(f);
      }
    }
    for (const finding of own.device_findings ?? []) {
      const place = findingPlace(own, finding);
      if (place && !elsewhere(place.origin)) {
        out.push(deviceFinding(finding, place, null));
      }
    }
    for (const replay of own.replays ?? []) {
      const line = replay.error?.line;
      if ((replay.status === 'error' || replay.status === 'timeout') && line) {
        out.push({
          place: {
            origin: null,
            line,
            col: 0,
            endLine: line + 1,
            endCol: null
          },
          status: 'replay_failure',
          name: '',
          kind: undefined,
          severity: severityOf('replay_failure'),
          device: false,
          message: `replay on ${replay.backend}: ${replay.status} ${replay.error?.type ?? ''}: ${replay.error?.message ?? ''}`
        });
      }
    }
  }
  cells.forEach((cell, i) => {
    if (i === here || !cell.entry) {
      return;
    }
    const caller = cellLabel(cell.ref.index, cell.entry.execution_count);
    const mine = (origin: ICallOrigin | null | undefined): boolean =>
      !!origin && originCell(origin, refs) === here;
    for (const call of cell.entry.calls ?? []) {
      if (isFinding(call) && mine(call.origin)) {
        out.push(callFinding(call, `${caller}, line ${call.line}`));
      }
    }
    for (const finding of cell.entry.device_findings ?? []) {
      const place = findingPlace(cell.entry, finding);
      if (place && mine(place.origin)) {
        out.push(
          deviceFinding(finding, place, `${caller}, line ${finding.line}`)
        );
      }
    }
  });
  return out;
}

function deviceFinding(
  finding: IDeviceFinding,
  place: IMarkPlace,
  calledFrom: string | null
): IFinding {
  const on = finding.backend ? ` on ${finding.backend}` : '';
  const from = calledFrom ? `\ncalled from ${calledFrom}` : '';
  return {
    place,
    status: 'device',
    name: finding.name,
    kind: 'device',
    severity: severityOf('device'),
    device: true,
    message: `${finding.name} [${finding.kind}${on}] ${finding.message ?? ''}${from}`
  };
}

/** The diagnostics of a cell against the editor's current text: its own result's
 * findings and those other cells' runs made in code it wrote. */
export function diagnosticsFor(
  model: ICodeCellModel,
  entry: ICellEntry | null,
  doc: Text
): Diagnostic[] {
  const notebook = notebookOf(model);
  const all = notebook ? notebookCells(notebook) : [];
  const here = all.findIndex(c => c.ref.id === model.sharedModel.id);
  const cells = here === -1 ? [] : all; // a cell on its own: its own findings only
  const { lines, exact } = sourceOffset(doc.toString(), entry?.source ?? '');
  const rewrite = entry ? verifiedRewrite(entry) : null;
  const actions =
    rewrite && entry
      ? [
          {
            name: 'Apply verified rewrite',
            apply: () => {
              const why = applyRewrite(model, entry);
              if (why) {
                Notification.warning(`porter: ${why}`);
              }
            }
          }
        ]
      : undefined;
  const out: Diagnostic[] = [];
  const findings = markedOnly(findingsIn(here, cells, entry), marked);
  for (const f of findings) {
    // operators and indexing have no name on the line to check a changed cell by
    const named = f.kind !== 'operator' && f.kind !== 'index' && !!f.name;
    const where = span(
      doc,
      f.place.line + lines,
      f.place,
      f.name,
      named && !exact
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

/** The CodeMirror extension for the editor of one code cell. */
function cellMarks(model: ICodeCellModel) {
  return ViewPlugin.define((view: EditorView) => {
    let pending = 0;
    let shown = marksKey([]);
    const refresh = () => {
      pending = 0;
      const entry = entryOfCell(model);
      // a rewrite applied: the findings are about source no longer there until it runs
      const diagnostics = isStale(model)
        ? []
        : diagnosticsFor(model, entry, view.state.doc);
      // another cell ran, the notebook changed: the same marks are not dispatched again
      const key = marksKey(diagnostics);
      if (key !== shown) {
        view.dispatch(setDiagnostics(view.state, diagnostics));
        shown = key;
      }
    };
    const schedule = () => {
      if (!pending) {
        pending = window.setTimeout(refresh, 0);
      }
    };
    const onStale = (_: unknown, cell: ICodeCellModel) => {
      if (cell === model) {
        schedule();
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
    staleChanged.connect(onStale);
    resultsChanged.connect(onResults);
    markedSignal.connect(schedule);
    schedule(); // not now: a view may not dispatch while it is being built
    return {
      destroy() {
        window.clearTimeout(pending);
        staleChanged.disconnect(onStale);
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

export function registerMarks(registry: IEditorExtensionRegistry): void {
  registry.addExtension({
    name: 'porter-ext:marks',
    factory: options => {
      const model = options.model as unknown as Partial<ICodeCellModel>;
      if (!model || model.type !== 'code' || !model.outputs) {
        return null;
      }
      return EditorExtensionRegistry.createImmutableExtension(
        cellMarks(model as ICodeCellModel)
      );
    }
  });
}
