import { NOT_VERIFIED } from '../apply';
import {
  asPythonReads,
  changedReason,
  fileRewrites,
  filesOf,
  inFileForm,
  planFileApply,
  sha256Hex
} from '../filerewrites';
import { IFileVerdict } from '../types';
import { run, runCells as cells } from './filefix';

const verdict = run.cells[1].entry!.file_verdicts![0] as IFileVerdict;

describe('sha256Hex: the digest porter records of a file, in the browser', () => {
  it('is the digest porter wrote of the module it ran', async () => {
    expect(verdict.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(await sha256Hex(run.module)).toBe(verdict.digest);
  });

  it('hashes the UTF-8 bytes of text beyond ASCII as Python does', async () => {
    // porter_ext.fix.files.digest('π = "ü"\n')
    expect(await sha256Hex('π = "ü"\n')).toBe(
      'de32390a5457de528ef4fc32ae88209206e27449a5475f9d1e12c2c691d96a35'
    );
  });
});

describe('fileRewrites: the rewrites of the person’s files a notebook offers', () => {
  it('offers the verified rewrite once, in the words of each cell that verified it', () => {
    const [offer, ...more] = fileRewrites(run.notebook, cells());
    expect(more).toEqual([]);
    const other = run.cells[2].entry!.file_verdicts![0] as IFileVerdict;
    expect(offer).toMatchObject({
      file: 'mymod.py',
      path: 'proj/mymod.py',
      digest: verdict.digest,
      source: verdict.source,
      verifiedOn: verdict.verified_on,
      summary: verdict.summary,
      appliedText: verdict.applied_text,
      notes: [other.summary]
    });
    // porter's words name each calling cell (a live run: its prompt)
    expect(offer.summary).toContain('In [2]');
    expect(offer.notes[0]).toContain('In [3]');
    expect(offer.source).toContain(
      'xp.sqrt(xp.sum(xp.pow(m, 2), axis=1, keepdims=True))'
    );
  });

  it('offers no refused rewrite, and says porter’s words of a cell that refused one', () => {
    // porter's words of a refusal, as the model writes a refused verdict's summary
    const said = 'words porter wrote of the refusal';
    const refused = cells((entry, index) => {
      if (index === 2) {
        entry.file_verdicts![0].accepted = false;
        entry.file_verdicts![0].summary = said;
      }
      return entry;
    });
    const [offer, ...more] = fileRewrites(run.notebook, refused);
    expect(more).toEqual([]);
    expect(offer.summary).toBe(verdict.summary);
    expect(offer.notes).toEqual([said]);
    // older results without the words: the bare reason
    const older = cells((entry, index) => {
      delete entry.file_verdicts![0].summary;
      if (index === 2) {
        entry.file_verdicts![0].accepted = false;
        entry.file_verdicts![0].reason = 'the replays disagree';
      }
      return entry;
    });
    const [old] = fileRewrites(run.notebook, older);
    expect([old.summary, old.notes]).toEqual([null, ['the replays disagree']]);
    const none = cells(entry => {
      entry.file_verdicts![0].accepted = false;
      return entry;
    });
    expect(fileRewrites(run.notebook, none)).toEqual([]);
  });

  it('keeps apart verdicts of different texts of the file', () => {
    const edited = cells((entry, index) => {
      if (index === 2) {
        entry.file_verdicts![0].digest = '0'.repeat(64);
      }
      return entry;
    });
    const offers = fileRewrites(run.notebook, edited);
    expect(offers.map(o => [o.summary, o.notes])).toEqual([
      [verdict.summary, []],
      [run.cells[2].entry!.file_verdicts![0].summary, []]
    ]);
    expect(new Set(offers.map(o => o.key)).size).toBe(2);
  });

  it('reads older results and malformed verdicts as offering nothing', () => {
    const older = cells(entry => {
      delete entry.file_verdicts;
      return entry;
    });
    expect(fileRewrites(run.notebook, older)).toEqual([]);
    const odd = cells(entry => {
      entry.file_verdicts = [
        { file: 'mymod.py', accepted: true } as IFileVerdict,
        null as unknown as IFileVerdict
      ];
      return entry;
    });
    expect(fileRewrites(run.notebook, odd)).toEqual([]);
  });
});

describe('planFileApply: the edited-since guard of a file’s rewrite', () => {
  const offer = {
    file: 'mymod.py',
    digest: verdict.digest,
    source: verdict.source
  };

  it('writes the rewrite over the text porter recorded', async () => {
    expect(await planFileApply(run.module, offer)).toEqual({
      text: verdict.source,
      reason: null
    });
  });

  it('refuses a file edited since, with the reason', async () => {
    const edited = run.module.replace('m / n', 'm / (n + 1)');
    expect(await planFileApply(edited, offer)).toEqual({
      text: null,
      reason: 'mymod.py changed since porter recorded it: run the cell again'
    });
    expect(changedReason('mymod.py')).toBe(
      'mymod.py changed since porter recorded it: run the cell again'
    );
    // a line added at the end is a change too
    const appended = await planFileApply(`${run.module}x = 1\n`, offer);
    expect(appended.text).toBeNull();
  });

  it('refuses a file that already holds the rewrite, and an unverified one', async () => {
    expect((await planFileApply(verdict.source, offer)).reason).toBe(
      "mymod.py already holds porter's rewrite"
    );
    expect(
      (await planFileApply(run.module, { ...offer, accepted: false })).reason
    ).toBe(NOT_VERIFIED);
  });

  it('reads a file as Python does and writes its line endings back', async () => {
    const crlf = run.module.replace(/\n/g, '\r\n');
    expect(asPythonReads(`\uFEFF${crlf}`)).toBe(run.module);
    const plan = await planFileApply(crlf, offer);
    expect(plan.text).toBe(verdict.source.replace(/\n/g, '\r\n'));
    const bom = await planFileApply(`\uFEFF${run.module}`, offer);
    expect(bom.text).toBe(`\uFEFF${verdict.source}`);
    expect(inFileForm('a\nb\n', 'x\ry\r')).toBe('a\rb\r');
  });
});

describe('filesOf: the files a cell’s result speaks of', () => {
  it('names the module the cell called into, as a server path', () => {
    expect(filesOf(run.notebook, run.cells[1].entry)).toEqual([
      'proj/mymod.py'
    ]);
    expect(filesOf(run.notebook, null)).toEqual([]);
  });
});
