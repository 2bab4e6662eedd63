/**
 * @jest-environment jsdom
 */
import { sourceState } from '../apply';
import {
  APPLY_EVENT,
  renderCell,
  showRefusal,
  showSourceState
} from '../render';
import { ICellEntry, sourceStateWords } from '../types';

const BODY = 'import numpy as np\na = np.ones(3)\nb = np.sum(a, 0)\n';
const REWRITE = 'import numpy as np\na = np.ones(3)\nb = np.sum(a, axis=0)\n';
const WORDS = {
  applied: 'rewrite applied: run the cell to check it',
  stale: 'changed since the run <b>bold</b>'
};

function entry(words: ICellEntry['source_states'] = WORDS): ICellEntry {
  return {
    source: BODY,
    calls: [],
    rewrite: { source: REWRITE, status: 'verified', verified_on: ['numpy'] },
    source_states: words
  };
}

/** porter's view of the cell's result, as an output shows it, drawn for `cellText`. */
function outputFor(cellText: string, e = entry()): HTMLElement {
  const view = renderCell(e);
  const state = sourceState(cellText, e);
  showSourceState(
    view,
    state,
    state === 'recorded' ? '' : sourceStateWords(e, state)
  );
  return view;
}

const button = (view: HTMLElement) =>
  view.querySelector<HTMLButtonElement>('button.porter-apply')!;
const notes = (view: HTMLElement) =>
  Array.from(view.querySelectorAll('.porter-output-note')).map(
    n => n.textContent
  );

describe("the output's Apply follows the cell's source", () => {
  it('offers Apply while the cell holds the recorded source', () => {
    const view = outputFor(`%%port\n${BODY.slice(0, -1)}`);
    expect(button(view).disabled).toBe(false);
    expect(button(view).textContent).toBe('Apply verified rewrite');
    expect(button(view).dataset.porterState).toBe('recorded');
    expect(notes(view)).toEqual([]);
  });

  it("turns Apply off with the entry's words where the rewrite is in the cell", () => {
    const view = outputFor(`%%port\n${REWRITE}`);
    expect(button(view).disabled).toBe(true);
    expect(button(view).textContent).toBe(WORDS.applied);
    expect(notes(view)).toEqual([]);
  });

  it('says the cell changed, as text, and leaves Apply to say exactly what', () => {
    const view = outputFor(`%%port\n${BODY}print(b)`);
    expect(button(view).disabled).toBe(false);
    expect(notes(view)).toEqual([WORDS.stale]);
    expect(view.querySelector('.porter-source-state b')).toBeNull();
  });

  it('goes back and forth with undo and redo, one note at most', () => {
    const e = entry();
    const view = renderCell(e);
    const texts = [BODY, REWRITE, BODY, `${BODY}x`, `${BODY}xy`, REWRITE, BODY];
    const seen = texts.map(text => {
      const state = sourceState(text, e);
      showSourceState(
        view,
        state,
        state === 'recorded' ? '' : sourceStateWords(e, state)
      );
      return [state, button(view).disabled, notes(view).length];
    });
    expect(seen).toEqual([
      ['recorded', false, 0],
      ['applied', true, 0],
      ['recorded', false, 0],
      ['stale', false, 1],
      ['stale', false, 1],
      ['applied', true, 0],
      ['recorded', false, 0]
    ]);
    expect(button(view).textContent).toBe('Apply verified rewrite');
  });

  it('keeps sending the Apply event from its button', () => {
    const view = outputFor(BODY);
    const sent: unknown[] = [];
    view.addEventListener(APPLY_EVENT, e =>
      sent.push((e as CustomEvent).detail.entry.source)
    );
    button(view).click();
    expect(sent).toEqual([BODY]);
  });

  it("uses porter's fallback words for a result without source_states", () => {
    const view = outputFor(REWRITE, entry(null));
    expect(button(view).textContent).toBe(sourceStateWords({}, 'applied'));
  });
});

describe('a refused Apply says why where the person clicked', () => {
  it('puts the reason under the section of the button, as text, once', () => {
    const view = outputFor(`${BODY}print(b)`);
    showRefusal(button(view), 'line 4 was added <img src=x onerror=alert(1)>');
    showRefusal(button(view), 'line 4 was added after the recorded source');
    const refusals = view.querySelectorAll('.porter-refusal');
    expect(refusals.length).toBe(1);
    expect(refusals[0].getAttribute('role')).toBe('alert');
    expect(refusals[0].textContent).toBe(
      'Not applied: line 4 was added after the recorded source'
    );
    expect(view.querySelector('img')).toBeNull();
    // the section head is followed by its notes: the refusal sits with the stale note
    const head = button(view).closest('.porter-section-head')!;
    expect(head.parentElement!.contains(refusals[0])).toBe(true);
  });

  it('drops the reason when the cell changes again', () => {
    const view = outputFor(`${BODY}print(b)`);
    showRefusal(button(view), 'line 4 was added after the recorded source');
    showSourceState(view, 'recorded', '');
    expect(view.querySelector('.porter-refusal')).toBeNull();
  });

  it("puts it right after a button outside porter's view (the live widget's)", () => {
    const box = document.createElement('div');
    const widgetButton = document.createElement('button');
    widgetButton.className = 'porter-apply porter-widget-apply';
    widgetButton.textContent = 'Apply verified rewrite';
    box.appendChild(widgetButton);
    showRefusal(widgetButton, 'rewrite applied');
    expect(widgetButton.nextElementSibling!.textContent).toBe(
      'Not applied: rewrite applied'
    );
    showSourceState(box, 'applied', 'rewrite applied');
    expect(widgetButton.disabled).toBe(true);
    expect(box.querySelector('.porter-refusal')).toBeNull();
    showSourceState(box, 'recorded', '');
    expect(widgetButton.textContent).toBe('Apply verified rewrite');
  });
});
