import {
  collectDiagnostics,
  flatten,
  filterDiagnostics,
  groupDiagnostics,
  IDiagnostic,
  IResultCell,
  notebookCounts,
  rowTitle,
  scrollToShow,
  sortDiagnostics,
  windowOf
} from '../diagnostics';
import { ICellEntry, IRow } from '../types';
import fixture from './fixtures/devices_notebook.json';
import moduleFixture from './fixtures/module_notebook.json';

/** notebooks/02_devices.ipynb as porter's kernel ran it (real porter output). */
const devices = fixture as unknown as {
  /** What the panel's head says of these cells, as Python words it. */
  panel_counts: string;
  cells: {
    index: number;
    execution_count: number | null;
    id: string;
    entry: ICellEntry | null;
  }[];
};

function notebook(stale: number[] = []): IResultCell[] {
  return devices.cells.map(c => ({
    ref: { index: c.index, executionCount: c.execution_count, id: c.id },
    entry: c.entry,
    stale: stale.includes(c.index)
  }));
}

function cellsOf(...entries: (ICellEntry | null)[]): IResultCell[] {
  return entries.map((entry, i) => ({
    ref: { index: i, executionCount: entry ? i + 1 : null, id: `c${i}` },
    entry,
    stale: false
  }));
}

/** Every row of the fixture, as porter's model wrote it, with the cell holding it. */
const written = ([] as { cell: number; row: IRow }[]).concat(
  ...devices.cells.map(c =>
    (c.entry?.diagnostics ?? []).map(r => ({ cell: c.index, row: r }))
  )
);

/** The row porter wrote of `name` (the first). */
function writtenRow(name: string): IRow {
  return written.find(w => w.row.name === name)!.row;
}

describe('collectDiagnostics over a real run of notebooks/02_devices.ipynb', () => {
  const rows = collectDiagnostics(notebook());

  it('lists exactly porter’s rows, in its words and severities', () => {
    expect(
      rows.map(r => [
        r.status,
        r.kindText,
        r.severityText,
        r.severity,
        r.finding,
        r.message
      ])
    ).toEqual(
      written.map(w => [
        w.row.kind,
        w.row.kind_text,
        w.row.severity_text,
        w.row.severity,
        w.row.finding,
        w.row.message
      ])
    );
  });

  it('says the counts porter’s headlines say, in porter’s words', () => {
    const entries = devices.cells.map(c => c.entry);
    expect(notebookCounts(entries)).toBe(devices.panel_counts);
    // the sums are over exactly these rows
    const findings = rows.filter(r => r.finding).length;
    expect(devices.panel_counts).toContain(String(findings));
    expect(devices.panel_counts).toContain(String(rows.length - findings));
  });

  it('says no count words for results older than them', () => {
    const older = devices.cells.map(c => {
      if (!c.entry?.headline) {
        return c.entry;
      }
      const headline = { ...c.entry.headline };
      delete headline.sum_format;
      return { ...c.entry, headline };
    });
    expect(notebookCounts(older)).toBe('');
  });

  it('shows a device finding of another cell’s code in the cell that wrote it', () => {
    // cell 5 calls column_stats (cell 3, In [2]): xp.zeros there has no device=
    const zeros = rows.find(r => r.name === 'jax.numpy.zeros')!;
    expect(zeros.cell).toBe(3);
    expect(zeros.cellLabel).toBe('In [2]');
    // line 4 of the recorded body is line 5 of the cell below its %%port line
    expect([zeros.line, zeros.shownLine, zeros.col]).toEqual([4, 5, 13]);
    expect(zeros.calledFromText).toBe(
      writtenRow('jax.numpy.zeros').called_from_text
    );
    expect(zeros.calledFromText).toContain('In [3], line 2');
    expect(zeros.status).toBe('device');
  });

  it('keeps a finding of the cell’s own code in the cell, at its line', () => {
    const div = rows.filter(r => r.name === 'Array.__truediv__');
    expect(div.map(r => [r.cell, r.line, r.shownLine, r.col])).toEqual([
      [5, 2, 3, 7],
      [5, 2, 3, 7]
    ]);
    expect(div[0].calledFromText).toBeNull();
  });

  it('has a row without a line for an output on the wrong device', () => {
    const counts = rows.filter(
      r => r.name === 'counts' && r.status === 'device'
    );
    expect(counts.length).toBe(2);
    expect(counts.every(r => r.line === null && r.cell === 5)).toBe(true);
  });

  it('lists a failed replay with its exception as raw detail text', () => {
    const failure = rows.find(r => r.status === 'replay_failure')!;
    expect([failure.cell, failure.line, failure.shownLine]).toEqual([5, 2, 3]);
    expect(failure.severity).toBe('error');
    expect(failure.detail).toContain(
      "Arrays from two different devices (array_api_strict.Device('device1')"
    );
  });

  it('has no row for a call the standard does not judge (jax.jit)', () => {
    expect(rows.find(r => r.name === 'jax.jit')).toBeUndefined();
  });

  it('marks the rows of a stale cell stale', () => {
    const stale = collectDiagnostics(notebook([5]));
    expect(stale.filter(r => r.stale).length).toBeGreaterThan(0);
    // the stale flag follows the cell whose result it is, not where a row is shown
    expect(stale.find(r => r.name === 'jax.numpy.zeros')!.stale).toBe(true);
  });

  it('gives every row a distinct id', () => {
    expect(new Set(rows.map(r => r.id)).size).toBe(rows.length);
  });

  it('places a row whose writing cell the notebook lacks where its cell called', () => {
    const cell5 = devices.cells.find(c => c.index === 5)!;
    const alone = collectDiagnostics(cellsOf(cell5.entry));
    const zeros = alone.find(r => r.name === 'jax.numpy.zeros')!;
    // line 1 of its recorded source: the line that called column_stats
    expect([zeros.cell, zeros.line, zeros.col]).toEqual([0, 1, 0]);
  });

  it('titles a row as porter titled it', () => {
    const zeros = rows.find(r => r.name === 'jax.numpy.zeros')!;
    const porter = writtenRow('jax.numpy.zeros');
    expect(rowTitle(zeros)).toBe(porter.title);
    expect(zeros.place).toBe(porter.place);
    expect(zeros.place).toContain('In [2]');
  });

  it('reads results older than a row’s place and caller words', () => {
    const older = devices.cells.map(c => ({
      ref: { index: c.index, executionCount: c.execution_count, id: c.id },
      entry: c.entry && {
        ...c.entry,
        diagnostics: (c.entry.diagnostics ?? []).map(r => {
          const rest = { ...r };
          delete rest.place;
          delete rest.called_from_text;
          return rest;
        })
      },
      stale: false
    }));
    const zeros = collectDiagnostics(older).find(
      r => r.name === 'jax.numpy.zeros'
    )!;
    // the bare words porter wrote, no sentence made of them
    expect(zeros.calledFromText).toBe(
      writtenRow('jax.numpy.zeros').called_from
    );
    expect(zeros.place).toBe('');
  });
});

function row(over: Partial<IDiagnostic>): IDiagnostic {
  return {
    id: over.id ?? String(Math.random()),
    status: 'non_standard',
    kindText: 'call outside the standard',
    severityText: 'error: call outside the standard',
    severity: 'error',
    name: 'numpy.sum',
    message: 'numpy.sum',
    group: 'xp.sum(x, axis=1)',
    cell: 0,
    cellLabel: 'cell 1',
    finding: true,
    title: 'numpy.sum',
    file: null,
    line: 1,
    shownLine: 1,
    col: 0,
    place: '',
    calledFromText: null,
    detail: null,
    count: 1,
    stale: false,
    ...over
  };
}

describe('filter, sort, group', () => {
  const rows = [
    row({
      id: 'a',
      cell: 2,
      line: 3,
      severity: 'warning',
      message: 'beta msg'
    }),
    row({
      id: 'b',
      cell: 1,
      line: null,
      severity: 'error',
      message: 'gamma msg'
    }),
    row({
      id: 'c',
      cell: 1,
      line: 2,
      severity: 'info',
      message: 'alpha msg',
      group: 'xp.max'
    }),
    row({
      id: 'd',
      cell: 1,
      line: 2,
      col: 9,
      severity: 'error',
      message: 'alpha msg',
      count: 4
    })
  ];
  const ids = (rs: IDiagnostic[]) => rs.map(r => r.id);

  it('sorts by place: cell, line (none last), column', () => {
    expect(ids(sortDiagnostics(rows, 'place'))).toEqual(['c', 'd', 'b', 'a']);
    expect(ids(sortDiagnostics(rows, 'place', false))).toEqual([
      'a',
      'b',
      'd',
      'c'
    ]);
  });

  it('sorts by severity, then place', () => {
    expect(ids(sortDiagnostics(rows, 'severity'))).toEqual([
      'd',
      'b',
      'a',
      'c'
    ]);
  });

  it('sorts by message, then place', () => {
    expect(ids(sortDiagnostics(rows, 'message'))).toEqual(['c', 'd', 'a', 'b']);
  });

  it('does not change the rows it is given', () => {
    sortDiagnostics(rows, 'severity');
    expect(ids(rows)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('filters on every word, over name, message and replacement, ignoring case', () => {
    expect(ids(filterDiagnostics(rows, 'XP.MAX'))).toEqual(['c']);
    expect(ids(filterDiagnostics(rows, 'alpha   MSG'))).toEqual(['c', 'd']);
    expect(ids(filterDiagnostics(rows, 'numpy nothing'))).toEqual([]);
    expect(filterDiagnostics(rows, '  ')).toBe(rows);
  });

  it('groups by replacement in the order of first rows, adding up porter’s counts', () => {
    const groups = groupDiagnostics(sortDiagnostics(rows, 'place'));
    expect(groups.map(g => [g.key, g.count, g.severity, ids(g.rows)])).toEqual([
      ['xp.max', 1, 'info', ['c']],
      ['xp.sum(x, axis=1)', 6, 'error', ['d', 'b', 'a']]
    ]);
  });

  it('flattens groups into heads and rows, leaving out the rows of collapsed ones', () => {
    const groups = groupDiagnostics(rows);
    const open = flatten(groups, new Set());
    expect(
      open.map(i => (i.kind === 'group' ? `[${i.group.key}]` : i.row.id))
    ).toEqual(['[xp.sum(x, axis=1)]', 'a', 'b', 'd', '[xp.max]', 'c']);
    const shut = flatten(groups, new Set(['xp.sum(x, axis=1)']));
    expect(
      shut.map(i => (i.kind === 'group' ? i.collapsed : i.row.id))
    ).toEqual([true, false, 'c']);
  });
});

describe('windowing over fixed-height rows', () => {
  it('builds the rows in view and the overscan, at their offset', () => {
    // 2 000 rows of 20 px, a 400 px viewport scrolled to row 100
    expect(windowOf(2000, 20, 2000, 400, 5)).toEqual({
      start: 95,
      end: 125,
      offset: 1900,
      height: 40000
    });
  });

  it('clamps at the top and the bottom', () => {
    expect(windowOf(2000, 20, -50, 400, 5)).toMatchObject({
      start: 0,
      end: 25
    });
    expect(windowOf(2000, 20, 1e9, 400, 5)).toMatchObject({
      start: 1975,
      end: 2000
    });
  });

  it('builds nothing for an empty list, everything for a short one', () => {
    expect(windowOf(0, 20, 0, 400)).toEqual({
      start: 0,
      end: 0,
      offset: 0,
      height: 0
    });
    expect(windowOf(3, 20, 0, 400)).toMatchObject({ start: 0, end: 3 });
  });

  it('keeps a partly shown last row', () => {
    expect(windowOf(100, 20, 10, 45, 0)).toMatchObject({ start: 0, end: 3 });
  });

  it('scrolls the least that shows a row', () => {
    expect(scrollToShow(10, 20, 0, 100)).toBe(120);
    expect(scrollToShow(2, 20, 100, 100)).toBe(40);
    expect(scrollToShow(6, 20, 100, 100)).toBe(100);
  });
});

describe('findings in the person’s module (real run of notebooks/03)', () => {
  const cells: IResultCell[] = moduleFixture.cells.map(c => ({
    ref: { index: c.index, executionCount: c.execution_count, id: c.id },
    entry: c.entry as ICellEntry | null,
    stale: false
  }));
  const rows = collectDiagnostics(cells);
  const inFile = rows.filter(r => r.file !== null);

  it('are rows in norms.py at line 5, the calling cell named', () => {
    expect(inFile.map(r => [r.name, r.file, r.line, r.col])).toEqual([
      ['Tensor.pow', 'norms.py', 5, 8],
      ['Tensor.sum', 'norms.py', 5, 8],
      ['Tensor.sqrt', 'norms.py', 5, 8]
    ]);
    for (const row of inFile) {
      expect(row.cell).toBe(5);
      // a live session names the calling cell by its prompt, lines as the editor counts
      const porter = ([] as IRow[])
        .concat(
          ...moduleFixture.cells.map(
            c => (c.entry?.diagnostics ?? []) as unknown as IRow[]
          )
        )
        .find(r => r.name === row.name && r.file)!;
      expect(row.calledFromText).toBe(porter.called_from_text);
      expect(row.place).toBe(porter.place);
      expect(row.calledFromText).toContain('In [3], line 2');
      expect(row.message).not.toContain('in code from');
    }
    expect(inFile[0].place).toContain('norms.py');
    // grouped by the file, the row names the replacement itself
    expect(inFile[0].message).toMatch(/^Tensor\.pow → xp\.pow\(m, 2\): /);
    expect(rowTitle(inFile[0])).toMatch(
      /^norms\.py line 5: Tensor\.pow \(called from In \[3\], line 2\) — /
    );
  });

  it('keep the plain cell’s helper in its cell', () => {
    const mean = rows.find(r => r.name === 'Tensor.mean')!;
    expect([mean.file, mean.cell, mean.line]).toEqual([null, 3, 2]);
  });

  it('are grouped under their file, after the rows in cells', () => {
    const groups = groupDiagnostics(sortDiagnostics(rows, 'place'));
    expect(groups.map(g => [g.key, g.label, g.file, g.count])).toEqual([
      ['xp.mean(x, axis=0)', 'xp.mean(x, axis=0)', null, 1],
      ['file:norms.py', 'norms.py', 'norms.py', 6]
    ]);
    expect(filterDiagnostics(rows, 'norms.py').length).toBe(3);
  });

  it('include a replay that failed inside the file, at its line there', () => {
    const replayed = cells.map(c =>
      c.ref.index === 5
        ? { ...c, entry: moduleFixture.replayed as ICellEntry }
        : c
    );
    const failed = collectDiagnostics(replayed).find(
      r => r.status === 'replay_failure'
    )!;
    expect([failed.file, failed.line, failed.cell]).toEqual(['norms.py', 5, 5]);
    const porter = (moduleFixture.replayed.diagnostics as IRow[]).find(
      r => r.kind === 'replay_failure'
    )!;
    expect(failed.calledFromText).toBe(porter.called_from_text);
    expect(failed.calledFromText).toContain('In [0], line 2');
  });

  it('are stale once a rewrite of their file was applied, the cell’s rows not', () => {
    const applied = collectDiagnostics(cells, file => file === 'norms.py');
    expect(applied.filter(r => r.stale).map(r => r.file)).toEqual(
      inFile.map(() => 'norms.py')
    );
    expect(applied.find(r => r.name === 'Tensor.mean')!.stale).toBe(false);
    expect(inFile.every(r => !r.stale)).toBe(true);
  });
});
