/**
 * porter's views of a cell result and of a whole report, built from the report JSON
 * alone (no kernel needed: a saved notebook reopened shows the same). The same tables
 * as the HTML report and the widget: calls with each suggestion beside its call,
 * numerics with mismatches highlighted, devices with wrong placements highlighted.
 */
import { buildTable, badge, code, IColumn } from './table';
import { appendText, el, num, yesNo } from './text';
import {
  ICall,
  ICellEntry,
  IDeviceFinding,
  IOutput,
  IPlanItem,
  IReplay,
  IReport,
  isFinding,
  headlineText,
  isMuted,
  SourceState,
  verifiedRewrite
} from './types';
import { cellLabel } from './positions';

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

function statusKind(call: ICall): Kind {
  return !isFinding(call) ? 'ok' : isMuted(call) ? 'na' : 'bad';
}

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
}

interface IFindingRow {
  cell: string;
  finding: IDeviceFinding;
}

interface IReplayRow {
  cell: string;
  replay: IReplay;
}

/** A row's cell as every view names it (`cellLabel`); a cell with neither a notebook
 * position nor an execution count by its place in the report. */
function rowCell(entry: ICellEntry, i: number): string {
  const nameless =
    (entry.index === null || entry.index === undefined) &&
    (entry.execution_count === null || entry.execution_count === undefined);
  return nameless ? `#${i + 1}` : cellLabel(entry.index, entry.execution_count);
}

function cellColumn<T extends { cell: string }>(
  withCell: boolean
): IColumn<T>[] {
  return withCell ? [{ title: 'cell', value: r => r.cell }] : [];
}

function callColumns(withCell: boolean): IColumn<ICallRow>[] {
  return [
    ...cellColumn<ICallRow>(withCell),
    { title: 'line', value: r => r.call.line },
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
      title: 'within tolerance',
      value: r => yesNo(r.out.within_tolerance),
      render: (r, td) => {
        const w = r.out.within_tolerance;
        td.appendChild(badge(yesNo(w), w === false ? 'bad' : w ? 'ok' : 'na'));
      }
    },
    { title: 'difference', value: r => r.out.difference ?? '—' },
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
    { title: 'line', value: r => r.finding.line ?? null },
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
        r.replay.error
          ? `${r.replay.error.type}: ${r.replay.error.message}`
          : (r.replay.reason ?? '')
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
    for (const call of entry.calls ?? []) {
      rows.calls.push({ cell, call });
    }
    for (const finding of entry.device_findings ?? []) {
      rows.findings.push({ cell, finding });
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
        statusKind(r.call) === 'bad'
          ? 'porter-bad'
          : isMuted(r.call)
            ? 'porter-muted'
            : null,
      isFinding: r => isFinding(r.call),
      findingsOnly: withCell, // a report opens on its findings
      empty: 'No array calls were recorded.'
    }),
    buildTable('Numerics', rows.outputs, numericColumns(withCell), {
      rowClass: r => bad(r.out.within_tolerance === false),
      isFinding: r => r.out.within_tolerance === false,
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
  if (rewrite.verified_on?.length) {
    head.appendChild(
      el('span', 'porter-note', `verified on ${rewrite.verified_on.join(', ')}`)
    );
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

/** One cell's result: its headline, the rewrite, then calls, numerics, devices. */
export function renderCell(entry: ICellEntry): HTMLElement {
  const root = el('div', 'porter-view porter-cell-view');
  root.appendChild(el('div', 'porter-verdict', headlineText(entry)));
  if (entry.error) {
    const line = entry.error.line ? ` (line ${entry.error.line})` : '';
    root.appendChild(
      el(
        'div',
        'porter-error',
        `${entry.error.type}: ${entry.error.message}${line}`
      )
    );
  }
  const rewrite = rewriteBlock(entry);
  if (rewrite) {
    root.appendChild(rewrite);
  }
  // a cell that was not replayed shows its calls only, as the text/html fallback does
  const replayed = !!(entry.replays?.length || entry.device_findings?.length);
  for (const t of tables([entry], false).slice(0, replayed ? undefined : 1)) {
    root.appendChild(t);
  }
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
      title: 'automatic',
      value: p => yesNo(p.automatic),
      render: (p, td) =>
        td.appendChild(badge(yesNo(p.automatic), p.automatic ? 'ok' : 'na'))
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
  const s = report.summary ?? {};
  root.appendChild(
    el(
      'div',
      'porter-verdict',
      `${s.cells ?? 0} cell(s), ${s.calls ?? 0} array call(s), ${s.non_standard ?? 0} outside the standard, ` +
        `${s.device_findings ?? 0} device finding(s), ${s.replays_ok ?? 0} replay(s) ok, ` +
        `${s.replays_failed ?? 0} failed, ${s.mismatches ?? 0} numeric mismatch(es)`
    )
  );
  root.appendChild(
    el(
      'div',
      'porter-note',
      `porter ${report.porter_version ?? '?'}, array API ${report.array_api_version ?? '?'}, ` +
        `Python ${report.environment?.python ?? '?'}`
    )
  );
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
