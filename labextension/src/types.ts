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
  /** Where the call's expression ends (character column): the range marks cover. */
  end_line?: number | null;
  end_col?: number | null;
  /** Where the call is written, when code another cell wrote made it. */
  origin?: ICallOrigin | null;
}

/** A call's place in the cell that wrote its code (CONTRACT.md `origin`). */
export interface ICallOrigin {
  index?: number | null;
  execution_count?: number | null;
  cell_id?: string | null;
  line: number;
  col: number;
  end_line?: number | null;
  end_col?: number | null;
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
  calls?: ICall[] | null;
}

export interface IRewrite {
  source: string;
  status: 'verified' | 'partial' | 'refused' | string;
  verified_on?: string[];
  sites?: unknown;
  reason?: string | null;
}

/** A cell's counts and its one-line verdict, computed once by porter (CONTRACT.md,
 * `headline`): the extension shows these words and counts nothing itself. */
export interface IHeadline {
  text: string;
  counts?: {
    calls?: number;
    findings?: number;
    device_findings?: number;
    replays?: number;
    replays_ok?: number;
    failed_on?: string[];
    differs_on?: string[];
    error?: string | null;
  };
}

export interface ICellEntry {
  index?: number | null;
  execution_count?: number | null;
  source: string;
  error?: IErrorInfo | null;
  calls?: ICall[];
  device_findings?: IDeviceFinding[];
  replays?: IReplay[];
  headline?: IHeadline | null;
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

/** What a cell result written by a porter older than headlines shows instead. */
export const NO_HEADLINE =
  'porter: this result predates headlines; re-run the cell for its verdict';

/**
 * The cell's one-line verdict as porter wrote it (`entry.headline.text`): the words of
 * the text view, the HTML and the widget. Never recounted here, so the views cannot
 * drift apart; an entry without one says so.
 */
export function headlineText(entry: ICellEntry): string {
  const text = entry.headline?.text;
  return typeof text === 'string' ? text : NO_HEADLINE;
}
