/**
 * Each open notebook tells its kernel the order of its cells (`cellorder.ts`): a link
 * per notebook, made again when the notebook's kernel changes, told when cells move and
 * when a cell is about to run or has run.
 */
import {
  INotebookTracker,
  Notebook,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';

import { CellOrderLink } from './cellorder';

const links = new WeakMap<Notebook, CellOrderLink>();

/** The ids of the notebook's cells, in order (JupyterLab's `cellId`s). */
function cellIds(notebook: Notebook): string[] {
  const cells = notebook.model?.cells;
  const ids: string[] = [];
  for (let i = 0; i < (cells?.length ?? 0); i++) {
    ids.push(cells!.get(i).id);
  }
  return ids;
}

/** Link every notebook of `tracker`, now and as they open, to its kernel. */
export function tellCellOrder(tracker: INotebookTracker): void {
  const follow = (panel: NotebookPanel) => {
    const notebook = panel.content;
    let kernel: unknown = null;
    const connect = () => {
      const now = panel.sessionContext.session?.kernel ?? null;
      if (now === kernel) {
        return;
      }
      kernel = now;
      links.get(notebook)?.dispose();
      links.delete(notebook);
      if (now && now.handleComms) {
        const link = new CellOrderLink(now, () => cellIds(notebook));
        links.set(notebook, link);
        link.adopt().catch(reason => console.warn('porter: comm info', reason));
      }
    };
    panel.sessionContext.kernelChanged.connect(connect);
    void panel.sessionContext.ready.then(connect);
    void panel.context.ready.then(() => {
      notebook.model?.cells.changed.connect(() =>
        links.get(notebook)?.changed()
      );
    });
    panel.disposed.connect(() => links.get(notebook)?.dispose());
  };
  tracker.widgetAdded.connect((_, panel) => follow(panel));
  tracker.forEach(follow);
  NotebookActions.executionScheduled.connect((_, { notebook, cell }) => {
    links.get(notebook)?.beforeRun(cell.model.sharedModel.getSource());
  });
  NotebookActions.executed.connect((_, { notebook, cell }) => {
    links.get(notebook)?.afterRun(cell.model.sharedModel.getSource());
  });
}
