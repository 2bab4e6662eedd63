/**
 * The JSON shapes porter writes (../shared/CONTRACT.md, "Report (JSON)"), as the
 * front end reads them: the types generated from porter's report schema
 * (`schema.generated.ts`, written by `scripts/schema-types.js` at every build), with
 * the fields a view needs required and every other one optional, so that the views show
 * what is there and never fail on what is missing.
 */
import type * as schema from './schema.generated';

/** One cell's result: `application/vnd.porter.cell+json`. */
export const CELL_MIME = 'application/vnd.porter.cell+json';
/** A whole report: `application/vnd.porter.report+json`. */
export const REPORT_MIME = 'application/vnd.porter.report+json';

/** Some fields of `T` always there (the ones a view cannot do without), every other
 * field possibly missing: a result saved by an older porter lacks newer fields, and
 * the views show what is there. */
type Reading<T, K extends keyof T> = Pick<T, K> & Partial<Omit<T, K>>;

export type IErrorInfo = Reading<
  Exclude<schema.Error1, null>,
  'type' | 'message'
>;
export type ICallOrigin = Reading<schema.Origin, 'line' | 'col'>;
export type ICall = Omit<
  Reading<schema.Call, 'line' | 'col' | 'name' | 'status'>,
  'origin'
> & {
  origin?: ICallOrigin | null;
};
export type IDeviceFinding = Reading<schema.DeviceFinding, 'name' | 'kind'>;
export type IOutput = Reading<schema.Output, 'name'>;
export type IReplay = Omit<
  Reading<schema.Replay, 'backend' | 'status'>,
  'error' | 'outputs' | 'calls'
> & {
  error?: IErrorInfo | null;
  outputs?: IOutput[];
  calls?: ICall[] | null;
};
export type IRewrite = Reading<schema.Rewrite, 'source' | 'status'>;
export type IHeadline = Omit<Reading<schema.Headline, 'text'>, 'counts'> & {
  counts?: Partial<schema.Headline['counts']>;
};
export type IPlanItem = Reading<schema.PlanItem, 'kind' | 'title'>;
/** One row of a cell's diagnostics, as porter's model decided it (kind, finding,
 * severity, words, place): the panel's rows and the editor's marks. */
export type IRow = Omit<
  Reading<
    schema.Diagnostic,
    | 'kind'
    | 'finding'
    | 'severity'
    | 'name'
    | 'message'
    | 'group'
    | 'line'
    | 'col'
  >,
  'origin'
> & { origin?: ICallOrigin | null };
export type IFileVerdict = Reading<
  schema.FileVerdict,
  'file' | 'digest' | 'source' | 'accepted'
>;

/** One cell's result (the schema's `cell`), as a view reads it. */
export type ICellEntry = Omit<
  Reading<schema.Cell, 'source'>,
  | 'error'
  | 'calls'
  | 'device_findings'
  | 'replays'
  | 'headline'
  | 'rewrite'
  | 'plan'
  | 'file_verdicts'
  | 'diagnostics'
  | 'source_states'
> & {
  diagnostics?: IRow[];
  error?: IErrorInfo | null;
  calls?: ICall[];
  device_findings?: IDeviceFinding[];
  replays?: IReplay[];
  headline?: IHeadline | null;
  rewrite?: IRewrite | null;
  plan?: IPlanItem[] | null;
  file_verdicts?: IFileVerdict[] | null;
  source_states?: Partial<ISourceStateWords> | null;
};

/**
 * Where a cell's source stands against its porter result, decided from the cell entry
 * alone (`apply.ts`, `sourceState`): `recorded` (the source porter ran: findings live,
 * Apply offered), `applied` (the rewrite porter proposed: findings describe text no
 * longer there, no Apply), `stale` (neither: the cell changed since).
 */
export type SourceState = 'recorded' | 'applied' | 'stale';

/** The words the views show for a cell's source state (the entry's `source_states`). */
export interface ISourceStateWords {
  applied: string;
  stale: string;
}

/** What the views say where a cell entry carries no `source_states` (a result written
 * before porter wrote them). */
export const SOURCE_STATE_WORDS: ISourceStateWords = {
  applied: 'rewrite applied; run the cell to check it again',
  stale: 'the cell changed since porter ran it; run it again to check it'
};

/** The entry's words for `state` (porter's, else `SOURCE_STATE_WORDS`). */
export function sourceStateWords(
  entry: Pick<ICellEntry, 'source_states'>,
  state: Exclude<SourceState, 'recorded'>
): string {
  const words = entry.source_states?.[state];
  return typeof words === 'string' ? words : SOURCE_STATE_WORDS[state];
}

/** A whole report (the schema's root), as a view reads it. */
export type IReport = Omit<
  Partial<schema.PorterReportVersion1>,
  'cells' | 'plan' | 'source' | 'environment' | 'summary'
> & {
  source?: Partial<schema.PorterReportVersion1['source']> | null;
  environment?: {
    python?: string;
    backends?: Reading<schema.Backend, 'spec'>[];
    text?: string;
  } | null;
  plan?: IPlanItem[] | null;
  cells?: ICellEntry[];
  summary?: Partial<schema.PorterReportVersion1['summary']> | null;
};

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
