/**
 * The renderer of porter's MIME types: porter's one view of a cell result (and of a
 * report), drawn from the JSON alone, so that a `%%port` output shows the same while
 * the kernel runs, after a kernel restart and in a notebook reopened later.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { Message } from '@lumino/messaging';

import { OUTPUT_SHOWN_EVENT, renderCell, renderReport } from './render';
import { el } from './text';
import { asCellEntry, CELL_MIME, IReport, REPORT_MIME } from './types';

export const MIME_TYPES = [CELL_MIME, REPORT_MIME];

/** Before `text/html` and `text/markdown`, which porter's outputs carry beside its JSON
 * for front ends without this extension. */
export const RANK = -20;

/**
 * Draw porter's view of `data` (a cell entry or a report) into `node`; the times it
 * took go on the node (`data-porter-render-ms`: built, `data-porter-shown-ms`: painted).
 */
export function drawInto(
  node: HTMLElement,
  mimeType: string,
  data: unknown
): number {
  const start = performance.now();
  node.replaceChildren();
  if (mimeType === REPORT_MIME) {
    node.appendChild(renderReport((data ?? {}) as IReport));
  } else {
    const entry = asCellEntry(data);
    node.appendChild(
      entry
        ? renderCell(entry)
        : el('div', 'porter-error', 'porter: this output holds no cell result')
    );
  }
  const ms = performance.now() - start;
  node.dataset.porterRenderMs = ms.toFixed(1);
  // the next frame comes after style, layout and paint of what was just built
  requestAnimationFrame(() => {
    node.dataset.porterShownMs = (performance.now() - start).toFixed(1);
  });
  return ms;
}

/** porter's view: no kernel needed, only the JSON. */
export class PorterRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass('porter-output');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    drawInto(this.node, this._mimeType, model.data[this._mimeType]);
    this._shown();
    return Promise.resolve();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._shown();
  }

  /** Tell the notebook (through the page) that this output shows: it draws the cell's
   * source state on its Apply buttons. */
  private _shown(): void {
    if (this.isAttached) {
      this.node.dispatchEvent(
        new CustomEvent(OUTPUT_SHOWN_EVENT, { bubbles: true })
      );
    }
  }

  private _mimeType: string;
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true, // everything is inserted as text
  mimeTypes: MIME_TYPES,
  createRenderer: options => new PorterRenderer(options)
};
