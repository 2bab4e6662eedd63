/**
 * JupyterLab's file editors and porter's findings in the person's Python files: which
 * file each editor shows (for its marks, `marks.ts`), which notebooks' results the marks
 * read, opening a file at a finding's line and column (the Porting panel's click), and
 * where Apply of a file's rewrite reads and writes (`applyfile.ts`).
 */
import { Notification } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { type FileEditor, IEditorTracker } from '@jupyterlab/fileeditor';
import { INotebookTracker } from '@jupyterlab/notebook';

import { ISignal } from '@lumino/signaling';

import { IFileAccess } from './applyfile';
import { utf16Column } from './columns';
import { filesChanged, setFilePath, setNotebookSource } from './marks';
import { notebookCells } from './notebookcells';

/** Keep the marks told which file each file editor shows (and shows after a rename). */
export function trackFileEditors(editors: IEditorTracker): void {
  const track = (widget: NonNullable<IEditorTracker['currentWidget']>) => {
    const model = widget.content.model;
    setFilePath(model, widget.context.path);
    widget.context.pathChanged.connect((_, path) => setFilePath(model, path));
  };
  editors.widgetAdded.connect((_, widget) => track(widget));
  editors.forEach(track);
}

/** The marks of a file read every open notebook's results; a notebook opened, closed or
 * renamed draws them again. */
export function readNotebooks(notebooks: INotebookTracker): void {
  setNotebookSource(() => {
    const out: { path: string; cells: ReturnType<typeof notebookCells> }[] = [];
    notebooks.forEach(panel => {
      const shared = panel.content.model?.sharedModel as object | undefined;
      if (shared) {
        out.push({ path: panel.context.path, cells: notebookCells(shared) });
      }
    });
    return out;
  });
  notebooks.widgetAdded.connect((_, panel) => {
    filesChanged();
    panel.context.pathChanged.connect(filesChanged);
    void panel.context.ready.then(filesChanged);
    panel.disposed.connect(() => window.setTimeout(filesChanged, 0));
  });
}

/**
 * Open the file at server path `path` (or bring its editor forward) and put the cursor
 * at `line` (1-based; past the end: the last line) and `col` (characters).
 */
export async function openFileAt(
  docs: IDocumentManager,
  path: string,
  line: number | null,
  col: number
): Promise<void> {
  const widget = docs.openOrReveal(path);
  if (!widget) {
    Notification.warning(`porter: JupyterLab cannot open ${path}`);
    return;
  }
  const content = widget.content as unknown as Partial<FileEditor>;
  try {
    await widget.context.ready;
    await content.ready;
  } catch (reason) {
    Notification.warning(`porter: ${path} could not be opened: ${reason}`);
    return;
  }
  const editor = content.editor;
  if (!editor || line === null) {
    return; // opened with another kind of viewer, or a finding without a line
  }
  const at = Math.max(0, Math.min(line - 1, editor.lineCount - 1));
  // col counts characters; the editor's column, UTF-16 units of the line
  const position = {
    line: at,
    column: utf16Column(editor.getLine(at) ?? '', col)
  };
  editor.setCursorPosition(position);
  editor.revealPosition(position);
  editor.focus();
}

/** The shared model's own undo history (of a file's document in JupyterLab 4). */
interface IUndoable {
  undoManager?: { stopCapturing(): void } | null;
}

/**
 * Apply's access to the person's files: the Contents API for the text on disk and for
 * writing a file no editor holds; the file's editor (found among `editors`), whose model
 * takes the rewrite as one undo step and is then saved.
 */
export function fileAccess(
  docs: IDocumentManager,
  editors: IEditorTracker | null
): IFileAccess {
  const contents = docs.services.contents;
  return {
    read: async path => {
      const model = await contents.get(path, {
        type: 'file',
        format: 'text',
        content: true
      });
      if (typeof model.content !== 'string') {
        throw new Error('it is not a text file');
      }
      return model.content;
    },
    write: async (path, text) => {
      await contents.save(path, {
        type: 'file',
        format: 'text',
        content: text
      });
    },
    editor: path => {
      const widget = editors?.find(w => w.context.path === path);
      const shared = widget?.content.model.sharedModel;
      if (!widget || !shared) {
        return null;
      }
      return {
        source: () => shared.getSource(),
        replace: (from, to, insert) => {
          const history = (shared as unknown as IUndoable).undoManager;
          history?.stopCapturing(); // not merged with what was typed just before
          shared.updateSource(from, to, insert);
          history?.stopCapturing();
        },
        save: () => widget.context.save(),
        changed: shared.changed as unknown as ISignal<unknown, unknown>
      };
    }
  };
}
