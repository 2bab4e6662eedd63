import { utf16Column } from '../columns';
import { ICellRef, markRange, marksKey, originCell } from '../positions';
import { ICall } from '../types';

const refs: ICellRef[] = [
  { index: 0, executionCount: null, id: 'md' },
  { index: 1, executionCount: 2, id: 'def' },
  { index: 2, executionCount: 3, id: 'call' }
];

const inside: ICall = {
  line: 2,
  col: 4,
  end_line: 2,
  end_col: 22,
  name: 'numpy.sum',
  status: 'non_standard_usage',
  origin: {
    index: null,
    execution_count: 2,
    cell_id: null,
    line: 4,
    col: 36,
    end_line: 4,
    end_col: 48
  }
};

describe('the cell an origin names', () => {
  it('is found by id, else execution count, else position', () => {
    expect(originCell({ ...inside.origin!, cell_id: 'def' }, refs)).toBe(1);
    expect(originCell(inside.origin!, refs)).toBe(1);
    expect(originCell({ line: 1, col: 0, index: 2 }, refs)).toBe(2);
    expect(originCell({ line: 1, col: 0, execution_count: 9 }, refs)).toBe(-1);
  });
});

describe('markRange: the recorded column range on the line', () => {
  it('covers an operator’s whole expression', () => {
    const text = 'z = (x - m) * s';
    const place = { origin: null, line: 1, col: 4, endLine: 1, endCol: 15 };
    const { from, to } = markRange(text, place, 1, utf16Column);
    expect(text.slice(from, to)).toBe('(x - m) * s');
  });

  it('is not moved by non-ASCII text earlier on the line', () => {
    const text = "    label = 'température 🔥'; return np.sum(x, 0) * 2";
    const place = { origin: null, line: 4, col: 36, endLine: 4, endCol: 48 };
    const { from, to } = markRange(text, place, 4, utf16Column);
    expect(text.slice(from, to)).toBe('np.sum(x, 0)');
  });

  it('falls back to the name at the column without an end', () => {
    const text = 'y = x.sum(1)';
    const place = {
      origin: null,
      line: 1,
      col: 4,
      endLine: null,
      endCol: null
    };
    const { from, to } = markRange(text, place, 1, utf16Column);
    expect(text.slice(from, to)).toBe('x.sum');
  });
});

describe('marksKey: marks are dispatched again only when they change', () => {
  const mark = {
    from: 4,
    to: 12,
    severity: 'error',
    markClass: 'porter-mark porter-mark-error',
    message: 'Tensor.sum [non_standard]'
  };

  it('is the same for the same marks, made again', () => {
    expect(marksKey([{ ...mark }])).toBe(marksKey([mark]));
    expect(marksKey([])).toBe(marksKey([]));
  });

  it('differs when a range, the words or the quick fix differ', () => {
    const key = marksKey([mark]);
    expect(marksKey([{ ...mark, to: 13 }])).not.toBe(key);
    expect(marksKey([{ ...mark, message: 'called from cell 2' }])).not.toBe(
      key
    );
    expect(marksKey([{ ...mark, actions: [{}] }])).not.toBe(key);
    expect(marksKey([])).not.toBe(key);
  });
});
