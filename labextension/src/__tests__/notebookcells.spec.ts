import { ICodeCellModel } from '@jupyterlab/cells';
import { Signal } from '@lumino/signaling';

import {
  movesCells,
  notebookCells,
  notebookOf,
  resultsChanged
} from '../notebookcells';
import { CELL_MIME } from '../types';

/** A shared notebook as the extension reads it: cells and a `changed` signal. */
function sharedNotebook() {
  const notebook = {
    changed: null as unknown as Signal<object, unknown>,
    cells: [
      {
        id: 'def',
        cell_type: 'code',
        execution_count: 1,
        getOutputs: () => [
          { data: { [CELL_MIME]: { source: 'def f(x): ...\n', calls: [] } } }
        ]
      },
      { id: 'md', cell_type: 'markdown' }
    ]
  };
  notebook.changed = new Signal<object, unknown>(notebook);
  const model = {
    sharedModel: { id: 'def', notebook }
  } as unknown as ICodeCellModel;
  return { notebook, model };
}

describe("the notebook's results are read again only when cells move", () => {
  it('tells a change of the cells from one of metadata or state', () => {
    expect(movesCells({ cellsChange: [{ insert: [{}] }] })).toBe(true);
    expect(movesCells({ metadataChange: new Map() })).toBe(false);
    expect(
      movesCells({ stateChange: [{ name: 'dirty', newValue: true }] })
    ).toBe(false);
    expect(movesCells(null)).toBe(false);
  });

  it('marks no cell again when the kernel writes metadata or the notebook gets dirty', () => {
    const { notebook, model } = sharedNotebook();
    expect(notebookOf(model)).toBe(notebook);
    const cells = notebookCells(notebook);
    expect(cells.map(c => c.ref.id)).toEqual(['def', 'md']);
    expect(cells[0].entry?.source).toBe('def f(x): ...\n');
    const seen: object[] = [];
    const onResults = (_: unknown, nb: object) => seen.push(nb);
    resultsChanged.connect(onResults);
    try {
      notebook.changed.emit({ metadataChange: new Map() });
      notebook.changed.emit({
        stateChange: [{ name: 'dirty', newValue: true }]
      });
      expect(seen).toEqual([]);
      expect(notebookCells(notebook)).toBe(cells); // the index kept
      notebook.changed.emit({ cellsChange: [{ insert: [{}] }] });
      expect(seen).toEqual([notebook]);
      expect(notebookCells(notebook)).not.toBe(cells); // read again
    } finally {
      resultsChanged.disconnect(onResults);
    }
  });
});
