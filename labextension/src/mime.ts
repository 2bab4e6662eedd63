/**
 * porter's MIME renderer as a JupyterLab mime extension: registered with the
 * application's rendermime, so it renders porter's outputs in every front end that
 * loads JupyterLab extensions (JupyterLab, Notebook 7), in output views and in
 * notebooks opened without a kernel: one view of a cell, live and after a reload.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { RANK, rendererFactory } from './renderer';

const extension: IRenderMime.IExtension = {
  id: 'porter-ext:mime',
  description: "porter's view of a cell result and of a whole report",
  rendererFactory,
  rank: RANK,
  dataType: 'json'
};

export default extension;
