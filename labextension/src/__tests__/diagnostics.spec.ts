import {
  collectDiagnostics,
  flatten,
  filterDiagnostics,
  groupDiagnostics,
  IDiagnostic,
  IResultCell,
  rowPlace,
  rowTitle,
  scrollToShow,
  sortDiagnostics,
  windowOf
} from '../diagnostics';
import { ICall, ICellEntry } from '../types';
import fixture from './fixtures/devices_notebook.json';
import moduleFixture from './fixtures/module_notebook.json';

/** notebooks/02_devices.ipynb as porter's kernel ran it (real porter output). */
const devices = fixture as unknown as {
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

function call(over: Partial<ICall>): ICall {
  return {
    line: 1,
    col: 4,
    name: 'numpy.sum',
    status: 'non_standard_usage',
    suggestion: 'xp.sum(x, axis=1)',
    count: 1,
    ...over
  };
}

function cellsOf(...entries: (ICellEntry | null)[]): IResultCell[] {
  return entries.map((entry, i) => ({
    ref: { index: i, executionCount: entry ? i + 1 : null, id: `c${i}` },
    entry,
    stale: false
  }));
}

describe('collectDiagnostics over a real run of notebooks/02_devices.ipynb', () => {
  const rows = collectDiagnostics(notebook());

  it('shows a device finding of another cell’s code in the cell that wrote it', () => {
    // cell 5 calls column_stats (cell 3, In [2]): xp.zeros there has no device=
    const zeros = rows.find(r => r.name === 'jax.numpy.zeros')!;
    expect(zeros.cell).toBe(3);
    expect(zeros.cellLabel).toBe('cell 3 · In [2]');
    expect([zeros.line, zeros.col]).toEqual([4, 13]);
    expect(zeros.calledFrom).toBe('cell 5 · In [3], line 1');
    expect(zeros.status).toBe('device');
    expect(zeros.severity).toBe('warning');
  });

  it('keeps a finding of the cell’s own code in the cell, at its line', () => {
    const div = rows.filter(r => r.name === 'Array.__truediv__');
    expect(div.map(r => [r.cell, r.line, r.col])).toEqual([
      [5, 2, 7],
      [5, 2, 7]
    ]);
    expect(div[0].calledFrom).toBeNull();
  });

  it('has a row without a line for an output on the wrong device', () => {
    const counts = rows.filter(r => r.name === 'counts');
    expect(counts.length).toBe(2);
    expect(counts.every(r => r.line === null && r.cell === 5)).toBe(true);
  });

  it('lists a failed replay with its exception as raw detail text', () => {
    const failure = rows.find(r => r.status === 'replay_failure')!;
    expect(failure.cell).toBe(5);
    expect(failure.line).toBe(2);
    expect(failure.severity).toBe('error');
    expect(failure.message).toContain(
      'replay on strict:device1: error ValueError'
    );
    expect(failure.detail).toContain(
      "Arrays from two different devices (array_api_strict.Device('device1')"
    );
  });

  it('lists a call outside the namespace as a finding', () => {
    const jit = rows.find(r => r.name === 'jax.jit')!;
    expect([jit.cell, jit.line, jit.col, jit.status]).toEqual([
      9,
      1,
      4,
      'outside_namespace'
    ]);
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
});

describe('collectDiagnostics over hand-made entries', () => {
  it('names a call written in a cell the notebook lacks, in the calling cell', () => {
    const entry: ICellEntry = {
      source: 'y = f(x)\n',
      calls: [
        call({
          line: 1,
          col: 4,
          origin: { execution_count: 99, line: 7, col: 2 }
        })
      ]
    };
    const [row] = collectDiagnostics(cellsOf(entry));
    expect([row.cell, row.line, row.col]).toEqual([0, 1, 0]);
    expect(row.message).toContain('(in code from In [99], line 7)');
  });

  it('leaves standard calls out and keeps muted ones as information', () => {
    const entry: ICellEntry = {
      source: 'x\n',
      calls: [
        call({ status: 'standard' }),
        call({ status: 'host_sync', name: 'Tensor.item', suggestion: null })
      ]
    };
    const rows = collectDiagnostics(cellsOf(entry));
    expect(rows.map(r => [r.name, r.severity])).toEqual([
      ['Tensor.item', 'info']
    ]);
    expect(rows[0].group).toBe('host_sync, no standard replacement');
  });

  it('lists the cell’s own error and an output that differs', () => {
    const entry: ICellEntry = {
      source: 'x\n',
      error: { type: 'KeyError', message: "'a'\nsecond line", line: 1 },
      replays: [
        {
          backend: 'jax',
          status: 'ok',
          outputs: [
            {
              name: 'y',
              within_tolerance: false,
              max_abs_err: 0.5,
              mismatched: 3
            }
          ]
        }
      ]
    };
    const rows = collectDiagnostics(cellsOf(entry));
    expect(rows.map(r => r.status)).toEqual(['cell_error', 'mismatch']);
    expect(rows[0].message).toBe("the cell raised KeyError: 'a' …");
    expect(rows[0].detail).toBe("KeyError: 'a'\nsecond line");
    expect(rows[1].message).toBe(
      'jax: y differs (max abs err 0.5, 3 mismatched)'
    );
  });

  it('titles a row with its place, its calling cell and its message', () => {
    const defining: ICellEntry = {
      source: 'def f(x):\n    return x.view(-1)\n'
    };
    const calling: ICellEntry = {
      source: 'y = f(x)\n',
      calls: [
        call({
          name: 'Tensor.view',
          status: 'non_standard',
          line: 1,
          origin: { execution_count: 1, line: 2, col: 11 }
        })
      ]
    };
    const [row] = collectDiagnostics(cellsOf(defining, calling));
    expect(rowTitle(row)).toMatch(
      /^cell 0 · In \[1\], line 2: Tensor.view \(called from cell 1 · In \[2\], line 1\) — /
    );
  });
});

function row(over: Partial<IDiagnostic>): IDiagnostic {
  return {
    id: over.id ?? String(Math.random()),
    status: 'non_standard',
    severity: 'error',
    name: 'numpy.sum',
    message: 'numpy.sum',
    group: 'xp.sum(x, axis=1)',
    cell: 0,
    cellLabel: 'cell 0',
    file: null,
    line: 1,
    col: 0,
    calledFrom: null,
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
      expect(row.calledFrom).toBe('cell 5 · In [3], line 1');
      expect(row.message).not.toContain('in code from');
    }
    expect(rowPlace(inFile[0])).toBe('norms.py line 5');
    // grouped by the file, the row names the replacement itself
    expect(inFile[0].message).toMatch(/^Tensor\.pow → xp\.pow\(m, 2\): /);
    expect(rowTitle(inFile[0])).toMatch(
      /^norms\.py line 5: Tensor\.pow \(called from cell 5 · In \[3\], line 1\) — /
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
    expect(failed.calledFrom).toBe('cell 5 · In [0], line 1');
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
