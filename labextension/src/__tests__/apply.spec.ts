import {
  CHANGED,
  comparable,
  comparableBody,
  headerOf,
  minimalEdit,
  NOT_VERIFIED,
  planApply,
  sourceState
} from '../apply';
import {
  ICellEntry,
  IRewrite,
  SOURCE_STATE_WORDS,
  sourceStateWords
} from '../types';

const MAGIC = '%%port --fix -b numpy,strict';
const BODY = 'y = x.sum(1)\nz = torch.max(y, -y)';
/** what porter records of a typed cell: IPython gives the cell body a trailing newline */
const RECORDED = `${BODY}\n`;
const REWRITTEN =
  'xp = array_namespace(x)\ny = xp.sum(x, axis=1)\nz = xp.maximum(y, -y)\n';

function entry(
  source = RECORDED,
  status: IRewrite['status'] = 'verified',
  rewrite: string = REWRITTEN
): Pick<ICellEntry, 'source' | 'rewrite' | 'source_states'> {
  return {
    source,
    rewrite: { source: rewrite, status, verified_on: ['numpy', 'strict'] }
  };
}

/** the cell's text once the plan's edit is made, the way the shared model makes it */
function edited(text: string, e = entry()): string {
  const plan = planApply(text, e);
  if (plan.edit === null) {
    throw new Error(plan.reason);
  }
  const { from, to, insert } = plan.edit;
  const out = text.slice(0, from) + insert + text.slice(to);
  expect(out).toBe(plan.edit.text);
  return out;
}

describe('planApply: the cell porter just ran', () => {
  it('applies to a typed cell without a trailing newline', () => {
    const cell = `${MAGIC}\n${BODY}`;
    expect(edited(cell)).toBe(`${MAGIC}\n${REWRITTEN.slice(0, -1)}`);
  });

  it('keeps the trailing newline of a cell that has one', () => {
    const cell = `${MAGIC}\n${BODY}\n`;
    expect(edited(cell)).toBe(`${MAGIC}\n${REWRITTEN}`);
  });

  it('applies where the rewrite has no trailing newline either', () => {
    const e = entry(RECORDED, 'verified', REWRITTEN.slice(0, -1));
    expect(edited(`${MAGIC}\n${BODY}\n`, e)).toBe(`${MAGIC}\n${REWRITTEN}`);
    expect(edited(`${MAGIC}\n${BODY}`, e)).toBe(
      `${MAGIC}\n${REWRITTEN.slice(0, -1)}`
    );
  });

  it('applies to a cell recorded whole (%port on: no magic line)', () => {
    const e = entry(BODY);
    expect(edited(BODY, e)).toBe(REWRITTEN.slice(0, -1));
  });

  it('keeps a bare %%port line', () => {
    expect(edited(`%%port\n${BODY}`)).toBe(`%%port\n${REWRITTEN.slice(0, -1)}`);
  });
});

describe('planApply: refusals, each with its reason', () => {
  const refusal = (cell: string, e = entry()) => {
    const plan = planApply(cell, e);
    expect(plan.edit).toBeNull();
    return plan.reason as string;
  };

  it('refuses an edit inside the body', () => {
    const why = refusal(`${MAGIC}\ny = x.sum(0)\nz = torch.max(y, -y)`);
    expect(why).toContain(CHANGED);
    expect(why).toContain('line 2 is not the line porter recorded');
  });

  it('refuses an appended line (and does not replace the body under it)', () => {
    const why = refusal(`${MAGIC}\n${BODY}\nprint(z)`);
    expect(why).toContain(CHANGED);
    expect(why).toContain('line 4 was added after the recorded source');
    expect(refusal(`${MAGIC}\n${BODY}\nprint(z)\nprint(y)\n`)).toContain(
      'lines 4-5 were added'
    );
  });

  it('refuses a blank line appended after the trailing newline', () => {
    expect(refusal(`${MAGIC}\n${BODY}\n\n`)).toContain('line 4 was added');
  });

  it('refuses a removed line', () => {
    expect(refusal(`${MAGIC}\ny = x.sum(1)`)).toContain(
      'the recorded source went on at line 3'
    );
  });

  it('refuses a line added above the body or above the magic', () => {
    expect(refusal(`${MAGIC}\nimport torch\n${BODY}`)).toContain(
      'line 2 is not the line porter recorded'
    );
    expect(refusal(`# note\n${MAGIC}\n${BODY}`)).toContain(CHANGED);
  });

  it('ignores nothing but a trailing newline: whitespace counts', () => {
    expect(refusal(`${MAGIC}\n${BODY} `)).toContain('line 3 is not');
    expect(refusal(`${MAGIC}\n ${BODY}`)).toContain('line 2 is not');
    expect(refusal(`${MAGIC}\ny = x.sum(1)\r\nz = torch.max(y, -y)`)).toContain(
      CHANGED
    );
  });

  it('refuses a second Apply: the cell holds the rewrite now, and says so', () => {
    const once = edited(`${MAGIC}\n${BODY}`);
    expect(refusal(once)).toBe(SOURCE_STATE_WORDS.applied);
    const words = { applied: 'porter: the rewrite is in the cell', stale: 'x' };
    expect(refusal(once, { ...entry(), source_states: words })).toBe(
      words.applied
    );
  });

  it('refuses a rewrite that replays did not verify', () => {
    expect(refusal(`${MAGIC}\n${BODY}`, entry(RECORDED, 'partial'))).toBe(
      NOT_VERIFIED
    );
    expect(refusal(`${MAGIC}\n${BODY}`, { source: RECORDED })).toBe(
      NOT_VERIFIED
    );
  });
});

describe('sourceState: where the cell stands, from the JSON alone', () => {
  const typed = `${MAGIC}\n${BODY}`; // as typed: no trailing newline

  it('is recorded for the cell porter ran, with or without a trailing newline', () => {
    expect(sourceState(typed, entry())).toBe('recorded');
    expect(sourceState(`${typed}\n`, entry())).toBe('recorded');
    expect(sourceState(BODY, entry(BODY))).toBe('recorded'); // %port on: no magic
  });

  it('is applied once Apply put the rewrite there', () => {
    expect(sourceState(edited(typed), entry())).toBe('applied');
    expect(sourceState(edited(`${typed}\n`), entry())).toBe('applied');
  });

  it('follows Apply, undo and redo: the text decides, not the history', () => {
    // Apply, Ctrl+Z, Ctrl+Shift+Z: the texts the shared model holds in turn
    const texts = [typed, edited(typed), typed, edited(typed)];
    expect(texts.map(t => sourceState(t, entry()))).toEqual([
      'recorded',
      'applied',
      'recorded',
      'applied'
    ]);
    // and Apply is offered exactly where the cell is the recorded source
    expect(texts.map(t => planApply(t, entry()).edit !== null)).toEqual([
      true,
      false,
      true,
      false
    ]);
  });

  it('is applied for the rewrite typed or pasted by hand, under any %%port line', () => {
    const pasted = `%%port -b numpy\n${REWRITTEN}`;
    expect(sourceState(pasted, entry())).toBe('applied');
    // a partial rewrite too: the findings are not about that text either
    expect(sourceState(pasted, entry(RECORDED, 'partial'))).toBe('applied');
  });

  it('is stale for any other text, one character or one line off', () => {
    expect(sourceState(`${typed} `, entry())).toBe('stale');
    expect(sourceState(`${typed}\nprint(z)`, entry())).toBe('stale');
    expect(sourceState(`${edited(typed)}\n\n`, entry())).toBe('stale');
    expect(sourceState(`# note\n${typed}`, entry())).toBe('stale');
    expect(sourceState(typed, { source: RECORDED, rewrite: null })).toBe(
      'recorded'
    );
    expect(sourceState('', { source: RECORDED, rewrite: null })).toBe('stale');
  });

  it('prefers recorded where the rewrite changed nothing', () => {
    expect(sourceState(typed, entry(RECORDED, 'verified', RECORDED))).toBe(
      'recorded'
    );
  });

  it("says the states in the entry's words, else in the words kept for older results", () => {
    const words = { applied: 'A', stale: 'S' };
    expect(sourceStateWords({ source_states: words }, 'applied')).toBe('A');
    expect(sourceStateWords({ source_states: words }, 'stale')).toBe('S');
    expect(sourceStateWords({}, 'stale')).toBe(SOURCE_STATE_WORDS.stale);
    expect(sourceStateWords({ source_states: { stale: 'S' } }, 'applied')).toBe(
      SOURCE_STATE_WORDS.applied
    );
  });
});

describe('the parts of the rule', () => {
  it('compares the body below the %%port line, without one trailing newline', () => {
    expect(comparableBody(`${MAGIC}\n${BODY}\n`, RECORDED)).toBe(BODY);
    expect(comparableBody(`${MAGIC}\n${BODY}`, RECORDED)).toBe(BODY);
    expect(comparableBody(BODY, BODY)).toBe(BODY);
  });

  it('compares without one trailing newline', () => {
    expect(comparable('a\n')).toBe('a');
    expect(comparable('a\n\n')).toBe('a\n');
    expect(comparable('a')).toBe('a');
  });

  it('takes the %%port line as the header, and only that', () => {
    expect(headerOf(`${MAGIC}\n${BODY}`, RECORDED)).toBe(`${MAGIC}\n`);
    expect(headerOf(`%%porter\n${BODY}`, RECORDED)).toBe('');
    expect(headerOf(`%%time\n${BODY}`, RECORDED)).toBe('');
    expect(headerOf(BODY, BODY)).toBe('');
  });

  it('makes one minimal edit', () => {
    expect(minimalEdit('a = 1\nb = 2\n', 'a = 1\nb = 3\n')).toEqual({
      from: 10,
      to: 11,
      insert: '3',
      text: 'a = 1\nb = 3\n'
    });
    const same = minimalEdit('abc', 'abc');
    expect(same.from).toBe(same.to);
    expect(same.insert).toBe('');
  });

  it('never splits a surrogate pair', () => {
    // 🔥 (U+1F525) and 🔦 (U+1F526) share their high surrogate
    const edit = minimalEdit('x = "🔥"', 'x = "🔦"');
    expect(edit.from).toBe(5);
    expect(edit.insert).toBe('🔦');
    expect(edit.to).toBe(7);
    // 😀 (U+1F600) and 🙀 (U+1F640) share none; a shared low surrogate at the end
    const tail = minimalEdit('\ud83d\ude00', '\ud83c\ude00');
    expect(tail).toEqual({
      from: 0,
      to: 2,
      insert: '\ud83c\ude00',
      text: '\ud83c\ude00'
    });
  });
});
