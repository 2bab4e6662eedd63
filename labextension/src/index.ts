/**
 * porter's JupyterLab plugin: the Porting side panel
 * follows the active notebook; cell editors, and file editors of the person's Python
 * files that recorded cells called into, get porter's marks; Apply buttons put a
 * verified rewrite into its cell, or (the panel's) over the person's file. porter's
 * cell outputs are drawn by its renderer (`mime.ts`), live and after a reload alike.
 */
import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { Cell, ICodeCellModel } from '@jupyterlab/cells';
import { IEditorExtensionRegistry } from '@jupyterlab/codemirror';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IEditorTracker } from '@jupyterlab/fileeditor';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

import {
  applyOrSay,
  cellSourceState,
  entryOfCell,
  sayRefused,
  sourceStateChanged,
  watchSourceState
} from './cells';
import { fileFresh } from './applyfile';
import {
  fileAccess,
  openFileAt,
  readNotebooks,
  trackFileEditors
} from './fileeditors';
import { filesOf } from './filerewrites';
import { registerMarks, setMarkedStatuses } from './marks';
import { tellCellOrder } from './notebookorder';
import { PortingPanel } from './panel';
import {
  DEFAULT_SETTINGS,
  IPorterSettings,
  readSettings
} from './panelsettings';
import {
  APPLY_EVENT,
  IApplyDetail,
  OUTPUT_SHOWN_EVENT,
  showSourceState
} from './render';
import { ICellEntry, sourceStateWords, verifiedRewrite } from './types';

const ICON = new LabIcon({
  name: 'porter-ext:porting',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16"><path class="jp-icon3" fill="#616161" d="M4 5h9l-3-3h3l4 4-4 4h-3l3-3H4zm16 14h-9l3 3h-3l-4-4 4-4h3l-3 3h9z"/></svg>'
});

const APPLY_COMMAND = 'porter:apply-rewrite';
const PANEL_COMMAND = 'porter:show-panel';

/** The code cell of `panel` whose node holds `target`, or null. */
function cellHolding(panel: NotebookPanel, target: Element): Cell | null {
  const node = target.closest('.jp-Cell');
  const cell = node ? panel.content.widgets.find(w => w.node === node) : null;
  return cell && cell.model.type === 'code' ? cell : null;
}

/** Apply `entry` (by default the cell's last porter result) to the cell holding the
 * button `clicked`; a refusal is said in a toast and under the button. */
function applyInCell(
  panel: NotebookPanel,
  clicked: Element,
  entry?: ICellEntry | null
): void {
  const cell = cellHolding(panel, clicked);
  if (!cell) {
    sayRefused('could not find the cell of this result', clicked);
    return;
  }
  const model = cell.model as ICodeCellModel;
  const result = entry ?? entryOfCell(model);
  if (result) {
    applyOrSay(model, result, clicked);
  } else {
    sayRefused('this cell holds no porter result', clicked);
  }
}

/** Apply `entry`'s verified rewrite to the cell whose output (porter's view) sent the event. */
function onApplyEvent(panel: NotebookPanel, event: Event): void {
  const { entry } = (event as CustomEvent<IApplyDetail>).detail;
  applyInCell(panel, event.target as Element, entry);
}

/** Draw the source state of `model`'s cell on the Apply buttons in `root` (its outputs,
 * or one of them). */
function drawState(model: ICodeCellModel, root: Element): void {
  const entry = entryOfCell(model);
  const state = cellSourceState(model);
  if (entry && state) {
    const words = state === 'recorded' ? '' : sourceStateWords(entry, state);
    showSourceState(root, state, words);
  }
}

/** Every code cell of the notebook, now and as cells come: its source state followed. */
function watchCells(panel: NotebookPanel): void {
  const watch = () => {
    const cells = panel.content.model?.cells;
    for (let i = 0; i < (cells?.length ?? 0); i++) {
      const model = cells!.get(i);
      if (model.type === 'code') {
        watchSourceState(model as ICodeCellModel);
      }
    }
  };
  void panel.context.ready.then(() => {
    watch();
    panel.content.model?.cells.changed.connect(watch);
  });
}

/** A cell's source state changed: its outputs in every notebook view show it. */
function showState(tracker: INotebookTracker, model: ICodeCellModel): void {
  tracker.forEach(panel => {
    const cell = panel.content.widgets.find(w => w.model === model);
    const outputs = cell?.node.querySelector('.jp-OutputArea');
    if (outputs) {
      drawState(model, outputs);
    }
  });
}

const PLUGIN_ID = 'porter-ext:plugin';

/** The panel follows the main area: a notebook's findings while it is current, and
 * while the editor of a file its findings are in is; nothing while another widget is (a
 * Launcher, another file). Without JupyterLab's shell (Notebook 7) the notebook
 * tracker's current notebook. */
function followActiveNotebook(
  panel: PortingPanel,
  tracker: INotebookTracker,
  labShell: ILabShell | null
): void {
  if (labShell) {
    const follow = () => {
      const current = labShell.currentWidget;
      const path = (current as { context?: { path?: unknown } } | null)?.context
        ?.path;
      if (current instanceof NotebookPanel) {
        panel.notebook = current;
      } else if (typeof path !== 'string' || !panel.showsFile(path)) {
        panel.notebook = null;
      }
    };
    labShell.currentChanged.connect(follow);
    follow();
  } else {
    panel.notebook = tracker.currentWidget;
    tracker.currentChanged.connect((_, notebook) => {
      panel.notebook = notebook;
    });
  }
}

/** Read porter's settings now and whenever they change. */
function watchSettings(
  registry: ISettingRegistry | null,
  use: (settings: IPorterSettings) => void
): void {
  use(DEFAULT_SETTINGS);
  if (!registry) {
    return;
  }
  void registry
    .load(PLUGIN_ID)
    .then(settings => {
      const read = () => use(readSettings(settings.composite));
      settings.changed.connect(read);
      read();
    })
    .catch(reason => console.warn('porter: settings not loaded', reason));
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'porter in notebooks: the Porting panel, editor marks, Apply',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [
    IEditorExtensionRegistry,
    ILabShell,
    ICommandPalette,
    ISettingRegistry,
    IDocumentManager,
    IEditorTracker
  ],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    editors: IEditorExtensionRegistry | null,
    labShell: ILabShell | null,
    palette: ICommandPalette | null,
    registry: ISettingRegistry | null,
    docs: IDocumentManager | null,
    fileEditors: IEditorTracker | null
  ) => {
    performance.mark('porter-ext:activate-start');
    const panel = new PortingPanel();
    panel.title.icon = ICON;
    app.shell.add(panel, 'left', { rank: 900 });
    if (docs) {
      panel.openFile = (path, line, col) =>
        void openFileAt(docs, path, line, col);
      panel.fileAccess = fileAccess(docs, fileEditors);
    }
    if (fileEditors) {
      trackFileEditors(fileEditors);
      readNotebooks(tracker);
    }

    const setUp = (notebook: NotebookPanel) => {
      watchCells(notebook);
      notebook.node.addEventListener(APPLY_EVENT, event =>
        onApplyEvent(notebook, event)
      );
      notebook.node.addEventListener(OUTPUT_SHOWN_EVENT, event => {
        const output = event.target as Element;
        const cell = cellHolding(notebook, output);
        if (cell) {
          drawState(cell.model as ICodeCellModel, output);
        }
      });
    };
    tracker.widgetAdded.connect((_, notebook) => setUp(notebook));
    tracker.forEach(setUp);
    tellCellOrder(tracker);
    followActiveNotebook(panel, tracker, labShell);
    NotebookActions.executed.connect((_, args) => {
      // a cell ran: the files its result speaks of are described afresh
      const ran = tracker.find(p => p.content === args.notebook);
      if (ran && args.cell.model.type === 'code') {
        const entry = entryOfCell(args.cell.model as ICodeCellModel);
        filesOf(ran.context.path, entry).forEach(fileFresh);
      }
      const current = panel.notebook;
      if (current && current.content === args.notebook) {
        panel.onExecuted(current);
      }
    });
    let openOnFirst = DEFAULT_SETTINGS.openOnFirstFinding;
    watchSettings(registry, settings => {
      setMarkedStatuses(settings.markedStatuses);
      openOnFirst = settings.openOnFirstFinding;
    });
    panel.firstFinding.connect(() => {
      if (openOnFirst && !panel.isVisible) {
        void app.commands.execute(PANEL_COMMAND);
      }
    });

    if (editors) {
      registerMarks(editors);
    }
    sourceStateChanged.connect((_, model) => showState(tracker, model));

    app.commands.addCommand(APPLY_COMMAND, {
      label: 'porter: Apply Verified Rewrite to the Active Cell',
      isEnabled: () => {
        const cell = tracker.activeCell;
        if (cell?.model.type !== 'code') {
          return false;
        }
        const model = cell.model as ICodeCellModel;
        const entry = entryOfCell(model);
        return (
          !!entry &&
          !!verifiedRewrite(entry) &&
          cellSourceState(model) === 'recorded'
        );
      },
      execute: () => {
        const cell = tracker.activeCell;
        const entry =
          cell?.model.type === 'code'
            ? entryOfCell(cell.model as ICodeCellModel)
            : null;
        if (!cell || !entry) {
          return;
        }
        // a refusal is said under the cell's own Apply button too, where it has one
        const button = cell.node.querySelector('.jp-OutputArea .porter-apply');
        applyOrSay(cell.model as ICodeCellModel, entry, button);
      }
    });
    app.commands.addCommand(PANEL_COMMAND, {
      label: 'porter: Show the Porting Panel',
      execute: () => {
        if (labShell) {
          labShell.activateById(panel.id);
        } else {
          app.shell.activateById(panel.id);
        }
      }
    });
    palette?.addItem({ command: APPLY_COMMAND, category: 'porter' });
    palette?.addItem({ command: PANEL_COMMAND, category: 'porter' });
    // the browser test reads what porter's activation cost JupyterLab's start
    performance.measure('porter-ext:activate', 'porter-ext:activate-start');
  }
};

export default plugin;
