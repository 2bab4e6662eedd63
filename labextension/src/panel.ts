/**
 * The Porting side panel: every finding of every cell's porter result in the active
 * notebook, kept up to date as cells run. Non-standard calls are grouped by their
 * replacement with counts; device findings, replay failures and mismatches follow.
 * Clicking a finding selects its cell and puts the cursor on its line and column.
 */
import { NotebookPanel } from '@jupyterlab/notebook';
import { IObservableList } from '@jupyterlab/observables';
import { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { Notification } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import {
  applyRewrite,
  entryOfCell,
  isStale,
  sourceOffset,
  staleChanged
} from './cells';
import { utf16Column } from './columns';
import {
  callPlace,
  cellLabel,
  findingPlace,
  ICellRef,
  IMarkPlace,
  originCell
} from './positions';
import { appendText, el, num } from './text';
import { ICellEntry, isFinding, isMuted, verifiedRewrite } from './types';

interface ISite {
  cell: number;
  line: number | null;
  col: number;
  label: string;
  /** The cell's rewrite was applied: this finding is about source no longer there. */
  stale: boolean;
}

interface ISections {
  groups: Map<string, { sites: ISite[]; count: number }>;
  devices: ISite[];
  failures: ISite[];
  mismatches: ISite[];
  rewrites: { cell: number; entry: ICellEntry; stale: boolean }[];
  results: number;
}

/**
 * A finding's row: in the cell where its code is written (`place.origin`, found among
 * `refs`), naming the calling cell there; in the calling cell at `line` otherwise.
 */
function site(
  refs: ICellRef[],
  calling: number,
  where: string,
  place: IMarkPlace,
  line: number,
  text: string,
  stale: boolean
): ISite {
  const origin = place.origin;
  const at = origin ? originCell(origin, refs) : -1;
  if (origin && at !== -1) {
    const writer = cellLabel(at, refs[at].executionCount);
    return {
      cell: at,
      line: place.line,
      col: place.col,
      label: `${writer}, line ${place.line}: ${text} (called from ${where}, line ${line})`,
      stale
    };
  }
  const from = origin
    ? ` (in code from ${cellLabel(origin.index, origin.execution_count)}, line ${origin.line})`
    : '';
  const col = origin ? 0 : place.col;
  return {
    cell: calling,
    line,
    col,
    label: `${where}, line ${line}: ${text}${from}`,
    stale
  };
}

function collect(panel: NotebookPanel): ISections {
  const s: ISections = {
    groups: new Map(),
    devices: [],
    failures: [],
    mismatches: [],
    rewrites: [],
    results: 0
  };
  const cells = panel.content.model?.cells;
  if (!cells) {
    return s;
  }
  const refs: ICellRef[] = [];
  for (let i = 0; i < cells.length; i++) {
    const model = cells.get(i);
    const count =
      model.type === 'code' ? (model as ICodeCellModel).executionCount : null;
    refs.push({ index: i, executionCount: count ?? null, id: model.id });
  }
  for (let i = 0; i < cells.length; i++) {
    const model = cells.get(i);
    if (model.type !== 'code') {
      continue;
    }
    const entry = entryOfCell(model as ICodeCellModel);
    if (!entry) {
      continue;
    }
    s.results++;
    const stale = isStale(model as ICodeCellModel);
    const where = cellLabel(i, entry.execution_count);
    for (const call of entry.calls ?? []) {
      if (!isFinding(call) || isMuted(call)) {
        continue;
      }
      const key =
        call.suggestion ??
        call.standard_name ??
        `${call.status}, no standard replacement`;
      const group = s.groups.get(key) ?? { sites: [], count: 0 };
      group.count += call.count ?? 1;
      group.sites.push(
        site(refs, i, where, callPlace(call), call.line, `${call.name}`, stale)
      );
      s.groups.set(key, group);
    }
    for (const f of entry.device_findings ?? []) {
      const place = findingPlace(entry, f);
      const text = `${f.name} [${f.kind}${f.backend ? ` on ${f.backend}` : ''}] ${f.message ?? ''}`;
      s.devices.push(
        place
          ? site(refs, i, where, place, f.line ?? 0, text, stale)
          : {
              cell: i,
              line: null,
              col: 0,
              label: `${where}, output: ${text}`,
              stale
            }
      );
    }
    for (const r of entry.replays ?? []) {
      if (r.status === 'error' || r.status === 'timeout') {
        const why = r.error
          ? `${r.error.type}: ${r.error.message}`
          : (r.reason ?? '');
        s.failures.push({
          cell: i,
          line: r.error?.line ?? null,
          col: 0,
          label: `${where}, ${r.backend}: ${r.status} ${why}`,
          stale
        });
      }
      for (const o of r.outputs ?? []) {
        if (o.within_tolerance === false) {
          s.mismatches.push({
            cell: i,
            line: null,
            col: 0,
            label: `${where}, ${r.backend}: ${o.name} differs (max abs err ${num(o.max_abs_err)}, ${o.mismatched ?? '?'} mismatched)`,
            stale
          });
        }
      }
    }
    if (verifiedRewrite(entry)) {
      s.rewrites.push({ cell: i, entry, stale });
    }
  }
  return s;
}

export class PortingPanel extends Widget {
  constructor() {
    super();
    this.id = 'porter-porting-panel';
    this.title.caption = 'Porting: porter findings of this notebook';
    this.title.label = 'Porting';
    this.addClass('porter-panel');
    this.node.tabIndex = 0;
    staleChanged.connect(() => this.schedule()); // a rewrite applied, or undone
    this._render();
  }

  /** The notebook whose findings the panel shows (null: none active). */
  get notebook(): NotebookPanel | null {
    return this._notebook;
  }

  set notebook(panel: NotebookPanel | null) {
    if (panel === this._notebook) {
      return;
    }
    if (this._notebook) {
      this._notebook.model?.cells.changed.disconnect(this._onCells, this);
    }
    this._notebook = panel;
    if (panel) {
      void panel.context.ready.then(() => {
        if (this._notebook === panel) {
          panel.model?.cells.changed.connect(this._onCells, this);
          this._watchAll();
          this.schedule();
        }
      });
    }
    this.schedule();
  }

  /** Redraw soon (once, however many changes arrive in one turn). */
  schedule(): void {
    if (!this._pending) {
      this._pending = window.setTimeout(() => {
        this._pending = 0;
        this._render();
      }, 0);
    }
  }

  /** Called on `NotebookActions.executed`: a cell finished. */
  onExecuted(panel: NotebookPanel): void {
    if (panel.content === this._notebook?.content) {
      this._watchAll();
      this.schedule();
    }
  }

  private _onCells(
    _: unknown,
    change: IObservableList.IChangedArgs<ICellModel>
  ): void {
    this._watchAll();
    this.schedule();
  }

  private _watchAll(): void {
    const cells = this._notebook?.model?.cells;
    if (!cells) {
      return;
    }
    for (let i = 0; i < cells.length; i++) {
      const model = cells.get(i);
      if (model.type === 'code' && !this._watched.has(model)) {
        this._watched.add(model);
        (model as ICodeCellModel).outputs.changed.connect(() =>
          this.schedule()
        );
      }
    }
  }

  private _render(): void {
    const node = this.node;
    node.replaceChildren();
    node.appendChild(el('h3', 'porter-panel-title', 'Porting'));
    const panel = this._notebook;
    if (!panel) {
      node.appendChild(
        el('p', 'porter-note', 'Open a notebook to see its porter findings.')
      );
      return;
    }
    const s = collect(panel);
    node.dataset.porterResults = String(s.results);
    if (!s.results) {
      node.appendChild(
        el(
          'p',
          'porter-note',
          'No porter results yet: run a %%port cell (after %load_ext porter_ext).'
        )
      );
    }
    if (s.rewrites.length) {
      const section = this._section('Verified rewrites', s.rewrites.length);
      for (const r of s.rewrites) {
        const row = el('div', 'porter-panel-item');
        if (r.stale) {
          row.classList.add('porter-stale');
          appendText(
            row,
            `${cellLabel(r.cell, r.entry.execution_count)}: rewrite applied; run the cell to check it again`
          );
          section.appendChild(row);
          continue;
        }
        appendText(
          row,
          `${cellLabel(r.cell, r.entry.execution_count)}: verified on ${(r.entry.rewrite?.verified_on ?? []).join(', ') || 'its replays'} `
        );
        const button = el(
          'button',
          'porter-apply jp-Button',
          'Apply verified rewrite'
        );
        button.title =
          'Replace the cell source with the rewrite that replays verified';
        button.addEventListener('click', () => this._apply(r.cell, r.entry));
        row.appendChild(button);
        section.appendChild(row);
      }
    }
    let total = 0;
    s.groups.forEach(g => (total += g.count));
    const calls = this._section('Non-standard calls', total);
    if (!s.groups.size) {
      calls.appendChild(el('p', 'porter-note', 'None.'));
    }
    [...s.groups.entries()]
      .sort((a, b) => b[1].count - a[1].count)
      .forEach(([key, group]) => {
        const box = el('div', 'porter-panel-group');
        const head = el('div', 'porter-panel-group-head');
        head.appendChild(el('code', 'porter-code', key));
        head.appendChild(el('span', 'porter-count', ` ×${group.count}`));
        box.appendChild(head);
        group.sites.forEach(site => box.appendChild(this._item(site)));
        calls.appendChild(box);
      });
    this._list('Device findings', s.devices);
    this._list('Replay failures', s.failures);
    this._list('Mismatches', s.mismatches);
    node.dataset.porterUpdated = performance.now().toFixed(1);
  }

  private _section(title: string, count: number): HTMLElement {
    const section = el('section', 'porter-panel-section');
    section.appendChild(el('h4', 'porter-title', `${title} (${count})`));
    this.node.appendChild(section);
    return section;
  }

  private _list(title: string, sites: ISite[]): void {
    const section = this._section(title, sites.length);
    if (!sites.length) {
      section.appendChild(el('p', 'porter-note', 'None.'));
    }
    sites.forEach(site => section.appendChild(this._item(site)));
  }

  private _item(site: ISite): HTMLElement {
    const item = el('div', 'porter-panel-item porter-clickable', site.label);
    item.title = 'Go to this line';
    if (site.stale) {
      item.classList.add('porter-stale');
      item.prepend(el('span', 'porter-stale-tag', 'stale '));
      item.title = 'The rewrite was applied: run the cell to see its findings';
    }
    item.addEventListener('click', () =>
      this.reveal(site.cell, site.line, site.col)
    );
    return item;
  }

  /** Select the cell and put the cursor on the recorded line and column. */
  reveal(cellIndex: number, line: number | null, col: number): void {
    const panel = this._notebook;
    if (!panel) {
      return;
    }
    const notebook = panel.content;
    notebook.activeCellIndex = cellIndex;
    const cell = notebook.activeCell;
    if (!cell) {
      return;
    }
    void notebook.scrollToItem(cellIndex).catch(() => undefined);
    if (line === null) {
      return;
    }
    const entry =
      cell.model.type === 'code'
        ? entryOfCell(cell.model as ICodeCellModel)
        : null;
    const offset = entry
      ? sourceOffset(cell.model.sharedModel.getSource(), entry.source).lines
      : 0;
    notebook.mode = 'edit';
    void cell.ready.then(() => {
      const editor = cell.editor;
      if (!editor) {
        return;
      }
      // a line past the end (the cell changed since) puts the cursor on its last line
      const at = Math.max(0, Math.min(line - 1 + offset, editor.lineCount - 1));
      // col counts characters; the editor's column, UTF-16 units of the line
      const column = utf16Column(editor.getLine(at) ?? '', col);
      editor.setCursorPosition({ line: at, column });
      editor.focus();
    });
  }

  private _apply(cellIndex: number, entry: ICellEntry): void {
    const model = this._notebook?.content.model?.cells.get(cellIndex);
    if (model?.type === 'code') {
      const why = applyRewrite(model as ICodeCellModel, entry);
      if (why) {
        Notification.warning(`porter: ${why}`);
      }
    }
    this.schedule();
  }

  private _notebook: NotebookPanel | null = null;
  private _pending = 0;
  private _watched = new WeakSet<ICellModel>();
}
