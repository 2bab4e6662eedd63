/**
 * The Porting side panel, a diagnostics view of the active notebook (in the manner of
 * jupyterlab-lsp's diagnostics panel): the notebook's name, its verified rewrites with
 * Apply (of its cells, and of the person's Python files its cells call into), and a
 * table of every finding of its porter results with severity, message, cell and line,
 * grouped by replacement (collapsible, with porter's counts), filtered by a query and
 * sorted by a column. Only the rows in view are built, so thousands of findings scroll
 * smoothly. A click selects the cell and puts the cursor on the line
 * and column; a finding in a Python file of the person's opens the file there. The
 * rows are `diagnostics.ts`'s, drawn by `panelrows.ts`.
 */
import { NotebookPanel } from '@jupyterlab/notebook';
import { ICodeCellModel } from '@jupyterlab/cells';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import {
  applyFileRewrite,
  fileAppliedChanged,
  IFileAccess,
  isFileApplied
} from './applyfile';
import {
  applyRewrite,
  cellSourceState,
  entryOfCell,
  sayRefused,
  sourceOffset,
  sourceStateChanged
} from './cells';
import { utf16Column } from './columns';
import {
  collectDiagnostics,
  filterDiagnostics,
  flatten,
  groupDiagnostics,
  IDiagnostic,
  IResultCell,
  ListItem,
  scrollToShow,
  sortDiagnostics,
  SortKey,
  notebookCounts,
  windowOf
} from './diagnostics';
import { fileRewrites, IFileRewrite } from './filerewrites';
import { resolveFile } from './findings';
import {
  invalidate,
  notebookCells,
  notebookOf,
  resultsChanged
} from './notebookcells';
import {
  named,
  renderDetail,
  renderFileRewrite,
  renderGroup,
  renderHead,
  renderRow,
  ROW_HEIGHT
} from './panelrows';
import { appendText, el } from './text';
import {
  ICellEntry,
  SourceState,
  sourceStateWords,
  verifiedRewrite
} from './types';

/** The shared notebook of a panel (what `notebookcells.ts` indexes). */
function sharedOf(panel: NotebookPanel): object | null {
  return (panel.content.model?.sharedModel as object | undefined) ?? null;
}

/** The code cell models of a notebook by position (null for other cells). */
function codeModels(panel: NotebookPanel): (ICodeCellModel | null)[] {
  const cells = panel.content.model?.cells;
  const out: (ICodeCellModel | null)[] = [];
  for (let i = 0; i < (cells?.length ?? 0); i++) {
    const model = cells!.get(i);
    out.push(model.type === 'code' ? (model as ICodeCellModel) : null);
  }
  return out;
}

/** A cell of the notebook with its result and where its source stands against it. */
interface IStatedCell extends IResultCell {
  state: SourceState | null;
}

/** The notebook's cells with their results and their source states; a result is stale
 * (its rows say so) wherever the cell no longer holds the source it describes. */
function resultCells(panel: NotebookPanel): IStatedCell[] {
  const shared = sharedOf(panel);
  if (!shared) {
    return [];
  }
  const models = codeModels(panel);
  return notebookCells(shared).map((cell, i) => {
    const model = models[i];
    const state = model && cell.entry ? cellSourceState(model) : null;
    return {
      ref: cell.ref,
      entry: cell.entry,
      state,
      stale: state !== null && state !== 'recorded'
    };
  });
}

/** The name a notebook is shown by: its file's name. */
function notebookName(panel: NotebookPanel): string {
  const path = panel.context.path;
  return path.slice(path.lastIndexOf('/') + 1) || panel.title.label;
}

export class PortingPanel extends Widget {
  constructor() {
    super();
    this.id = 'porter-porting-panel';
    this.title.caption = 'Porting: porter findings of this notebook';
    this.title.label = 'Porting';
    this.addClass('porter-panel');

    const header = el('div', 'porter-panel-header');
    header.append(el('h3', 'porter-panel-title', 'Porting'), this._name);
    this._filter.type = 'search';
    this._filter.placeholder = 'Filter findings';
    this._filter.title =
      'Rows that match every word: name, message, replacement, status, cell';
    this._filter.setAttribute('aria-label', 'Filter findings');
    this._filter.addEventListener('input', () => {
      this._query = this._filter.value;
      this._relist();
    });
    const toolbar = el('div', 'porter-diag-toolbar');
    toolbar.append(this._filter, this._shown);
    this._table.setAttribute('role', 'grid');
    this._table.append(this._head, this._viewport);
    this._viewport.tabIndex = 0;
    this._viewport.append(this._spacer);
    this._spacer.append(this._rowsNode);
    this._viewport.addEventListener('scroll', () => this._paintSoon());
    this._viewport.addEventListener('keydown', e => this._onKey(e));
    this._rowsNode.addEventListener('click', e => this._onClick(e));
    this._head.addEventListener('click', e => this._onSort(e));
    this._body.append(this._rewrites, toolbar, this._table, this._detail);
    this.node.append(header, this._note, this._body);

    sourceStateChanged.connect((_, model) => {
      // a rewrite applied, undone, redone; the cell edited
      const panel = this._notebook;
      if (panel && notebookOf(model) === sharedOf(panel)) {
        this._cellRefusals.clear();
        this.schedule();
      }
    });
    fileAppliedChanged.connect(() => this.schedule()); // the same, of a file
    resultsChanged.connect((_, notebook) => {
      if (this._notebook && notebook === sharedOf(this._notebook)) {
        this._cellRefusals.clear();
        this.schedule();
      }
    });
    this._render();
  }

  /** Emitted with the notebook whose porter results showed their first finding. */
  get firstFinding(): ISignal<this, NotebookPanel> {
    return this._firstFinding;
  }

  /** The notebook whose findings the panel shows (null: none active). */
  get notebook(): NotebookPanel | null {
    return this._notebook;
  }

  set notebook(panel: NotebookPanel | null) {
    if (panel === this._notebook) {
      return;
    }
    this._notebook = panel;
    this._selected = null;
    this._collapsed.clear();
    if (panel) {
      void panel.context.ready.then(() => {
        if (this._notebook === panel) {
          if (!this._connected.has(panel)) {
            this._connected.add(panel); // cells added later: their outputs too
            panel.model?.cells.changed.connect(() => this._watchAll(panel));
          }
          this._watchAll(panel);
          this.schedule();
        }
      });
    }
    this._render();
  }

  /** Opens a file (a server path) in an editor with the cursor at a line (1-based) and
   * column (characters); set by the plugin, which has the document manager. */
  openFile: ((path: string, line: number | null, col: number) => void) | null =
    null;

  /** Where Apply of a file's rewrite reads and writes; set by the plugin, which has
   * the document manager (null: file rewrites are shown without Apply). */
  fileAccess: IFileAccess | null = null;

  /** True when a finding of the notebook shown is in the file at server path `path`:
   * the panel keeps showing the notebook while that file's editor is current. */
  showsFile(path: string): boolean {
    const panel = this._notebook;
    return (
      !!panel &&
      this._rows.some(
        row =>
          row.file !== null &&
          resolveFile(panel.context.path, row.file) === path
      )
    );
  }

  /** The rows the panel holds now, in the order shown (for tests and commands). */
  get rows(): readonly IDiagnostic[] {
    return this._visible;
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
    if (panel === this._notebook) {
      this._watchAll(panel);
      this.schedule();
    }
  }

  protected onAfterShow(): void {
    this._paint(); // the viewport had no height while hidden
  }

  protected onResize(): void {
    this._paint();
  }

  /** Every code cell's outputs: a change reads the notebook's results again. */
  private _watchAll(panel: NotebookPanel): void {
    for (const model of codeModels(panel)) {
      if (model && !this._watched.has(model)) {
        this._watched.add(model);
        // emits resultsChanged: the panel (if this notebook is shown) and the marks redraw
        model.outputs.changed.connect(() => invalidate(sharedOf(panel)));
      }
    }
  }

  /** Everything again: the notebook's name, its rewrites, its rows. */
  private _render(): void {
    const panel = this._notebook;
    this._name.replaceChildren();
    this._note.replaceChildren();
    this._rewrites.replaceChildren();
    if (!panel) {
      this.node.dataset.porterNotebook = '';
      this._note.append(
        el('p', 'porter-note', 'Open a notebook to see its porter findings.')
      );
      this._body.hidden = true;
      this._rows = [];
      this._relist();
      return;
    }
    const name = notebookName(panel);
    this.node.dataset.porterNotebook = panel.context.path;
    appendText(this._name, name);
    this._name.title = panel.context.path;
    const cells = resultCells(panel);
    const results = cells.filter(c => c.entry).length;
    this.node.dataset.porterResults = String(results);
    this._body.hidden = !results;
    if (!results) {
      this._note.append(
        el(
          'p',
          'porter-note',
          'No porter results yet: run a %%port cell (after %load_ext porter_ext).'
        )
      );
    }
    this._renderRewrites(panel, cells);
    this._rows = collectDiagnostics(cells, file =>
      isFileApplied(resolveFile(panel.context.path, file))
    );
    this._counts = notebookCounts(cells.map(c => c.entry));
    if (this._rows.length && !this._announced.has(panel)) {
      this._announced.add(panel);
      this._firstFinding.emit(panel);
    }
    this._relist();
    this.node.dataset.porterUpdated = performance.now().toFixed(1);
  }

  private _renderRewrites(panel: NotebookPanel, cells: IStatedCell[]): void {
    for (const cell of cells) {
      const entry = cell.entry;
      if (!entry || !verifiedRewrite(entry)) {
        continue;
      }
      const row = el('div', 'porter-panel-item');
      row.dataset.porterCell = String(cell.ref.index);
      row.dataset.porterState = cell.state ?? '';
      const where = entry.label ?? '';
      if (cell.state === 'applied' || cell.state === 'stale') {
        row.classList.add('porter-stale');
        appendText(row, named(where, sourceStateWords(entry, cell.state)));
      } else {
        appendText(row, `${named(where, entry.rewrite?.verified_text)} `);
        const button = el(
          'button',
          'porter-apply jp-Button',
          'Apply verified rewrite'
        );
        button.title =
          'Replace the cell source with the rewrite that replays verified';
        button.addEventListener('click', () =>
          this._apply(cell.ref.index, entry)
        );
        row.appendChild(button);
      }
      const refusal = this._cellRefusals.get(cell.ref.index);
      if (refusal) {
        const why = row.appendChild(el('div', 'porter-refusal'));
        why.setAttribute('role', 'alert');
        appendText(why, `Not applied: ${refusal}`);
      }
      this._rewrites.appendChild(row);
    }
    const offers = fileRewrites(panel.context.path, cells);
    const keys = new Set(offers.map(o => o.key));
    for (const key of [...this._refusals.keys()]) {
      if (!keys.has(key)) {
        this._refusals.delete(key); // the results changed: a refusal of old ones goes
      }
    }
    for (const offer of offers) {
      const row = renderFileRewrite(offer, {
        applied: isFileApplied(offer.path),
        busy: this._busy.has(offer.key),
        refusal: this._refusals.get(offer.key) ?? null,
        apply: this.fileAccess ? () => void this._applyFile(offer) : null
      });
      this._rewrites.appendChild(row);
    }
    if (this._rewrites.childElementCount) {
      this._rewrites.prepend(el('h4', 'porter-title', 'Verified rewrites'));
    }
  }

  /** Filter, sort and group the rows into the list, then draw the rows in view. */
  private _relist(): void {
    const shown = filterDiagnostics(this._rows, this._query);
    const sorted = sortDiagnostics(shown, this._sort, this._ascending);
    const groups = groupDiagnostics(sorted);
    this._items = flatten(groups, this._collapsed);
    this._visible = ([] as IDiagnostic[]).concat(...groups.map(g => g.rows));
    const total = this._rows.length;
    this._shown.textContent =
      shown.length === total
        ? this._counts
        : `${this._counts} (${shown.length} of ${total} rows shown)`;
    this._head.replaceChildren(
      ...renderHead(this._sort, this._ascending).childNodes
    );
    this._table.hidden = !total;
    this._showSelection();
  }

  private _paintSoon(): void {
    if (!this._frame) {
      this._frame = window.requestAnimationFrame(() => {
        this._frame = 0;
        this._paint();
      });
    }
  }

  /** Build the rows in view (and a few more), nothing else. */
  private _paint(): void {
    const viewport = this._viewport.clientHeight || 10 * ROW_HEIGHT;
    const w = windowOf(
      this._items.length,
      ROW_HEIGHT,
      this._viewport.scrollTop,
      viewport
    );
    this._spacer.style.height = `${w.height}px`;
    this._rowsNode.style.transform = `translateY(${w.offset}px)`;
    const nodes: HTMLElement[] = [];
    for (let i = w.start; i < w.end; i++) {
      const item = this._items[i];
      const node =
        item.kind === 'group'
          ? renderGroup(item.group, item.collapsed)
          : renderRow(item.row, item.row.id === this._selected);
      node.dataset.porterItem = String(i);
      nodes.push(node);
    }
    this._rowsNode.replaceChildren(...nodes);
  }

  private _onClick(event: MouseEvent): void {
    const target = (event.target as Element).closest<HTMLElement>(
      '[data-porter-item]'
    );
    if (target) {
      this._activate(Number(target.dataset.porterItem));
    }
  }

  /** A group's head opens or closes it; a row is selected and revealed. */
  private _activate(index: number): void {
    const item = this._items[index];
    if (!item) {
      return;
    }
    if (item.kind === 'group') {
      const key = item.group.key;
      if (this._collapsed.has(key)) {
        this._collapsed.delete(key);
      } else {
        this._collapsed.add(key);
      }
      this._relist();
      return;
    }
    // the jump first: the panel's own selection is drawn while the notebook scrolls
    const row = item.row;
    if (row.file !== null) {
      const panel = this._notebook;
      if (panel && this.openFile) {
        this.openFile(
          resolveFile(panel.context.path, row.file),
          row.line,
          row.col
        );
      }
    } else {
      this.reveal(row.cell, row.line, row.col);
    }
    this._select(index);
  }

  /** Select a row: it is drawn selected, its detail under the list, on the next frame
   * (a click's jump to the notebook goes first). */
  private _select(index: number): void {
    const item = this._items[index];
    this._selected = item?.kind === 'row' ? item.row.id : this._selected;
    if (!this._selectFrame) {
      this._selectFrame = window.requestAnimationFrame(() => {
        this._selectFrame = 0;
        const at = this._items.findIndex(
          it => it.kind === 'row' && it.row.id === this._selected
        );
        if (at !== -1) {
          this._viewport.scrollTop = scrollToShow(
            at,
            ROW_HEIGHT,
            this._viewport.scrollTop,
            this._viewport.clientHeight
          );
        }
        this._showSelection(); // the list is the same: no filter, sort or grouping
      });
    }
  }

  /** The selected row's detail under the list, and the rows in view drawn again. */
  private _showSelection(): void {
    const selected = this._rows.find(r => r.id === this._selected);
    this._detail.replaceChildren(...(selected ? [renderDetail(selected)] : []));
    this._paint();
  }

  /** Up and down move through the list; Enter or Space opens the selected item. */
  private _onKey(event: KeyboardEvent): void {
    const at = this._items.findIndex(
      item => item.kind === 'row' && item.row.id === this._selected
    );
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      const step = event.key === 'ArrowDown' ? 1 : -1;
      let next = at + step;
      while (next >= 0 && next < this._items.length) {
        if (this._items[next].kind === 'row') {
          this._select(next);
          break;
        }
        next += step;
      }
      event.preventDefault();
    } else if ((event.key === 'Enter' || event.key === ' ') && at !== -1) {
      this._activate(at);
      event.preventDefault();
    }
  }

  private _onSort(event: MouseEvent): void {
    const button = (event.target as Element).closest<HTMLElement>(
      '[data-porter-sort]'
    );
    const key = button?.dataset.porterSort as SortKey | undefined;
    if (!key) {
      return;
    }
    this._ascending = key === this._sort ? !this._ascending : true;
    this._sort = key;
    this._relist();
  }

  /**
   * Select the cell and put the cursor on the recorded line and column: the notebook
   * moves to the cell with its own `scrollToItem` first (measured while nothing else
   * has changed the page), then the cell is made active and the cursor set as soon as
   * its editor is ready (a cell of a windowed notebook gets one once it is in view),
   * without a second scroll; a line below the fold of a tall cell is revealed on the
   * next frame. A later jump supersedes an earlier one still under way.
   */
  reveal(cellIndex: number, line: number | null, col: number): void {
    const notebook = this._notebook?.content;
    const cell = notebook?.widgets[cellIndex];
    if (!notebook || !cell) {
      return;
    }
    const jump = ++this._jumps;
    const current = () => jump === this._jumps && !cell.isDisposed;
    const entry =
      cell.model.type === 'code'
        ? entryOfCell(cell.model as ICodeCellModel)
        : null;
    const offset = entry
      ? sourceOffset(cell.model.sharedModel.getSource(), entry.source).lines
      : 0;
    void notebook
      .scrollToItem(cellIndex)
      .catch(() => undefined)
      .then(() => {
        if (current()) {
          notebook.activeCellIndex = cellIndex;
        }
        return cell.ready;
      })
      .then(() => {
        const editor = cell.editor;
        if (line === null || !editor || !current()) {
          return;
        }
        // a line past the end (the cell changed since): the cursor on its last line
        const last = editor.lineCount - 1;
        const at = Math.max(0, Math.min(line - 1 + offset, last));
        // col counts characters; the editor's column, UTF-16 units of the line
        const position = {
          line: at,
          column: utf16Column(editor.getLine(at) ?? '', col)
        };
        editor.setCursorPosition(position, { scroll: false });
        editor.focus(); // the notebook goes to edit mode as its editor takes the focus
        notebook.mode = 'edit';
        requestAnimationFrame(() => {
          const shown = editor.getCoordinateForPosition(position);
          const view = notebook.node.getBoundingClientRect();
          if (!shown || shown.top < view.top || shown.bottom > view.bottom) {
            editor.revealPosition(position);
          }
        });
      });
  }

  /** Apply a cell's rewrite from its row; a refusal is said in a toast and in the row. */
  private _apply(cellIndex: number, entry: ICellEntry): void {
    const model = this._notebook?.content.model?.cells.get(cellIndex);
    if (model?.type === 'code') {
      const why = applyRewrite(model as ICodeCellModel, entry);
      if (why) {
        this._cellRefusals.set(cellIndex, why);
        sayRefused(why);
      }
    }
    this.schedule();
  }

  /** Write a file's verified rewrite; a refusal is said in its row and notified. */
  private async _applyFile(offer: IFileRewrite): Promise<void> {
    const access = this.fileAccess;
    if (!access || this._busy.has(offer.key)) {
      return;
    }
    this._busy.add(offer.key);
    this._refusals.delete(offer.key);
    this.schedule();
    let why: string | null;
    try {
      why = await applyFileRewrite(offer, access);
    } catch (reason) {
      why = `${offer.file} was not written: ${reason}`;
    } finally {
      this._busy.delete(offer.key);
    }
    if (why) {
      this._refusals.set(offer.key, why);
      sayRefused(why);
    }
    this.schedule();
  }

  private _notebook: NotebookPanel | null = null;
  private _busy = new Set<string>();
  private _refusals = new Map<string, string>();
  /** Why the last Apply of a cell's rewrite (by notebook position) refused, until the
   * cell or its result changes. */
  private _cellRefusals = new Map<number, string>();
  private _pending = 0;
  private _frame = 0;
  private _selectFrame = 0;
  /** Jumps to a cell started (`reveal`): only the latest one goes on. */
  private _jumps = 0;
  private _watched = new WeakSet<ICodeCellModel>();
  private _connected = new WeakSet<NotebookPanel>();
  private _announced = new WeakSet<NotebookPanel>();
  private _firstFinding = new Signal<this, NotebookPanel>(this);
  private _rows: IDiagnostic[] = [];
  private _counts = '';
  private _visible: IDiagnostic[] = [];
  private _items: ListItem[] = [];
  private _query = '';
  private _sort: SortKey = 'place';
  private _ascending = true;
  private _collapsed = new Set<string>();
  private _selected: string | null = null;
  private _name = el('span', 'porter-panel-notebook');
  private _note = el('div', 'porter-panel-note');
  private _body = el('div', 'porter-panel-body');
  private _rewrites = el('div', 'porter-panel-rewrites');
  private _detail = el('div', 'porter-panel-details');
  private _filter = el('input', 'porter-diag-filter jp-mod-styled');
  private _shown = el('span', 'porter-diag-shown');
  private _table = el('div', 'porter-diag-table');
  private _head = el('div', 'porter-diag-head');
  private _viewport = el('div', 'porter-diag-viewport');
  private _spacer = el('div', 'porter-diag-spacer');
  private _rowsNode = el('div', 'porter-diag-rows');
}
