/**
 * porter's views of a cell result and of a whole report, built from the report JSON
 * alone (no kernel needed: a saved notebook reopened shows the same). The same tables
 * as the HTML report and the widget: calls with each suggestion beside its call,
 * numerics with mismatches highlighted, devices with wrong placements highlighted.
 */
import { buildTable, badge, code, IColumn } from './table';
import { el, num, yesNo } from './text';
import {
  ICall,
  ICellEntry,
  IDeviceFinding,
  IOutput,
  IPlanItem,
  IReplay,
  IReport,
  headlineText,
  verifiedRewrite
} from './types';

/** The DOM event a view's Apply button sends; the notebook plugin acts on it. */
export const APPLY_EVENT = 'porter-apply';

export interface IApplyDetail {
  entry: ICellEntry;
}

type Kind = 'ok' | 'bad' | 'na';

/** A call's row as porter's model judged it: a finding, information, or standard. */
function statusKind(call: ICall): Kind {
  if (call.finding) {
    return 'bad';
  }
  return call.severity === 'info' && call.status !== 'standard' ? 'na' : 'ok';
}

/** An output's row as porter's model judged it (`verdict`). */
function verdictKind(out: IOutput): Kind {
  return out.verdict === 'mismatch'
    ? 'bad'
    : out.verdict === 'match'
      ? 'ok'
      : 'na';
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
          : statusKind(r.call) === 'na'
            ? 'porter-muted'
            : null,
      isFinding: r => !!r.call.finding,
      findingsOnly: withCell, // a report opens on its findings
      empty: 'No array calls were recorded.'
    }),
    buildTable('Numerics', rows.outputs, numericColumns(withCell), {
      rowClass: r => bad(verdictKind(r.out) === 'bad'),
      isFinding: r => verdictKind(r.out) === 'bad',
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
    const button = el(
      'button',
      'porter-apply jp-Button',
      'Apply verified rewrite'
    );
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
      title: 'state',
      value: p => p.state_text ?? (p.automatic ? 'fixed automatically' : 'needs you'),
      render: (p, td) =>
        td.appendChild(
          badge(
            p.state_text ?? (p.automatic ? 'fixed automatically' : 'needs you'),
            p.state === 'applied' || p.state === 'verified' ? 'ok' : 'na'
          )
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
