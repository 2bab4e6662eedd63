/**
 * porter's views of a cell result and of a whole report, built from the report JSON
 * alone: the one view of a `%%port` cell's output, live and after a reload alike (no
 * kernel needed: a saved notebook reopened shows the same), in JupyterLab and Notebook
 * 7. Every word, count, severity, verdict and state is the JSON's (decided in porter's
 * model); this module only lays them out: the cell's headline and label, its port plan
 * with each item's state, the rewrite with Apply, then tabs: Calls (the diagnostics
 * rows and the calls), Numerics, Devices, Side by side.
 */
import { buildTable, badge, code, IColumn } from './table';
import { appendText, el, num, yesNo } from './text';
import {
  ICall,
  ICellEntry,
  IDeviceFinding,
  IErrorInfo,
  IOutput,
  IPlanItem,
  IReplay,
  IReport,
  IRow,
  headlineText,
  SourceState,
  verifiedRewrite
} from './types';

/** The DOM event a view's Apply button sends; the notebook plugin acts on it. */
export const APPLY_EVENT = 'porter-apply';

/** The DOM event a cell output sends when it shows (attached, or switched between the
 * live widget and porter's view): the notebook plugin shows the cell's source state
 * on it. */
export const OUTPUT_SHOWN_EVENT = 'porter-output-shown';

export interface IApplyDetail {
  entry: ICellEntry;
}

/** Apply buttons of an output (porter's view's and the live widget's). */
const APPLY_BUTTONS = 'button.porter-apply';
const APPLY_LABEL = 'Apply verified rewrite';
/** Where a view says its cell's source state, and why an Apply refused. */
const STATE_NOTE = 'porter-source-state';
const REFUSAL = 'porter-refusal';

/** The element after which an Apply button's notes go: its section's head row, or the
 * button itself (the live widget's). */
function noteAnchor(button: Element): Element {
  return button.closest('.porter-section-head') ?? button;
}

/** The note of class `cls` right after the button's anchor, made when `make`. */
function noteOf(
  button: Element,
  cls: string,
  make: boolean
): HTMLElement | null {
  const anchor = noteAnchor(button);
  let next = anchor.nextElementSibling;
  while (next && next.classList.contains('porter-output-note')) {
    if (next.classList.contains(cls)) {
      return next as HTMLElement;
    }
    next = next.nextElementSibling;
  }
  if (!make) {
    return null;
  }
  const note = el('div', `porter-output-note ${cls}`);
  anchor.after(note);
  return note;
}

/**
 * Show the cell's source state on the Apply buttons inside `root` (a cell's outputs):
 * `recorded` offers Apply; `applied` turns it off and says so (`words`); `stale` says
 * so beside it and leaves it on, so that a click says exactly what changed. A reason
 * given for an earlier click goes: it was about another text.
 */
export function showSourceState(
  root: Element,
  state: SourceState,
  words: string
): void {
  root.querySelectorAll<HTMLButtonElement>(APPLY_BUTTONS).forEach(button => {
    noteOf(button, REFUSAL, false)?.remove();
    button.dataset.porterState = state;
    // the label it was made with (the live widget's is Python's)
    const label = (button.dataset.porterLabel ??= button.textContent ?? '');
    button.disabled = state === 'applied';
    button.replaceChildren();
    appendText(button, state === 'applied' ? words : label);
    const note = noteOf(button, STATE_NOTE, state === 'stale');
    if (note && state === 'stale') {
      note.replaceChildren();
      appendText(note, words);
    } else {
      note?.remove();
    }
  });
}

/** Say inline, under the Apply button the person clicked, why Apply refused. */
export function showRefusal(button: Element, why: string): void {
  const note = noteOf(button, REFUSAL, true)!;
  note.setAttribute('role', 'alert');
  note.replaceChildren();
  appendText(note, `Not applied: ${why}`);
}

type Kind = 'ok' | 'bad' | 'na';

/** A call's colour from what the JSON decided: a finding red, a standard call green,
 * one noted beside the findings (acknowledged, a host sync) grey. */
function statusKind(call: ICall): Kind {
  return call.finding ? 'bad' : call.status === 'standard' ? 'ok' : 'na';
}

/** An output's colour from its verdict (`outputs[].verdict`, decided in the model). */
const VERDICT_KIND: Record<string, Kind> = {
  match: 'ok',
  order_only: 'ok',
  sign_only: 'ok',
  mismatch: 'bad'
};

function verdictKind(out: IOutput): Kind {
  return VERDICT_KIND[out.verdict ?? ''] ?? 'na';
}

/** A plan item's colour from its state (`plan[].state`, decided in the model). */
const STATE_KIND: Record<string, Kind> = {
  applied: 'ok',
  verified: 'ok',
  partial: 'na'
};

function replayKind(replay: IReplay): Kind {
  return replay.status === 'ok'
    ? 'ok'
    : replay.status === 'skipped' || replay.status === 'not_exercised'
      ? 'na'
      : 'bad';
}

/** A row of the numerics and placement tables: one output of one replay. */
interface IOutputRow {
  cell: string;
  replay: IReplay;
  out: IOutput;
}

interface ICallRow {
  cell: string;
  call: ICall;
  /** Lines above the recorded source in the cell (its `%%port` line): a line shown is
   * the editor's (`first_line`). */
  above: number;
}

interface IFindingRow {
  cell: string;
  finding: IDeviceFinding;
  above: number;
}

interface IReplayRow {
  cell: string;
  replay: IReplay;
}

/** A row's cell as porter named it (`label`); an entry older than labels by its place
 * in the report. */
function rowCell(entry: ICellEntry, i: number): string {
  return entry.label ?? `#${i + 1}`;
}

function cellColumn<T extends { cell: string }>(
  withCell: boolean
): IColumn<T>[] {
  return withCell ? [{ title: 'cell', value: r => r.cell }] : [];
}

function callColumns(withCell: boolean): IColumn<ICallRow>[] {
  return [
    ...cellColumn<ICallRow>(withCell),
    { title: 'line', value: r => r.call.line + r.above },
    {
      title: 'call',
      value: r => r.call.name,
      render: (r, td) => td.appendChild(code(r.call.name))
    },
    {
      title: 'status',
      value: r => r.call.status,
      render: (r, td) =>
        td.appendChild(badge(r.call.status, statusKind(r.call)))
    },
    {
      title: 'use instead',
      value: r => r.call.suggestion ?? '',
      render: (r, td) => {
        if (r.call.suggestion) {
          td.appendChild(code(r.call.suggestion));
        }
      }
    },
    {
      title: 'devices',
      value: r =>
        `${(r.call.devices_in ?? []).join(', ')} → ${r.call.device_out ?? '—'}`
    },
    { title: 'count', value: r => r.call.count ?? 1 },
    { title: 'message', value: r => r.call.message ?? '' }
  ];
}

/** The columns that say which output of which replay a row is about. */
function outputColumns(withCell: boolean): IColumn<IOutputRow>[] {
  return [
    ...cellColumn<IOutputRow>(withCell),
    { title: 'backend', value: r => r.replay.backend },
    {
      title: 'output',
      value: r => r.out.name,
      render: (r, td) => td.appendChild(code(r.out.name))
    }
  ];
}

function numericColumns(withCell: boolean): IColumn<IOutputRow>[] {
  return [
    ...outputColumns(withCell),
    {
      title: 'shape',
      value: r => (r.out.shape ? `(${r.out.shape.join(', ')})` : '—')
    },
    { title: 'dtype', value: r => r.out.dtype ?? '—' },
    { title: 'max abs err', value: r => num(r.out.max_abs_err) },
    { title: 'max rel err', value: r => num(r.out.max_rel_err) },
    { title: 'mismatched', value: r => r.out.mismatched ?? null },
    {
      title: 'verdict',
      value: r => r.out.verdict_text ?? '—',
      render: (r, td) =>
        td.appendChild(badge(r.out.verdict_text ?? '—', verdictKind(r.out)))
    },
    { title: 'conversion', value: r => r.out.conversion ?? '—' }
  ];
}

function placementColumns(withCell: boolean): IColumn<IOutputRow>[] {
  return [
    ...outputColumns(withCell),
    { title: 'device', value: r => r.out.device ?? '—' },
    { title: 'expected', value: r => r.out.expected_device ?? '—' },
    {
      title: 'placed right',
      value: r => yesNo(r.out.device_ok),
      render: (r, td) => {
        const ok = r.out.device_ok;
        td.appendChild(
          badge(
            ok === false ? 'no (wrong)' : yesNo(ok),
            ok === false ? 'bad' : ok ? 'ok' : 'na'
          )
        );
      }
    }
  ];
}

function findingColumns(withCell: boolean): IColumn<IFindingRow>[] {
  return [
    ...cellColumn<IFindingRow>(withCell),
    {
      title: 'line',
      value: r =>
        r.finding.line === null || r.finding.line === undefined
          ? null
          : r.finding.line + r.above
    },
    {
      title: 'call',
      value: r => r.finding.name,
      render: (r, td) => td.appendChild(code(r.finding.name))
    },
    {
      title: 'kind',
      value: r => r.finding.kind,
      render: (r, td) => td.appendChild(badge(r.finding.kind, 'bad'))
    },
    { title: 'backend', value: r => r.finding.backend ?? '—' },
    { title: 'message', value: r => r.finding.message ?? '' }
  ];
}

function replayColumns(withCell: boolean): IColumn<IReplayRow>[] {
  return [
    ...cellColumn<IReplayRow>(withCell),
    { title: 'backend', value: r => r.replay.backend },
    {
      title: 'status',
      value: r => r.replay.status,
      render: (r, td) =>
        td.appendChild(badge(r.replay.status, replayKind(r.replay)))
    },
    { title: 'worker', value: r => r.replay.worker ?? '—' },
    { title: 'seconds', value: r => num(r.replay.seconds) },
    {
      title: 'why',
      value: r =>
        r.replay.error ? errorText(r.replay.error) : (r.replay.reason ?? '')
    }
  ];
}

interface IRows {
  calls: ICallRow[];
  outputs: IOutputRow[];
  findings: IFindingRow[];
  replays: IReplayRow[];
}

function gather(entries: readonly ICellEntry[]): IRows {
  const rows: IRows = { calls: [], outputs: [], findings: [], replays: [] };
  entries.forEach((entry, i) => {
    const cell = rowCell(entry, i);
    const above = (entry.first_line ?? 1) - 1;
    for (const call of entry.calls ?? []) {
      rows.calls.push({ cell, call, above });
    }
    for (const finding of entry.device_findings ?? []) {
      rows.findings.push({ cell, finding, above });
    }
    for (const replay of entry.replays ?? []) {
      rows.replays.push({ cell, replay });
      for (const out of replay.outputs ?? []) {
        rows.outputs.push({ cell, replay, out });
      }
    }
  });
  return rows;
}

function tables(
  entries: readonly ICellEntry[],
  withCell: boolean
): HTMLElement[] {
  const rows = gather(entries);
  const bad = (b: boolean) => (b ? 'porter-bad' : null);
  return [
    buildTable('Calls', rows.calls, callColumns(withCell), {
      rowClass: r =>
        ({ bad: 'porter-bad', na: 'porter-muted', ok: null })[
          statusKind(r.call)
        ],
      isFinding: r => r.call.finding === true,
      findingsOnly: withCell, // a report opens on its findings
      empty: 'No array calls were recorded.'
    }),
    buildTable('Numerics', rows.outputs, numericColumns(withCell), {
      rowClass: r => bad(r.out.verdict === 'mismatch'),
      isFinding: r => r.out.verdict === 'mismatch',
      empty: 'No replays compared outputs.'
    }),
    buildTable('Devices', rows.findings, findingColumns(withCell), {
      rowClass: () => 'porter-bad',
      empty: 'No device findings.'
    }),
    buildTable('Placement', rows.outputs, placementColumns(withCell), {
      rowClass: r => bad(r.out.device_ok === false),
      isFinding: r => r.out.device_ok === false,
      empty: 'No replay outputs.'
    }),
    buildTable('Replays', rows.replays, replayColumns(withCell), {
      rowClass: r => bad(replayKind(r.replay) === 'bad'),
      isFinding: r => r.replay.status !== 'ok',
      empty: 'No replays ran.'
    })
  ];
}

/** What a cell or a replay raised, in porter's words (`error.text`, lines as the editor
 * counts them); a result older than those words shows the exception's type and message. */
function errorText(error: IErrorInfo): string {
  return error.text ?? `${error.type}: ${error.message}`;
}

/** The cell's source with line numbers, in a collapsed block. */
function sourceBlock(source: string, summary: string): HTMLElement {
  const details = el('details', 'porter-source');
  details.appendChild(el('summary', undefined, summary));
  const pre = el('pre');
  source.split(/\r\n|\r|\n/).forEach((line, i) => {
    pre.appendChild(
      el('span', 'porter-lineno', String(i + 1).padStart(3) + ' │ ')
    );
    pre.appendChild(el('span', undefined, line + '\n'));
  });
  details.appendChild(pre);
  return details;
}

function rewriteBlock(entry: ICellEntry): HTMLElement | null {
  const rewrite = entry.rewrite;
  if (!rewrite) {
    return null;
  }
  const box = el('section', 'porter-section porter-rewrite');
  const head = el('div', 'porter-section-head');
  head.appendChild(el('h4', 'porter-title', 'Rewrite'));
  const status = rewrite.status;
  head.appendChild(
    badge(
      status,
      status === 'verified' ? 'ok' : status === 'partial' ? 'na' : 'bad'
    )
  );
  if (rewrite.verified_text) {
    head.appendChild(el('span', 'porter-note', rewrite.verified_text));
  }
  box.appendChild(head);
  if (verifiedRewrite(entry)) {
    const button = el('button', 'porter-apply jp-Button', APPLY_LABEL);
    button.title =
      'Replace the cell source with the rewrite that replays verified';
    button.addEventListener('click', () => {
      button.dispatchEvent(
        new CustomEvent<IApplyDetail>(APPLY_EVENT, {
          bubbles: true,
          detail: { entry }
        })
      );
    });
    head.appendChild(button);
  }
  if (rewrite.reason) {
    box.appendChild(el('p', 'porter-note', rewrite.reason));
  }
  box.appendChild(sourceBlock(rewrite.source ?? '', 'rewritten source'));
  return box;
}

/** The cell's port plan: each fix with its state in the model's words. */
function planBlock(entry: ICellEntry): HTMLElement | null {
  const items = entry.plan ?? [];
  if (!items.length) {
    return null;
  }
  const box = el('section', 'porter-section porter-plan');
  box.appendChild(el('h4', 'porter-title', 'Port plan'));
  const list = el('ol', 'porter-plan-items');
  for (const item of items) {
    const li = el('li', 'porter-plan-item');
    li.dataset.porterState = item.state ?? '';
    li.appendChild(
      badge(item.state_text ?? '—', STATE_KIND[item.state ?? ''] ?? 'bad')
    );
    li.appendChild(
      el('span', 'porter-plan-kind', ` ${item.kind_text ?? item.kind} `)
    );
    li.appendChild(el('span', 'porter-plan-title', item.title));
    list.appendChild(li);
  }
  box.appendChild(list);
  return box;
}

const SEVERITY_KIND: Record<string, Kind> = {
  error: 'bad',
  warning: 'bad',
  info: 'na'
};

/** The cell's diagnostics rows as the model made them: severity, place, message. */
function diagnosticsTable(entry: ICellEntry): HTMLElement {
  return buildTable<IRow>(
    'Findings',
    entry.diagnostics ?? [],
    [
      {
        title: 'severity',
        value: d => d.severity,
        render: (d, td) =>
          td.appendChild(badge(d.severity, SEVERITY_KIND[d.severity] ?? 'na'))
      },
      { title: 'line', value: d => d.line ?? null },
      { title: 'file', value: d => d.file ?? '' },
      { title: 'finding', value: d => d.message }
    ],
    {
      rowClass: d => (d.finding ? 'porter-bad' : 'porter-muted'),
      empty: 'Nothing to change in this cell.'
    }
  );
}

/** One backend's column of the side-by-side view of an output, from its JSON fields. */
function outputCard(replay: IReplay, out: IOutput): HTMLElement {
  const card = el('div', 'porter-card');
  const head = el('div', 'porter-card-head');
  head.appendChild(code(replay.backend));
  head.appendChild(badge(out.verdict_text ?? '—', verdictKind(out)));
  card.appendChild(head);
  const fields: [string, string][] = [
    ['shape', out.shape ? `(${out.shape.join(', ')})` : '—'],
    ['dtype', out.dtype ?? '—'],
    ['device', out.device ?? '—'],
    ['expected device', out.expected_device ?? '—'],
    ['conversion', out.conversion ?? '—'],
    ['max abs err', num(out.max_abs_err)],
    ['max rel err', num(out.max_rel_err)],
    ['mismatched', num(out.mismatched)],
    ['rtol / atol', `${num(out.rtol)} / ${num(out.atol)}`]
  ];
  if (out.note) {
    fields.push(['note', out.note]);
  }
  const table = el('table', 'porter-card-fields');
  for (const [label, value] of fields) {
    const tr = el('tr');
    tr.appendChild(el('th', undefined, label));
    tr.appendChild(el('td', undefined, value));
    table.appendChild(tr);
  }
  card.appendChild(table);
  const hist = out.error_histogram;
  if (hist && hist.counts.length) {
    // the error histogram the compare stage kept: bars as tall as their share
    const top = Math.max(...hist.counts, 1);
    const bars = el('div', 'porter-histogram');
    bars.title = 'absolute error, bins doubling from 0';
    hist.counts.forEach((n, i) => {
      const bar = el('span', 'porter-bar');
      bar.style.height = `${Math.round((40 * n) / top)}px`;
      bar.title = `${num(hist.edges[i])} – ${num(hist.edges[i + 1])}: ${n}`;
      bars.appendChild(bar);
    });
    card.appendChild(bars);
  }
  return card;
}

/** Outputs by name (first seen first) and, for the one picked, a card per backend. */
function sideBySide(entry: ICellEntry): HTMLElement {
  const box = el('div', 'porter-side-by-side');
  const names: string[] = [];
  for (const replay of entry.replays ?? []) {
    for (const out of replay.outputs ?? []) {
      if (!names.includes(out.name)) {
        names.push(out.name);
      }
    }
  }
  if (!names.length) {
    box.appendChild(
      el('p', 'porter-note', 'No outputs to compare side by side.')
    );
    return box;
  }
  const picker = el('select', 'porter-output-picker');
  for (const name of names) {
    const option = el('option', undefined, name);
    option.value = name;
    picker.appendChild(option);
  }
  const label = el('label', 'porter-note', 'output ');
  label.appendChild(picker);
  box.appendChild(label);
  const cards = el('div', 'porter-cards');
  const show = () => {
    cards.replaceChildren();
    for (const replay of entry.replays ?? []) {
      const out = (replay.outputs ?? []).find(o => o.name === picker.value);
      if (out) {
        cards.appendChild(outputCard(replay, out));
      }
    }
  };
  picker.addEventListener('change', show);
  show();
  box.appendChild(cards);
  return box;
}

/** Tabs over panes: one shown at a time, the first to begin with. */
function tabbed(panes: [string, HTMLElement[]][]): HTMLElement {
  const box = el('div', 'porter-tabs');
  const bar = el('div', 'porter-tab-bar');
  bar.setAttribute('role', 'tablist');
  box.appendChild(bar);
  const buttons: HTMLButtonElement[] = [];
  const bodies: HTMLElement[] = [];
  const pick = (k: number) => {
    buttons.forEach((b, i) => b.setAttribute('aria-selected', String(i === k)));
    bodies.forEach((b, i) => (b.hidden = i !== k));
  };
  panes.forEach(([title, content], k) => {
    const button = el('button', 'porter-tab', title);
    button.setAttribute('role', 'tab');
    button.addEventListener('click', () => pick(k));
    bar.appendChild(button);
    buttons.push(button);
    const body = el('div', 'porter-tab-pane');
    body.setAttribute('role', 'tabpanel');
    body.dataset.porterTab = title;
    content.forEach(node => body.appendChild(node));
    box.appendChild(body);
    bodies.push(body);
  });
  pick(0);
  return box;
}

/** The tab titles of a cell's view, in order. */
export const TAB_TITLES = ['Calls', 'Numerics', 'Devices', 'Side by side'];

/**
 * One cell's result, the one view of it live and after a reload: its headline and
 * label, its error, its port plan, the rewrite (Apply where replays verified it), then
 * the tabs, and the recorded source.
 */
export function renderCell(entry: ICellEntry): HTMLElement {
  const root = el('div', 'porter-view porter-cell-view');
  const head = el('div', 'porter-cell-head');
  head.appendChild(el('span', 'porter-verdict', headlineText(entry)));
  if (entry.label) {
    head.appendChild(el('span', 'porter-cell-label', ` (${entry.label})`));
  }
  root.appendChild(head);
  if (entry.error) {
    root.appendChild(el('div', 'porter-error', errorText(entry.error)));
  }
  const plan = planBlock(entry);
  if (plan) {
    root.appendChild(plan);
  }
  const rewrite = rewriteBlock(entry);
  if (rewrite) {
    root.appendChild(rewrite);
  }
  const [calls, numerics, devices, placement, replays] = tables([entry], false);
  root.appendChild(
    tabbed([
      [TAB_TITLES[0], [diagnosticsTable(entry), calls]],
      [TAB_TITLES[1], [numerics, replays]],
      [TAB_TITLES[2], [devices, placement]],
      [TAB_TITLES[3], [sideBySide(entry)]]
    ])
  );
  root.appendChild(sourceBlock(entry.source ?? '', 'recorded source'));
  return root;
}

function planColumns(): IColumn<IPlanItem>[] {
  return [
    { title: 'fix', value: p => p.title },
    { title: 'kind', value: p => p.kind },
    { title: 'cells', value: p => (p.cells ?? []).map(String).join(', ') },
    {
      title: 'sites',
      value: p =>
        Array.isArray(p.sites)
          ? p.sites.length
          : typeof p.sites === 'number'
            ? p.sites
            : null
    },
    {
      title: 'state',
      value: p => p.state_text ?? '—',
      render: (p, td) =>
        td.appendChild(
          badge(p.state_text ?? '—', STATE_KIND[p.state ?? ''] ?? 'bad')
        )
    }
  ];
}

/** A whole report: the header, the port plan first, then every table over all cells. */
export function renderReport(report: IReport): HTMLElement {
  const root = el('div', 'porter-view porter-report-view');
  const notebook = report.source?.notebook;
  root.appendChild(
    el(
      'h3',
      'porter-report-title',
      `porter report${notebook ? `: ${notebook}` : ''}`
    )
  );
  // the counts and what the report was made with, in porter's words (a report older
  // than those words shows its tables only)
  const summary = report.summary?.text;
  if (summary) {
    root.appendChild(el('div', 'porter-verdict porter-summary', summary));
  }
  const made = report.environment?.text;
  if (made) {
    root.appendChild(el('div', 'porter-note porter-environment', made));
  }
  root.appendChild(
    buildTable('Port plan', report.plan ?? [], planColumns(), {
      empty: 'No port plan in this report.'
    })
  );
  for (const t of tables(report.cells ?? [], true)) {
    root.appendChild(t);
  }
  root.appendChild(
    buildTable(
      'Backends',
      report.environment?.backends ?? [],
      [
        { title: 'spec', value: b => b.spec },
        { title: 'version', value: b => b.version ?? '—' },
        {
          title: 'available',
          value: b => yesNo(b.available),
          render: (b, td) =>
            td.appendChild(badge(yesNo(b.available), b.available ? 'ok' : 'na'))
        },
        { title: 'devices', value: b => (b.devices ?? []).join(', ') },
        { title: 'reason', value: b => b.reason ?? '' }
      ],
      { empty: 'No backends listed.' }
    )
  );
  return root;
}
