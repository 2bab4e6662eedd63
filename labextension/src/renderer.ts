/**
 * The renderer of porter's MIME types. `PorterRenderer` draws porter's own view from
 * the JSON; `CellOutputRenderer` (used inside notebooks) shows the ipywidgets widget
 * instead while its model is alive and falls back to porter's view where it is gone
 * (after a kernel restart, or a notebook reopened later), instead of "model not found".
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { ISignal, Signal } from '@lumino/signaling';
import { Panel, Widget } from '@lumino/widgets';

import { Message } from '@lumino/messaging';

import { OUTPUT_SHOWN_EVENT, renderCell, renderReport } from './render';
import { el } from './text';
import {
  asCellEntry,
  CELL_MIME,
  IReport,
  REPORT_MIME,
  WIDGET_MIME
} from './types';

export const MIME_TYPES = [CELL_MIME, REPORT_MIME];

/**
 * Below ipywidgets' -10: porter's output carries both types and porter's renderer must
 * be the one asked, so that it can hand over to the widget only while the widget works.
 */
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

/** porter's own view: no kernel, no widget, only the JSON. */
export class PorterRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass('porter-output');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    drawInto(this.node, this._mimeType, model.data[this._mimeType]);
    return Promise.resolve();
  }

  private _mimeType: string;
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true, // everything is inserted as text
  mimeTypes: MIME_TYPES,
  createRenderer: options => new PorterRenderer(options)
};

/**
 * Which widget models of one notebook can no longer show: every model seen before a
 * kernel restart (or a change of kernel) is dead, even where ipywidgets still draws
 * its old view. Shared by the notebook's porter outputs.
 */
export class WidgetLiveness {
  constructor(session: ISessionContext) {
    session.statusChanged.connect((_, status) => {
      if (
        status === 'restarting' ||
        status === 'autorestarting' ||
        status === 'dead'
      ) {
        this._bury();
      }
    });
    session.kernelChanged.connect(() => this._bury());
  }

  /** Emitted when models die. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Note a model shown now; false when it died already. */
  see(modelId: string): boolean {
    if (this._dead.has(modelId)) {
      return false;
    }
    this._seen.add(modelId);
    return true;
  }

  isDead(modelId: string): boolean {
    return this._dead.has(modelId);
  }

  private _bury(): void {
    this._seen.forEach(id => this._dead.add(id));
    this._seen.clear();
    this._changed.emit();
  }

  private _seen = new Set<string>();
  private _dead = new Set<string>();
  private _changed = new Signal<this, void>(this);
}

/** How long porter waits for a live widget before it shows its own view meanwhile. */
const WIDGET_WAIT_MS = 1000;

/** Where porter's output shows the widget or porter's view, whichever works now. */
export class CellOutputRenderer extends Panel implements IRenderMime.IRenderer {
  constructor(
    options: IRenderMime.IRendererOptions,
    widgetFactory: () => IRenderMime.IRendererFactory | undefined,
    liveness: WidgetLiveness | null
  ) {
    super();
    this._options = options;
    this._widgetFactory = widgetFactory;
    this._liveness = liveness;
    liveness?.changed.connect(this._pick, this);
    this.addClass('porter-output');
    this._own = new Widget();
    this._own.addClass('porter-own-view');
    this.addWidget(this._own);
  }

  /** 'widget' while the ipywidgets view shows, 'porter' while porter's view does. */
  get showing(): 'widget' | 'porter' {
    return this._own.isHidden ? 'widget' : 'porter';
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const mimeType = this._options.mimeType;
    this._observer?.disconnect();
    this._inner?.dispose();
    this._inner = null;
    drawInto(this._own.node, mimeType, model.data[mimeType]);
    const view = model.data[WIDGET_MIME] as { model_id?: string } | undefined;
    this._modelId = view?.model_id ?? null;
    const factory = this._widgetFactory();
    const alive =
      !!this._modelId && (this._liveness?.see(this._modelId) ?? true);
    if (mimeType !== CELL_MIME || !alive || !model.trusted || !factory) {
      this._pick();
      return;
    }
    const inner = factory.createRenderer({
      ...this._options,
      mimeType: WIDGET_MIME
    });
    this._inner = inner;
    inner.hide();
    this._own.hide(); // for a moment: a live widget usually shows within milliseconds
    this.insertWidget(0, inner);
    this._observer = new MutationObserver(() => this._pick());
    this._observer.observe(inner.node, { childList: true });
    const rendered = inner.renderModel(model).catch(error => {
      console.warn(
        'porter: the widget did not render, showing porter view',
        error
      );
    });
    await Promise.race([
      rendered,
      new Promise(r => setTimeout(r, WIDGET_WAIT_MS))
    ]);
    if (this._inner === inner) {
      this._pick();
    }
  }

  /** The widget when it holds a live view (ipywidgets adds it as a child), else porter's. */
  private _pick(): void {
    const inner = this._inner as
      (Widget & { widgets?: readonly Widget[] }) | null;
    const dead = !!this._modelId && !!this._liveness?.isDead(this._modelId);
    const live =
      !dead && !!inner && !inner.isDisposed && (inner.widgets?.length ?? 0) > 0;
    if (live) {
      inner!.show();
      this._own.hide();
    } else {
      inner?.hide();
      this._own.show();
    }
    this.node.dataset.porterShowing = this.showing;
    this._shown();
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

  dispose(): void {
    this._observer?.disconnect();
    this._liveness?.changed.disconnect(this._pick, this);
    super.dispose();
  }

  private _options: IRenderMime.IRendererOptions;
  private _widgetFactory: () => IRenderMime.IRendererFactory | undefined;
  private _liveness: WidgetLiveness | null;
  private _own: Widget;
  private _inner: (IRenderMime.IRenderer & Widget) | null = null;
  private _observer: MutationObserver | null = null;
  private _modelId: string | null = null;
}
