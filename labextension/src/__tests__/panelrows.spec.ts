/**
 * @jest-environment jsdom
 */
import { collectDiagnostics, IDiagnostic, IResultCell } from '../diagnostics';
import { fileRewrites, IFileRewrite } from '../filerewrites';
import {
  renderDetail,
  renderFileRewrite,
  renderGroup,
  renderHead,
  renderRow,
  ROW_HEIGHT
} from '../panelrows';
import { ICellEntry, IRow } from '../types';
import fixture from './fixtures/devices_notebook.json';
import moduleFixture from './fixtures/module_notebook.json';
import { run } from './filefix';

const EVIL =
  "<script>document.title='PWNED'</script>" +
  ' <img src=x onerror="document.title=\'PWNED\'">' +
  ' "><svg onload="document.title=\'PWNED\'">' +
  ' \u202e)a(mus.b\u202c \u2066iso\u2069';

function row(over: Partial<IDiagnostic> = {}): IDiagnostic {
  return {
    id: '3:0',
    status: 'replay_failure',
    kindText: 'replay failure',
    severityText: 'error: replay failure',
    severity: 'error',
    name: `strict${EVIL}`,
    message: `replay on strict${EVIL}: error TypeError${EVIL}`,
    group: `replay failures${EVIL}`,
    cell: 3,
    cellLabel: 'cell 4 · In [4]',
    finding: true,
    title: `cell 4 · In [4], line 3: strict${EVIL}`,
    file: null,
    line: 2,
    shownLine: 3,
    col: 0,
    place: `cell 4 · In [4], line 3${EVIL}`,
    calledFromText: `cell 5${EVIL}`,
    detail: `TypeError: no sum${EVIL}\n  second line${EVIL}`,
    count: 1,
    stale: false,
    ...over
  };
}

/** What would run or load if the rendered nodes were parsed as HTML. */
function active(node: Element): number {
  return node.querySelectorAll(
    'script, img, svg, iframe, a, [onerror], [onload]'
  ).length;
}

describe('the panel’s rows put hostile strings on the page as text', () => {
  it('renders a row’s message, cell and calling cell as text', () => {
    const node = renderRow(row(), false);
    expect(active(node)).toBe(0);
    const text = node.textContent!;
    expect(text).toContain("<script>document.title='PWNED'</script>");
    expect(text).not.toMatch(/[\u202e\u2066]/);
    expect(text).toContain('⟨U+202E⟩');
    expect(text).toContain('⟨U+2066⟩');
    // the title attribute writes the controls out too
    expect(node.title).toContain('⟨U+202E⟩');
    expect(node.title).not.toMatch(/[\u202e\u2066]/);
  });

  it('shows the cell’s position in its column and its full label in the title', () => {
    const node = renderRow(row(), false);
    const cell = node.querySelector('.porter-diag-cell') as HTMLElement;
    // notebook position 3 is JupyterLab's "Cell 4"
    expect(cell.textContent).toBe('4');
    expect(cell.title).toBe('cell 4 · In [4]');
    expect(node.dataset.porterCell).toBe('3');
  });

  it('renders a group’s replacement as text', () => {
    const node = renderGroup(
      {
        key: `xp.sum${EVIL}`,
        label: `xp.sum${EVIL}`,
        file: null,
        rows: [row()],
        count: 7,
        severity: 'error'
      },
      false
    );
    expect(active(node)).toBe(0);
    expect(node.textContent).toContain(`xp.sum<script>`);
    expect(node.textContent).toContain(' ×7');
    expect(node.dataset.porterGroup).toBe(`xp.sum${EVIL}`);
  });

  it('shows raw exception text in a collapsed block, as text with its lines', () => {
    const node = renderDetail(row());
    expect(active(node)).toBe(0);
    const details = node.querySelector('details')!;
    expect(details.open).toBe(false);
    const pre = details.querySelector('pre')!;
    expect(pre.textContent).toContain('TypeError: no sum<script>');
    expect(pre.textContent).toContain('\n  second line');
    expect(node.querySelectorAll('p').length).toBe(0);
  });

  it('shows no exception block for a finding without one', () => {
    expect(
      renderDetail(row({ detail: null })).querySelector('details')
    ).toBeNull();
  });
});

describe('the rows of the windowed list', () => {
  it('have the one fixed height the windowing counts with', () => {
    expect(renderRow(row(), false).style.height).toBe(`${ROW_HEIGHT}px`);
    const group = renderGroup(
      {
        key: 'k',
        label: 'k',
        file: null,
        rows: [],
        count: 1,
        severity: 'info'
      },
      true
    );
    expect(group.style.height).toBe(`${ROW_HEIGHT}px`);
    expect(group.getAttribute('aria-expanded')).toBe('false');
  });

  it('carry the cell, line and column a click goes to', () => {
    const node = renderRow(row({ line: null, shownLine: null, col: 5 }), true);
    expect(node.dataset.porterCell).toBe('3');
    expect(node.dataset.porterLine).toBe('');
    expect(node.dataset.porterCol).toBe('5');
    expect(node.getAttribute('aria-selected')).toBe('true');
    expect(node.querySelector('.porter-diag-line')!.textContent).toBe('—');
  });

  it('show a row’s severity as a glyph, in porter’s words in the title', () => {
    // notebooks/02_devices.ipynb as porter's kernel ran it: every row's `severity_text`
    // and `kind_text`
    const cells = (
      fixture as unknown as {
        cells: { index: number; id: string; entry: ICellEntry | null }[];
      }
    ).cells.map(c => ({
      ref: { index: c.index, executionCount: null, id: c.id },
      entry: c.entry,
      stale: false
    }));
    const written = ([] as IRow[]).concat(
      ...cells.map(c => c.entry?.diagnostics ?? [])
    );
    const rows = collectDiagnostics(cells);
    expect(new Set(rows.map(r => r.severity)).size).toBeGreaterThan(1);
    rows.forEach((r, n) => {
      const sev = renderRow(r, false).querySelector(
        '.porter-diag-sev'
      ) as HTMLElement;
      const words = written[n].kind_text!;
      expect(words).toBeTruthy();
      expect(written[n].severity_text).toBeTruthy();
      expect(sev.title).toBe(written[n].severity_text);
      expect(sev.getAttribute('aria-label')).toBe(words);
    });
    const device = rows.find(r => r.status === 'device')!;
    const node = renderRow(device, false).querySelector('.porter-diag-sev')!;
    expect(node.textContent).toBe('▲');
    expect(node.getAttribute('title')).toBe('warning: device finding');
  });

  it('tag a stale row', () => {
    const node = renderRow(row({ stale: true }), false);
    expect(node.classList.contains('porter-stale')).toBe(true);
    expect(node.querySelector('.porter-stale-tag')).not.toBeNull();
  });

  it('mark the sorted column in the head', () => {
    const head = renderHead('severity', false);
    const sorted = head.querySelectorAll('[aria-sort]');
    expect(sorted.length).toBe(1);
    expect(sorted[0].getAttribute('aria-label')).toBe('Severity');
    expect(sorted[0].getAttribute('aria-sort')).toBe('descending');
    // cell and line sort together: one of them shows it
    expect(
      renderHead('place', true).querySelectorAll('[aria-sort]').length
    ).toBe(1);
  });
});

describe('a finding in the person’s module (real run of notebooks/03)', () => {
  const cells: IResultCell[] = moduleFixture.cells.map(c => ({
    ref: { index: c.index, executionCount: c.execution_count, id: c.id },
    entry: c.entry as ICellEntry | null,
    stale: false
  }));
  const inFile = collectDiagnostics(cells).find(r => r.file !== null)!;
  const porter = ([] as IRow[])
    .concat(
      ...moduleFixture.cells.map(
        c => (c.entry?.diagnostics ?? []) as unknown as IRow[]
      )
    )
    .find(r => r.name === inFile.name && r.file)!;

  it('says its file and line, and the calling cell, in porter’s words', () => {
    const node = renderRow(inFile, false);
    expect(node.dataset.porterFile).toBe('norms.py');
    expect(node.dataset.porterLine).toBe('5');
    const msg = node.querySelector('.porter-diag-msg')!;
    expect(msg.querySelector('.porter-diag-place')!.textContent).toBe(
      `${porter.place}: `
    );
    expect(msg.querySelector('.porter-diag-from')!.textContent).toBe(
      ` (${porter.called_from_text})`
    );
    expect(msg.textContent).toContain(porter.message);
    const cell = node.querySelector('.porter-diag-cell') as HTMLElement;
    expect(cell.title).toBe(porter.called_from_text);
  });

  it('is under its file’s group head', () => {
    const head = renderGroup(
      {
        key: 'file:lib/norms.py',
        label: 'lib/norms.py',
        file: 'lib/norms.py',
        rows: [inFile],
        count: 2,
        severity: 'error'
      },
      false
    );
    expect(head.classList).toContain('porter-diag-group-file');
    expect(head.dataset.porterFile).toBe('lib/norms.py');
    expect(head.textContent).toBe('lib/norms.py ×2');
  });

  it('has no file attribute when it is in a cell', () => {
    expect(renderRow(row(), false).dataset.porterFile).toBeUndefined();
  });
});

describe('renderFileRewrite: a verified rewrite of the person’s file', () => {
  // a real %%port --fix run: cells 1 and 2 each verified mymod.py's rewrite
  const [offer] = fileRewrites(
    run.notebook,
    run.cells.map(c => ({
      ref: { index: c.index, executionCount: c.execution_count, id: c.id },
      entry: c.entry
    }))
  );
  const verdicts = run.cells.map(c => c.entry?.file_verdicts?.[0]);
  const state = { applied: false, busy: false, refusal: null, apply: null };

  it('names the file and says porter’s words of each verdict, with Apply', () => {
    let clicks = 0;
    const node = renderFileRewrite(offer, { ...state, apply: () => clicks++ });
    expect(node.dataset.porterFile).toBe('mymod.py');
    const button = node.querySelector<HTMLButtonElement>(
      'button.porter-apply'
    )!;
    expect(node.firstChild!.textContent).toBe(
      `mymod.py: ${verdicts[1]!.summary} `
    );
    // the other calling cell's verdict on the same rewrite, in its words
    expect(
      [...node.querySelectorAll('.porter-note')].map(n => n.textContent)
    ).toEqual([verdicts[2]!.summary]);
    button.click();
    expect(clicks).toBe(1);
    expect(node.querySelector('.porter-refusal')).toBeNull();
  });

  it('shows the file’s name alone for results older than the words', () => {
    const older: IFileRewrite = {
      ...offer,
      summary: null,
      appliedText: null,
      notes: []
    };
    expect(renderFileRewrite(older, state).textContent).toBe('mymod.py ');
    expect(
      renderFileRewrite(older, { ...state, applied: true }).textContent
    ).toBe('mymod.py');
  });

  it('says why the last Apply refused, in the row clicked', () => {
    const why = 'mymod.py changed since porter recorded it: run the cell again';
    const node = renderFileRewrite(offer, {
      ...state,
      refusal: why,
      apply: () => {}
    });
    const alert = node.querySelector('.porter-refusal')!;
    expect(alert.getAttribute('role')).toBe('alert');
    expect(alert.textContent).toBe(`Not applied: ${why}`);
  });

  it('shows a file applied without a button, and no button without file access', () => {
    const applied = renderFileRewrite(offer, { ...state, applied: true });
    expect(applied.classList.contains('porter-stale')).toBe(true);
    expect(applied.textContent).toBe(`mymod.py: ${verdicts[1]!.applied_text}`);
    expect(applied.querySelector('button')).toBeNull();
    expect(renderFileRewrite(offer, state).querySelector('button')).toBeNull();
    const busy = renderFileRewrite(offer, {
      ...state,
      busy: true,
      apply: () => {}
    });
    expect(busy.querySelector('button')!.disabled).toBe(true);
  });

  it('keeps report strings text', () => {
    const node = renderFileRewrite(
      { ...offer, file: EVIL, summary: EVIL, notes: [EVIL] },
      { ...state, refusal: EVIL }
    );
    expect(node.querySelector('script, img, svg')).toBeNull();
    expect(node.querySelector('.porter-note')!.textContent).toMatch(
      /^<script>/
    );
  });
});
