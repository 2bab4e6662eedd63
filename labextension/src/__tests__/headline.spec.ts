import { headlineText, ICellEntry, NO_HEADLINE } from '../types';
// written by Python (tests/report/headline_cells.py); tests/report/test_headline.py
// checks that this file is what Python writes now
import fixture from './fixtures/headline.json';

const cells = fixture.cells as unknown as ICellEntry[];

describe("a cell's headline: Python's words, never recounted", () => {
  it('has a fixture with the issue cell and its Python words', () => {
    expect(cells.length).toBe(fixture.text_view.length);
    expect(fixture.text_view[0]).toBe(
      'porter: 3 findings in 5 array calls (1 call outside the standard, 1 usage ' +
        'outside the standard, 1 device finding); 2/2 replays ok; dtype changed on ' +
        'numpy (float32 → float64)'
    );
  });

  it.each(cells.map((cell, i) => [i, cell] as [number, ICellEntry]))(
    'shows the words of the text view for cell %i',
    (i, cell) => {
      expect(headlineText(cell)).toBe(fixture.text_view[i]);
    }
  );

  it('shows the same words when the counts would say otherwise', () => {
    // the control replay timed out and jax put an output on the wrong device: counting
    // here would say "2/3 replays ok; failed on torch; differs on jax:cpu:1"
    const text = headlineText(cells[0]);
    expect(text).not.toContain('failed on');
    expect(text).not.toContain('jax');
  });

  it('says a result predates headlines instead of counting', () => {
    const old: ICellEntry = { ...cells[0] };
    delete old.headline;
    expect(headlineText(old)).toBe(NO_HEADLINE);
    expect(headlineText({ ...cells[0], headline: null })).toBe(NO_HEADLINE);
  });
});
