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

import {
  applyRewrite,
  entryOfCell,
  isStale,
  shortName,
  sourceOffset,
  staleChanged
} from './cells';
import { utf16Column } from './columns';
import { visibleText } from './text';
import { ICellEntry, isFinding, isMuted, verifiedRewrite } from './types';

const NAME = /[A-Za-z_][\w.]*/y;

function span(
  doc: Text,
  line: number,
  col: number,
  name: string | null,
  exact: boolean
): { from: number; to: number } | null {
  if (line < 1 || line > doc.lines) {
    return null;
  }
  const at = doc.line(line);
  if (!exact && name && !at.text.includes(shortName(name))) {
    return null; // the cell changed and the call is no longer on this line
  }
  const from = at.from + utf16Column(at.text, col); // col: characters
  NAME.lastIndex = from - at.from;
  const m = NAME.exec(at.text);
  const to = m ? from + m[0].length : at.to;
  return to > from ? { from, to } : { from: at.from, to: at.to };
}

/** The diagnostics of one cell entry against the editor's current text. */
export function diagnosticsFor(
  model: ICodeCellModel,
  entry: ICellEntry,
  doc: Text
): Diagnostic[] {
  const { lines, exact } = sourceOffset(doc.toString(), entry.source);
  const rewrite = verifiedRewrite(entry);
  const actions = rewrite
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
  for (const call of entry.calls ?? []) {
    if (!isFinding(call)) {
      continue;
    }
    const where = span(doc, call.line + lines, call.col, call.name, exact);
    if (!where) {
      continue;
    }
    const use = call.suggestion ? `; use instead: ${call.suggestion}` : '';
    const why = call.message ? `\n${call.message}` : '';
    out.push({
      ...where,
      severity: isMuted(call) ? 'info' : 'warning',
      source: 'porter',
      markClass: 'porter-mark',
      message: visibleText(`${call.name} [${call.status}]${use}${why}`),
      actions
    });
  }
  for (const finding of entry.device_findings ?? []) {
    if (finding.line === null || finding.line === undefined) {
      continue;
    }
    const where = span(doc, finding.line + lines, 0, finding.name, exact);
    if (where) {
      const on = finding.backend ? ` on ${finding.backend}` : '';
      out.push({
        ...where,
        severity: 'warning',
        source: 'porter',
        markClass: 'porter-mark porter-mark-device',
        message: visibleText(
          `${finding.name} [${finding.kind}${on}] ${finding.message ?? ''}`
        )
      });
    }
  }
  return out;
}

/** The CodeMirror extension for the editor of one code cell. */
function cellMarks(model: ICodeCellModel) {
  return ViewPlugin.define((view: EditorView) => {
    let pending = 0;
    let last: ICellEntry | null | undefined = undefined;
    const refresh = () => {
      pending = 0;
      const entry = entryOfCell(model);
      if (entry === last && !entry) {
        return;
      }
      last = entry;
      // a rewrite applied: the findings are about source no longer there until it runs
      const diagnostics =
        entry && !isStale(model)
          ? diagnosticsFor(model, entry, view.state.doc)
          : [];
      view.dispatch(setDiagnostics(view.state, diagnostics));
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
    model.outputs.changed.connect(schedule);
    staleChanged.connect(onStale);
    schedule(); // not now: a view may not dispatch while it is being built
    return {
      destroy() {
        window.clearTimeout(pending);
        staleChanged.disconnect(onStale);
        if (!model.isDisposed) {
          model.outputs.changed.disconnect(schedule);
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
