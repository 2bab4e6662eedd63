/**
 * porter's settings in JupyterLab's settings registry (`schema/plugin.json`, plugin
 * `porter-ext:plugin`), read defensively: a value of the wrong shape falls back to its
 * default. Pure, so that jest checks the defaults against the schema.
 */

/** The statuses a mark may be for: the calls' statuses that are findings
 * (CONTRACT.md), `device` (device findings) and `replay_failure`. */
export const MARKABLE_STATUSES: readonly string[] = [
  'non_standard',
  'non_standard_usage',
  'device_specific',
  'host_sync',
  'acknowledged',
  'outside_namespace',
  'device',
  'replay_failure'
];

export interface IPorterSettings {
  /** Findings of these statuses are marked in the cell editors; others are not. */
  markedStatuses: string[];
  /** Open the Porting panel when the active notebook's first finding shows. */
  openOnFirstFinding: boolean;
}

export const DEFAULT_SETTINGS: IPorterSettings = {
  markedStatuses: [...MARKABLE_STATUSES],
  openOnFirstFinding: false
};

/** The settings in `composite` (the registry's merged values), defaults where a value
 * is missing or of the wrong type; unknown statuses are dropped. */
export function readSettings(composite: unknown): IPorterSettings {
  const raw = (
    composite && typeof composite === 'object' ? composite : {}
  ) as Record<string, unknown>;
  const statuses = Array.isArray(raw.markedStatuses)
    ? raw.markedStatuses.filter(
        (s): s is string =>
          typeof s === 'string' && MARKABLE_STATUSES.includes(s)
      )
    : DEFAULT_SETTINGS.markedStatuses;
  const open =
    typeof raw.openOnFirstFinding === 'boolean'
      ? raw.openOnFirstFinding
      : DEFAULT_SETTINGS.openOnFirstFinding;
  return { markedStatuses: [...statuses], openOnFirstFinding: open };
}

/** The findings whose status is among `marked`: what the editor marks (a status left
 * out of the setting gets no mark). */
export function markedOnly<T extends { status: string }>(
  findings: readonly T[],
  marked: ReadonlySet<string>
): T[] {
  return findings.filter(f => marked.has(f.status));
}
