/**
 * The JSON shapes porter writes (../shared/CONTRACT.md, "Report (JSON)"), as the
 * front end reads them. Every field a newer writer may omit is optional: the views
 * show what is there and never fail on what is missing.
 */

/** One cell's result: `application/vnd.porter.cell+json`. */
export const CELL_MIME = 'application/vnd.porter.cell+json';
/** A whole report: `application/vnd.porter.report+json`. */
export const REPORT_MIME = 'application/vnd.porter.report+json';
/** ipywidgets' view of a live widget, which porter's output also carries. */
export const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';

export interface IErrorInfo {
  type: string;
  message: string;
  line?: number | null;
}

export interface ICall {
  line: number;
  col: number;
  name: string;
  library?: string;
  kind?: string;
  status: string;
  standard_name?: string | null;
  suggestion?: string | null;
  devices_in?: string[];
  device_out?: string | null;
  count?: number;
  message?: string;
}

export interface IDeviceFinding {
  line?: number | null;
  name: string;
  kind: string;
  backend?: string | null;
  message?: string;
}

export interface IOutput {
  name: string;
  shape?: number[] | null;
  dtype?: string | null;
  device?: string | null;
  expected_device?: string | null;
  device_ok?: boolean | null;
  max_abs_err?: number | string | null;
  max_rel_err?: number | string | null;
  mismatched?: number | null;
  nan_mismatch?: boolean | null;
  within_tolerance?: boolean | null;
  rtol?: number | string | null;
  atol?: number | string | null;
  conversion?: string | null;
  deterministic?: boolean | null;
  reference_err?: number | string | null;
  difference?: string | null;
}

export interface IReplay {
  backend: string;
  status: string;
  worker?: string | null;
  seconds?: number | string | null;
  error?: IErrorInfo | null;
  reason?: string | null;
  outputs?: IOutput[];
}

export interface IRewrite {
  source: string;
  status: 'verified' | 'partial' | 'refused' | string;
  verified_on?: string[];
  sites?: unknown;
  reason?: string | null;
}

export interface ICellEntry {
  index?: number | null;
  execution_count?: number | null;
  source: string;
  error?: IErrorInfo | null;
  calls?: ICall[];
  device_findings?: IDeviceFinding[];
  replays?: IReplay[];
  rewrite?: IRewrite | null;
}

export interface IPlanItem {
  kind: string;
  title: string;
  cells?: unknown[];
  sites?: unknown;
  automatic?: boolean;
}

export interface IReport {
  schema?: string;
  porter_version?: string;
  array_api_version?: string;
  source?: { notebook?: string | null } | null;
  environment?: {
    python?: string;
    backends?: {
      spec: string;
      library?: string;
      version?: string | null;
      available?: boolean;
      devices?: string[];
      reason?: string | null;
    }[];
  } | null;
  plan?: IPlanItem[] | null;
  cells?: ICellEntry[];
  summary?: Record<string, number> | null;
}

/** Call statuses that are not findings (CONTRACT.md: everything else is one). */
const NOT_FINDINGS = new Set(['standard']);
/** Findings that are deliberate or about speed, shown muted rather than as errors. */
const MUTED = new Set(['acknowledged', 'host_sync']);

export function isFinding(call: ICall): boolean {
  return !NOT_FINDINGS.has(call.status);
}

export function isMuted(call: ICall): boolean {
  return MUTED.has(call.status);
}

/** A cell entry read defensively from a MIME bundle: null when it is not one. */
export function asCellEntry(data: unknown): ICellEntry | null {
  if (!data || typeof data !== 'object') {
    return null;
  }
  const entry = data as ICellEntry;
  return typeof entry.source === 'string' ? entry : null;
}

/** True where the rewrite may be applied: replays verified it. */
export function verifiedRewrite(entry: ICellEntry): IRewrite | null {
  const rewrite = entry.rewrite;
  return rewrite &&
    rewrite.status === 'verified' &&
    typeof rewrite.source === 'string'
    ? rewrite
    : null;
}

/** One line saying how portable the cell is: the same words as porter_ext.ui.html.verdict. */
export function verdict(entry: ICellEntry): string {
  const calls = entry.calls ?? [];
  const findings = calls.filter(isFinding);
  const nCalls = calls.reduce((n, c) => n + (c.count ?? 1), 0);
  const replays = entry.replays ?? [];
  const failed = replays.filter(
    r => r.status === 'error' || r.status === 'timeout'
  );
  const s = (n: number) => (n === 1 ? '' : 's');
  const parts: string[] = [];
  if (!calls.length) {
    parts.push('no array calls recorded');
  } else if (!findings.length) {
    parts.push(`${nCalls} array call${s(nCalls)}, all inside the standard`);
  } else {
    parts.push(
      `${findings.length} finding${s(findings.length)} in ${nCalls} array call${s(nCalls)}`
    );
  }
  const devices = entry.device_findings ?? [];
  if (devices.length) {
    parts.push(`${devices.length} device finding(s)`);
  }
  if (replays.length) {
    const ok = replays.filter(r => r.status === 'ok').length;
    parts.push(`${ok}/${replays.length} replays ok`);
  }
  if (failed.length) {
    parts.push(`failed on ${failed.map(r => r.backend).join(', ')}`);
  }
  const differs = new Set(
    replays
      .filter(r =>
        (r.outputs ?? []).some(
          o => o.within_tolerance === false || o.device_ok === false
        )
      )
      .map(r => r.backend)
  );
  if (differs.size) {
    parts.push(`differs on ${[...differs].sort().join(', ')}`);
  }
  if (entry.error) {
    parts.push(`the cell raised ${entry.error.type}`);
  }
  return `porter: ${parts.join('; ')}`;
}
