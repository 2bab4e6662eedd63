/**
 * porter's JupyterLab plugin: inside every notebook, porter's cell outputs show the
 * live widget while it works and porter's own view otherwise; the Porting side panel
 * follows the active notebook; cell editors get porter's marks; Apply buttons put a
 * verified rewrite into its cell. The renderer for other places is in `mime.ts`.
 */
import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { ICodeCellModel } from '@jupyterlab/cells';
import { IEditorExtensionRegistry } from '@jupyterlab/codemirror';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';

import { applyRewrite, entryOfCell } from './cells';
import { registerMarks } from './marks';
import { PortingPanel } from './panel';
import { APPLY_EVENT, IApplyDetail } from './render';
import { CellOutputRenderer, RANK, WidgetLiveness } from './renderer';
import { CELL_MIME, ICellEntry, WIDGET_MIME } from './types';

const ICON = new LabIcon({
  name: 'porter-ext:porting',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16"><path class="jp-icon3" fill="#616161" d="M4 5h9l-3-3h3l4 4-4 4h-3l3-3H4zm16 14h-9l3 3h-3l-4-4 4-4h3l-3 3h9z"/></svg>'
});

const APPLY_COMMAND = 'porter:apply-rewrite';
const PANEL_COMMAND = 'porter:show-panel';

/** Let porter's cell outputs in this notebook prefer the live widget. */
function useCellRenderer(panel: NotebookPanel): void {
  const rendermime = panel.content.rendermime;
  const liveness = new WidgetLiveness(panel.sessionContext);
  rendermime.addFactory(
    {
      safe: true,
      mimeTypes: [CELL_MIME],
      createRenderer: options =>
        new CellOutputRenderer(
          options,
          () => rendermime.getFactory(WIDGET_MIME),
          liveness
        )
    },
    RANK
  );
}

/** Apply `entry`'s verified rewrite to the cell whose output sent the event. */
function onApplyEvent(panel: NotebookPanel, event: Event): void {
  const { entry } = (event as CustomEvent<IApplyDetail>).detail;
  const target = event.target as Node;
  const cell = panel.content.widgets.find(w => w.node.contains(target));
  if (!cell || cell.model.type !== 'code') {
    Notification.warning('porter: could not find the cell of this result');
    return;
  }
  const why = applyRewrite(cell.model as ICodeCellModel, entry);
  if (why) {
    Notification.warning(`porter: ${why}`);
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'porter-ext:notebook',
  description:
    'porter in notebooks: widget-or-view outputs, the Porting panel, editor marks, Apply',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IEditorExtensionRegistry, ILabShell, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    editors: IEditorExtensionRegistry | null,
    labShell: ILabShell | null,
    palette: ICommandPalette | null
  ) => {
    performance.mark('porter-ext:activate-start');
    const panel = new PortingPanel();
    panel.title.icon = ICON;
    app.shell.add(panel, 'left', { rank: 900 });

    tracker.widgetAdded.connect((_, notebook) => {
      useCellRenderer(notebook);
      notebook.node.addEventListener(APPLY_EVENT, event =>
        onApplyEvent(notebook, event)
      );
    });
    tracker.forEach(notebook => useCellRenderer(notebook));
    panel.notebook = tracker.currentWidget;
    tracker.currentChanged.connect((_, notebook) => {
      panel.notebook = notebook;
    });
    NotebookActions.executed.connect((_, args) => {
      const current = tracker.currentWidget;
      if (current && current.content === args.notebook) {
        panel.onExecuted(current);
      }
    });

    if (editors) {
      registerMarks(editors);
    }

    app.commands.addCommand(APPLY_COMMAND, {
      label: 'porter: Apply Verified Rewrite to the Active Cell',
      isEnabled: () => {
        const cell = tracker.activeCell;
        const entry: ICellEntry | null =
          cell?.model.type === 'code'
            ? entryOfCell(cell.model as ICodeCellModel)
            : null;
        return entry?.rewrite?.status === 'verified';
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
        const why = applyRewrite(cell.model as ICodeCellModel, entry);
        if (why) {
          Notification.warning(`porter: ${why}`);
        }
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
