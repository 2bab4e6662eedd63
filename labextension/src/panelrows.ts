/**
 * The Porting panel's rows as DOM: a finding's row (severity, message, cell, line), a
 * group's head (its replacement and count), the table's sortable head, the detail
 * of a selected finding, and a verified rewrite of the person's file with its Apply.
 * Every sentence is the report's (a row's place and caller, a file verdict's words), put
 * on the page as text (`text.ts`); rows have one fixed height so that the list can be
 * windowed.
 */
import { IDiagnostic, IGroup, rowTitle, SortKey } from './diagnostics';
import { IFileRewrite } from './filerewrites';
import { Severity } from './positions';
import { appendText, el, visibleText } from './text';

/** Height of every row of the list, in pixels (the stylesheet uses the same). */
export const ROW_HEIGHT = 22;

/** The glyph of a severity in its narrow column (the severity and the row's kind in
 * porter's words, `severity_text`, in its title). */
const SEVERITY_GLYPHS: Record<Severity, string> = {
  error: '✖',
  warning: '▲',
  info: 'ℹ'
};

/** The table's columns: their heading (a short label in a narrow column), what
 * clicking it sorts by. */
export const COLUMNS: {
  title: string;
  label: string;
  sort: SortKey;
  className: string;
}[] = [
  {
    title: 'Severity',
    label: '!',
    sort: 'severity',
    className: 'porter-diag-sev'
  },
  {
    title: 'Message',
    label: 'Message',
    sort: 'message',
    className: 'porter-diag-msg'
  },
  {
    title: 'Cell',
    label: 'Cell',
    sort: 'place',
    className: 'porter-diag-cell'
  },
  { title: 'Line', label: 'Line', sort: 'place', className: 'porter-diag-line' }
];

/** A thing's name (a cell's label, a file), then porter's words about it after a colon;
 * the name alone where results older than those words have none. */
export function named(name: string, words: string | null | undefined): string {
  return words ? `${name}: ${words}` : name;
}

/** The head of the table: each column a button that sorts by it. */
export function renderHead(sort: SortKey, ascending: boolean): HTMLElement {
  const head = el('div', 'porter-diag-head');
  head.setAttribute('role', 'row');
  const done = new Set<SortKey>();
  for (const column of COLUMNS) {
    const cell = el(
      'button',
      `porter-diag-th ${column.className}`,
      column.label
    );
    cell.type = 'button';
    cell.setAttribute('role', 'columnheader');
    cell.setAttribute('aria-label', column.title);
    cell.dataset.porterSort = column.sort;
    cell.title = `${column.title}: sort by ${column.sort === 'place' ? 'cell and line' : column.sort}`;
    if (column.sort === sort && !done.has(sort)) {
      cell.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
    }
    done.add(column.sort);
    head.appendChild(cell);
  }
  return head;
}

/** A finding's row: clicking it goes to the finding (the panel listens). */
export function renderRow(row: IDiagnostic, selected: boolean): HTMLElement {
  const item = el(
    'div',
    `porter-diag-row porter-clickable porter-sev-${row.severity}`
  );
  item.setAttribute('role', 'row');
  item.style.height = `${ROW_HEIGHT}px`;
  item.dataset.porterRow = row.id;
  item.dataset.porterCell = String(row.cell);
  if (row.file !== null) {
    item.dataset.porterFile = row.file;
  }
  item.dataset.porterLine = row.line === null ? '' : String(row.line);
  item.dataset.porterCol = String(row.col);
  item.dataset.porterStatus = row.status;
  item.title = visibleText(rowTitle(row));
  if (selected) {
    item.classList.add('porter-selected');
    item.setAttribute('aria-selected', 'true');
  }
  const sev = el('span', 'porter-diag-sev', SEVERITY_GLYPHS[row.severity]);
  sev.title = row.severityText;
  sev.setAttribute('aria-label', row.kindText);
  sev.setAttribute('role', 'gridcell');
  const msg = el('span', 'porter-diag-msg');
  msg.setAttribute('role', 'gridcell');
  if (row.stale) {
    item.classList.add('porter-stale');
    msg.appendChild(el('span', 'porter-stale-tag', 'stale'));
  }
  if (row.file !== null) {
    // shown in a file: the row says where (the Cell column names the calling cell)
    msg.appendChild(el('span', 'porter-diag-place', `${row.place}: `));
  }
  appendText(msg, row.message);
  if (row.calledFromText) {
    msg.appendChild(el('span', 'porter-diag-from', ` (${row.calledFromText})`));
  }
  // the cell's position in the column (narrow), its full label in the title
  // the cell's position as JupyterLab's status bar counts it (from 1)
  const cell = el('span', 'porter-diag-cell', row.cell + 1);
  cell.title = visibleText(
    row.file === null ? row.cellLabel : (row.calledFromText ?? '')
  );
  cell.setAttribute('role', 'gridcell');
  const line = el(
    'span',
    'porter-diag-line',
    row.shownLine === null ? '—' : row.shownLine
  );
  line.setAttribute('role', 'gridcell');
  item.append(sev, msg, cell, line);
  return item;
}

/** A group's head: its replacement (or its file) and porter's count of the calls in it. */
export function renderGroup(group: IGroup, collapsed: boolean): HTMLElement {
  const head = el(
    'div',
    `porter-diag-group porter-clickable porter-sev-${group.severity}`
  );
  if (group.file !== null) {
    head.classList.add('porter-diag-group-file');
    head.dataset.porterFile = group.file;
  }
  head.setAttribute('role', 'row');
  head.style.height = `${ROW_HEIGHT}px`;
  head.dataset.porterGroup = group.key;
  head.setAttribute('aria-expanded', collapsed ? 'false' : 'true');
  head.title = collapsed ? 'Show these findings' : 'Hide these findings';
  head.appendChild(el('span', 'porter-caret'));
  head.appendChild(el('code', 'porter-code', group.label));
  head.appendChild(el('span', 'porter-count', ` ×${group.count}`));
  return head;
}

/** What the panel shows under the list for the selected finding: its full title and,
 * for an exception, its raw text in a collapsible block. */
export function renderDetail(row: IDiagnostic): HTMLElement {
  const box = el('div', 'porter-panel-detail');
  box.appendChild(el('div', 'porter-diag-title', rowTitle(row)));
  if (row.detail) {
    const details = el('details', 'porter-diag-raw');
    details.appendChild(el('summary', undefined, 'exception text'));
    details.appendChild(el('pre', 'porter-code', row.detail));
    box.appendChild(details);
  }
  return box;
}

/** What the panel knows of a file's rewrite besides porter's verdict. */
export interface IFileRewriteState {
  /** Written over the file, and no cell that calls into it has run since. */
  applied: boolean;
  /** An Apply of it is under way. */
  busy: boolean;
  /** Why the last Apply of it refused (null: none did). */
  refusal: string | null;
  /** What its Apply button does (null: no button, the panel cannot write files). */
  apply: (() => void) | null;
}

/**
 * A verified rewrite of the person's file: the file and porter's words of the verdict
 * (the specs it was verified on, the calling cell), its Apply button, porter's words of
 * the other calling cells' verdicts and, where an Apply refused, why (in the row the
 * person clicked in); once applied, porter's words for that.
 */
export function renderFileRewrite(
  offer: IFileRewrite,
  state: IFileRewriteState
): HTMLElement {
  const row = el('div', 'porter-panel-item porter-file-rewrite');
  row.dataset.porterFile = offer.file;
  row.title = offer.path;
  if (state.applied) {
    row.classList.add('porter-stale');
    row.dataset.porterApplied = 'true';
    appendText(row, named(offer.file, offer.appliedText));
    return row;
  }
  appendText(row, `${named(offer.file, offer.summary)} `);
  if (state.apply) {
    const button = el(
      'button',
      'porter-apply jp-Button',
      'Apply verified rewrite'
    );
    button.title = 'Write the rewrite that replays verified over the file';
    button.disabled = state.busy;
    button.addEventListener('click', state.apply);
    row.appendChild(button);
  }
  for (const note of offer.notes) {
    appendText(row.appendChild(el('div', 'porter-note')), note);
  }
  if (state.refusal) {
    const why = row.appendChild(el('div', 'porter-refusal'));
    why.setAttribute('role', 'alert');
    appendText(why, `Not applied: ${state.refusal}`);
  }
  return row;
}
