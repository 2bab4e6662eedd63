import {
  DEFAULT_SETTINGS,
  markedOnly,
  MARKABLE_STATUSES,
  readSettings
} from '../panelsettings';
import schema from '../../schema/plugin.json';
import report from '../../../porter_ext/report/schema/report-1.schema.json';

describe('porter’s settings schema (schema/plugin.json)', () => {
  it('offers exactly the statuses the marks know, all marked by default', () => {
    const marked = schema.properties.markedStatuses;
    expect(marked.items.enum).toEqual(MARKABLE_STATUSES);
    expect(marked.default).toEqual(DEFAULT_SETTINGS.markedStatuses);
  });

  it('has the panel’s default for opening on the first finding', () => {
    expect(schema.properties.openOnFirstFinding.default).toBe(
      DEFAULT_SETTINGS.openOnFirstFinding
    );
  });
});

describe('the statuses the settings offer are the report schema’s', () => {
  it('every finding status of a call, device findings and replay failures', () => {
    const calls: string[] = report.$defs.call.properties.status.enum;
    expect([...MARKABLE_STATUSES].sort()).toEqual(
      [
        ...calls.filter(s => s !== 'standard'),
        'device',
        'replay_failure'
      ].sort()
    );
  });
});

describe('readSettings', () => {
  it('reads the settings registry’s values', () => {
    expect(
      readSettings({
        markedStatuses: ['non_standard'],
        openOnFirstFinding: true
      })
    ).toEqual({ markedStatuses: ['non_standard'], openOnFirstFinding: true });
  });

  it('falls back to the defaults for missing or malformed values', () => {
    expect(readSettings(undefined)).toEqual(DEFAULT_SETTINGS);
    expect(
      readSettings({ markedStatuses: 'all', openOnFirstFinding: 1 })
    ).toEqual(DEFAULT_SETTINGS);
    expect(readSettings({ markedStatuses: ['device', 'nonsense', 3] })).toEqual(
      {
        markedStatuses: ['device'],
        openOnFirstFinding: false
      }
    );
  });

  it('does not hand out the defaults’ own array', () => {
    readSettings({}).markedStatuses.push('x');
    expect(DEFAULT_SETTINGS.markedStatuses).not.toContain('x');
  });
});

describe('markedOnly', () => {
  const findings = [
    { status: 'non_standard', n: 1 },
    { status: 'non_standard_usage', n: 2 },
    { status: 'device', n: 3 }
  ];

  it('keeps the findings of the marked statuses only', () => {
    const marked = new Set(['non_standard', 'device']);
    expect(markedOnly(findings, marked).map(f => f.n)).toEqual([1, 3]);
  });

  it('marks nothing when no status is marked', () => {
    expect(markedOnly(findings, new Set())).toEqual([]);
  });
});
