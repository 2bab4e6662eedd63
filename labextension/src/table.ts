/**
 * A sortable, filterable table built from DOM nodes (never HTML strings): click a
 * header to sort by it (again to reverse), type in the box to keep the rows whose text
 * holds it. Rows render once; sorting reorders the same nodes, filtering hides them,
 * and only the first `PAGE_ROWS` matching rows are displayed until "show all" is
 * clicked, so a report with thousands of rows stays quick.
 */
import { appendText, el } from './text';

/** Rows a table displays before its "show all" button. */
export const PAGE_ROWS = 200;

export interface IColumn<T> {
  title: string;
  /** What the column shows and sorts by; a number sorts numerically. */
  value: (row: T) => string | number | null | undefined;
  /** Fill the cell yourself (a badge, a code span); the default is `value` as text. */
  render?: (row: T, td: HTMLTableCellElement) => void;
}

export interface ITableOptions<T> {
  /** A class for the row: `porter-bad` highlights it, `porter-muted` greys it. */
  rowClass?: (row: T) => string | null;
  /** Rows that are not findings, hidden while "findings only" is ticked. */
  isFinding?: (row: T) => boolean;
  /** Start with "findings only" ticked (a report's calls: most are standard). */
  findingsOnly?: boolean;
  /** Called when a row is clicked (the side panel moves the cursor). */
  onClick?: (row: T) => void;
  /** An empty table says this instead. */
  empty?: string;
}

interface IRow<T> {
  data: T;
  tr: HTMLTableRowElement;
  text: string;
  finding: boolean;
}

function compare(
  a: string | number | null | undefined,
  b: string | number | null | undefined
): number {
  if (a === b) {
    return 0;
  }
  if (a === null || a === undefined || a === '') {
    return 1; // missing values last
  }
  if (b === null || b === undefined || b === '') {
    return -1;
  }
  if (typeof a === 'number' && typeof b === 'number') {
    return a - b;
  }
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

export function buildTable<T>(
  title: string,
  rows: readonly T[],
  columns: IColumn<T>[],
  options: ITableOptions<T> = {}
): HTMLElement {
  const box = el('section', 'porter-section');
  const head = el('div', 'porter-section-head');
  head.appendChild(el('h4', 'porter-title', `${title} (${rows.length})`));
  box.appendChild(head);
  if (!rows.length) {
    box.appendChild(
      el('p', 'porter-note', options.empty ?? 'Nothing to show.')
    );
    return box;
  }
  const filter = el('input', 'porter-filter');
  filter.type = 'search';
  filter.placeholder = 'filter';
  filter.setAttribute('aria-label', `filter ${title}`);
  head.appendChild(filter);
  let findingsOnly: HTMLInputElement | null = null;
  if (options.isFinding) {
    const label = el('label', 'porter-findings-only');
    findingsOnly = el('input');
    findingsOnly.type = 'checkbox';
    findingsOnly.checked = options.findingsOnly ?? false;
    label.appendChild(findingsOnly);
    label.appendChild(document.createTextNode(' findings only'));
    head.appendChild(label);
  }

  const table = el('table', 'porter-table');
  const thead = el('thead');
  const headRow = el('tr');
  const tbody = el('tbody');
  table.appendChild(thead).appendChild(headRow);
  table.appendChild(tbody);
  box.appendChild(table);

  const fragment = document.createDocumentFragment();
  const built: IRow<T>[] = rows.map(data => {
    const tr = el('tr');
    const cls = options.rowClass?.(data);
    if (cls) {
      tr.className = cls;
    }
    for (const column of columns) {
      const td = el('td');
      if (column.render) {
        column.render(data, td);
      } else {
        const v = column.value(data);
        appendText(td, v === null || v === undefined ? '—' : v);
      }
      tr.appendChild(td);
    }
    if (options.onClick) {
      tr.classList.add('porter-clickable');
      tr.addEventListener('click', () => options.onClick!(data));
    }
    fragment.appendChild(tr);
    const finding = options.isFinding ? options.isFinding(data) : true;
    return { data, tr, text: '', finding };
  });
  tbody.appendChild(fragment);

  let current = built;
  let limit = PAGE_ROWS;
  const footer = el('div', 'porter-table-footer');
  const more = el('button', 'porter-more jp-Button', 'show all');
  box.appendChild(footer);

  let sortedBy = -1;
  let descending = false;
  columns.forEach((column, i) => {
    const th = el('th', 'porter-sortable', column.title);
    th.title = `sort by ${column.title}`;
    th.addEventListener('click', () => {
      descending = sortedBy === i ? !descending : false;
      sortedBy = i;
      headRow
        .querySelectorAll('th')
        .forEach(h => h.removeAttribute('aria-sort'));
      th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      const order = built
        .map((row, k) => ({ row, k, v: column.value(row.data) }))
        .sort((a, b) => {
          const c = compare(a.v, b.v);
          return (descending ? -c : c) || a.k - b.k;
        });
      current = order.map(o => o.row);
      const again = document.createDocumentFragment();
      current.forEach(row => again.appendChild(row.tr));
      tbody.appendChild(again);
      apply();
    });
    headRow.appendChild(th);
  });

  // Only the first `limit` matching rows are displayed: hidden rows cost no layout, so
  // a table of thousands of rows appears as fast as one of a few hundred.
  function apply(): void {
    const needle = filter.value.trim().toLowerCase();
    const only = findingsOnly?.checked ?? false;
    let matching = 0;
    for (const row of current) {
      if (needle && !row.text) {
        row.text = (row.tr.textContent ?? '').toLowerCase();
      }
      const match =
        (!only || row.finding) && (!needle || row.text.includes(needle));
      row.tr.hidden = !match || matching >= limit;
      matching += match ? 1 : 0;
    }
    footer.replaceChildren();
    if (matching > limit) {
      footer.appendChild(
        document.createTextNode(`showing ${limit} of ${matching} rows `)
      );
      footer.appendChild(more);
    } else if (matching < built.length) {
      footer.appendChild(
        document.createTextNode(`${matching} of ${built.length} rows match`)
      );
    }
  }
  more.addEventListener('click', () => {
    limit = Infinity;
    apply();
  });
  filter.addEventListener('input', apply);
  findingsOnly?.addEventListener('change', apply);
  apply();
  return box;
}

/** A small coloured label: `ok` green, `bad` red, `na` grey. */
export function badge(text: string, kind: 'ok' | 'bad' | 'na'): HTMLElement {
  return el('span', `porter-badge porter-badge-${kind}`, text);
}

/** Text in a monospace span (call names, suggestions, devices). */
export function code(text: unknown): HTMLElement {
  return el('code', 'porter-code', text);
}
