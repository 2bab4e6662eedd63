/**
 * @jest-environment jsdom
 */
// porter's one view of a cell, checked against the JSON Python writes
// (tests/report/headline_cells.py): the headline, the label, each plan item's state and
// each output's verdict in the JSON's words, the diagnostics rows, the tabs, Apply.
import { APPLY_EVENT, renderCell, renderReport, TAB_TITLES } from '../render';
import { ICellEntry, IReport } from '../types';
import fixture from './fixtures/headline.json';

const cells = fixture.cells as unknown as ICellEntry[];
const report = fixture.report as unknown as IReport;

function texts(root: HTMLElement, selector: string): string[] {
  return Array.from(root.querySelectorAll(selector)).map(
    node => node.textContent ?? ''
  );
}

describe("a cell's view: the JSON's words, drawn", () => {
  it.each(cells.map((cell, i) => [i, cell] as [number, ICellEntry]))(
    'draws cell %i from its JSON alone',
    (_, cell) => {
      const view = renderCell(cell);
      expect(view.querySelector('.porter-verdict')?.textContent).toBe(
        cell.headline?.text
      );
      expect(view.querySelector('.porter-cell-label')?.textContent).toBe(
        ` (${cell.label})`
      );
      expect(texts(view, '.porter-plan-item .porter-badge')).toEqual(
        (cell.plan ?? []).map(item => item.state_text)
      );
      expect(texts(view, '.porter-plan-title')).toEqual(
        (cell.plan ?? []).map(item => item.title)
      );
      expect(texts(view, '.porter-tab')).toEqual(TAB_TITLES);
      const shown = view.textContent ?? '';
      for (const row of cell.diagnostics ?? []) {
        expect(shown).toContain(row.message);
      }
      for (const replay of cell.replays ?? []) {
        for (const out of replay.outputs ?? []) {
          expect(shown).toContain(out.verdict_text);
        }
        if (replay.error) {
          expect(replay.error.text).toBeTruthy();
          expect(shown).toContain(replay.error.text);
        }
      }
      // what the cell raised, in porter's words (`error.text`)
      expect(texts(view, '.porter-error')).toEqual(
        cell.error ? [cell.error.text] : []
      );
    }
  );

  it('draws a cell that raised', () => {
    expect(cells.filter(c => c.error?.text).length).toBeGreaterThan(0);
  });

  it('shows one tab at a time, Calls first', () => {
    const view = renderCell(cells[0]);
    const panes = Array.from(
      view.querySelectorAll<HTMLElement>('.porter-tab-pane')
    );
    expect(panes.map(p => p.hidden)).toEqual([false, true, true, true]);
    view.querySelectorAll<HTMLButtonElement>('.porter-tab')[3].click();
    expect(panes.map(p => p.hidden)).toEqual([true, true, true, false]);
    // side by side: a card per backend for the first output, its verdict on top
    const cards = panes[3].querySelectorAll('.porter-card');
    expect(cards.length).toBeGreaterThan(0);
  });

  it('offers Apply only for a verified rewrite, and sends the entry', () => {
    const rewrite = { source: 'y = 1\n', status: 'verified' as const };
    const view = renderCell({ ...cells[0], rewrite });
    const sent: unknown[] = [];
    view.addEventListener(APPLY_EVENT, event =>
      sent.push((event as CustomEvent).detail.entry)
    );
    view.querySelector<HTMLButtonElement>('button.porter-apply')!.click();
    expect(sent).toHaveLength(1);
    const partial = renderCell({
      ...cells[0],
      rewrite: { ...rewrite, status: 'partial' }
    });
    expect(partial.querySelector('button.porter-apply')).toBeNull();
  });
});

describe('one numbering in the view: lines as the editor counts them', () => {
  it('shows a %%port cell’s calls on the rows’ lines, below the %%port line', () => {
    const cell = { ...cells[0], first_line: 2 };
    const view = renderCell(cell);
    const tables = Array.from(view.querySelectorAll('table'));
    const calls = tables.find(t =>
      (t.querySelector('thead')?.textContent ?? '').includes('call')
    )!;
    const lines = Array.from(calls.querySelectorAll('tbody tr')).map(
      tr => tr.querySelector('td')?.textContent
    );
    expect(lines).toEqual((cell.calls ?? []).map(c => String(c.line + 1)));
  });
});

describe("a report's view: the JSON's words, drawn", () => {
  it('says the summary and what the report was made with in porter’s words', () => {
    const view = renderReport(report);
    expect(report.summary?.text).toBeTruthy();
    expect(report.environment?.text).toBeTruthy();
    expect(texts(view, '.porter-summary')).toEqual([report.summary?.text]);
    expect(texts(view, '.porter-environment')).toEqual([
      report.environment?.text
    ]);
  });

  it('shows no summary words for a report older than them', () => {
    const view = renderReport({
      ...report,
      summary: { ...report.summary, text: undefined },
      environment: { ...report.environment, text: undefined }
    });
    expect(view.querySelector('.porter-summary')).toBeNull();
    expect(view.querySelector('.porter-environment')).toBeNull();
  });
});
