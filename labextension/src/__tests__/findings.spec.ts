import {
  fileFindings,
  findingsIn,
  INotebookResults,
  originFile,
  resolveFile
} from '../findings';
import { INotebookCell } from '../notebookcells';
import { ICellEntry } from '../types';
import fixture from './fixtures/module_notebook.json';

/** notebooks/03_port_a_module.ipynb as porter ran it (real porter output): cell 5 calls
 * `cosine_similarity` of notebooks/norms.py and `center` of plain cell 3. */
const run = fixture as unknown as {
  cells: {
    index: number;
    execution_count: number | null;
    id: string;
    entry: ICellEntry | null;
  }[];
  replayed: ICellEntry;
};

const NOTEBOOK = 'notebooks/03_port_a_module.ipynb';

function cells(replayed = false): INotebookCell[] {
  return run.cells.map(c => ({
    ref: { index: c.index, executionCount: c.execution_count, id: c.id },
    entry: replayed && c.index === 5 ? run.replayed : c.entry
  }));
}

describe('resolveFile: a file named relative to the notebook, as a server path', () => {
  it('joins the notebook’s folder and the file', () => {
    expect(resolveFile(NOTEBOOK, 'norms.py')).toBe('notebooks/norms.py');
    expect(resolveFile('03.ipynb', 'norms.py')).toBe('norms.py');
    expect(resolveFile('a/b/n.ipynb', './lib/../m.py')).toBe('a/b/m.py');
    expect(resolveFile('a/b/n.ipynb', '../m.py')).toBe('a/m.py');
  });

  it('leaves a path that climbs above the server root as written', () => {
    expect(resolveFile('n.ipynb', '../m.py')).toBe('../m.py');
  });
});

describe('findings written in the person’s module (real run of notebooks/03)', () => {
  it('are the module’s: Tensor.pow, sum and sqrt at norms.py line 5, the calling cell named', () => {
    const found = fileFindings('notebooks/norms.py', [
      { path: NOTEBOOK, cells: cells() }
    ]);
    expect(found.map(f => [f.name, f.place.line, f.place.col])).toEqual([
      ['Tensor.pow', 5, 8],
      ['Tensor.sum', 5, 8],
      ['Tensor.sqrt', 5, 8]
    ]);
    // the range the model wrote: `m.pow(2)` ends at column 16
    expect(found[0].place.endCol).toBe(16);
    expect(found[0].severity).toBe('error');
    // porter's words for the row (its `hover`), the calling cell named as it is
    expect(found[0].message).toContain('Tensor.pow → xp.pow(m, 2)');
    expect(found[0].message).toContain('called from In [3], line 2');
  });

  it('are nobody else’s: another path, or the same name in another folder', () => {
    const notebooks = [{ path: NOTEBOOK, cells: cells() }];
    expect(fileFindings('norms.py', notebooks)).toEqual([]);
    expect(fileFindings('notebooks/other.py', notebooks)).toEqual([]);
  });

  it('are not marked in the calling cell; the plain cell’s helper is marked in its cell', () => {
    const all = cells();
    expect(findingsIn(5, all, all[5].entry)).toEqual([]);
    expect(findingsIn(3, all, all[3].entry).map(f => f.name)).toEqual([
      'Tensor.mean'
    ]);
  });

  it('include a replay that failed inside the file, at its line there', () => {
    const found = fileFindings('notebooks/norms.py', [
      { path: NOTEBOOK, cells: cells(true) }
    ]);
    const failed = found.filter(f => f.status === 'replay_failure');
    expect(failed.map(f => f.place.line)).toEqual([5]);
    expect(failed[0].message).toContain(
      "replay on numpy: error AttributeError: 'numpy.ndarray' object has no attribute 'pow'"
    );
    expect(failed[0].message).toContain('called from In [0], line 2');
    // the calling cell still shows where its replay failed
    const all = cells(true);
    expect(
      findingsIn(5, all, all[5].entry).map(f => [f.status, f.place.line])
    ).toEqual([['replay_failure', 1]]);
  });

  it('name the notebook of the calling cell when several notebooks are open', () => {
    const notebooks: INotebookResults[] = [
      { path: NOTEBOOK, cells: cells() },
      { path: 'notebooks/copy.ipynb', cells: cells() }
    ];
    const found = fileFindings('notebooks/norms.py', notebooks);
    expect(found.length).toBe(6);
    expect(found[3].message).toContain(
      'called from In [3], line 2 (copy.ipynb)'
    );
  });
});

describe('originFile', () => {
  it('is the file of a file origin and null for a cell’s', () => {
    const call = run.cells[5].entry!.calls!;
    expect(call.map(c => originFile(c.origin))).toContain('norms.py');
    expect(originFile({ line: 2, col: 0, execution_count: 2 })).toBeNull();
    expect(originFile(null)).toBeNull();
  });
});
