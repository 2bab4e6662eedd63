import { Signal } from '@lumino/signaling';

import {
  applyFileRewrite,
  fileAppliedChanged,
  fileFresh,
  IFileAccess,
  IOpenFile,
  isFileApplied
} from '../applyfile';
import { fileRewrites, IFileRewrite } from '../filerewrites';
import { run, runCells } from './filefix';

const [OFFER] = fileRewrites(run.notebook, runCells());
const PATH = 'proj/mymod.py';

/** An editor over a text: one undo step per replace, saved to `disk`. */
class Editor implements IOpenFile {
  constructor(
    public text: string,
    private disk: Map<string, string>
  ) {}
  source(): string {
    return this.text;
  }
  replace(from: number, to: number, insert: string): void {
    this.undo.push(this.text);
    this.text = this.text.slice(0, from) + insert + this.text.slice(to);
    this._changed.emit(undefined);
  }
  async save(): Promise<void> {
    this.saves++;
    this.disk.set(PATH, this.text);
  }
  /** Ctrl+Z: the text before the last replace. */
  undoLast(): void {
    this.text = this.undo.pop()!;
    this._changed.emit(undefined);
  }
  get changed() {
    return this._changed;
  }
  undo: string[] = [];
  saves = 0;
  private _changed = new Signal<this, unknown>(this);
}

/** The server's files, and the file's editor when it is open. */
function access(text = run.module, editor: string | null = null) {
  const disk = new Map([[PATH, text]]);
  const writes: string[] = [];
  const open = editor === null ? null : new Editor(editor, disk);
  const io: IFileAccess = {
    read: async path => {
      const found = disk.get(path);
      if (found === undefined) {
        throw new Error('No such file or directory');
      }
      return found;
    },
    write: async (path, value) => {
      writes.push(path);
      disk.set(path, value);
    },
    editor: path => (path === PATH ? open : null)
  };
  return { io, disk, writes, open };
}

/** Until the pending digests (WebCrypto is asynchronous) have been compared. */
/** Wait until ``done()`` holds (the editor's change is hashed asynchronously: a fixed
 * 20 ms wait failed under load), at most two seconds. */
const until = async (done: () => boolean) => {
  const end = Date.now() + 2000;
  while (!done() && Date.now() < end) {
    await new Promise(resolve => setTimeout(resolve, 10));
  }
};

afterEach(() => fileFresh(PATH));

describe('applyFileRewrite: a verified rewrite written over the person’s file', () => {
  it('writes a file no editor holds through the Contents API, then it is applied', async () => {
    const { io, disk, writes } = access();
    const seen: string[] = [];
    const listen = (_: unknown, path: string) => seen.push(path);
    fileAppliedChanged.connect(listen);
    expect(await applyFileRewrite(OFFER, io)).toBeNull();
    fileAppliedChanged.disconnect(listen);
    expect(disk.get(PATH)).toBe(OFFER.source);
    expect(writes).toEqual([PATH]);
    expect(isFileApplied(PATH)).toBe(true);
    expect(seen).toEqual([PATH]);
    // a second Apply: the file holds it already
    expect(await applyFileRewrite(OFFER, io)).toBe(
      "mymod.py already holds porter's rewrite"
    );
    fileFresh(PATH); // a cell that calls into it ran again
    expect(isFileApplied(PATH)).toBe(false);
  });

  it('refuses a file edited on disk since porter recorded it, and writes nothing', async () => {
    const edited = run.module.replace('m / n', 'm / (n + 1)');
    const { io, disk, writes } = access(edited);
    expect(await applyFileRewrite(OFFER, io)).toBe(
      'mymod.py changed since porter recorded it: run the cell again'
    );
    expect(disk.get(PATH)).toBe(edited);
    expect(writes).toEqual([]);
    expect(isFileApplied(PATH)).toBe(false);
  });

  it('writes through the open editor as one undo step; an undo makes it fresh', async () => {
    const { io, disk, writes, open } = access(run.module, run.module);
    expect(await applyFileRewrite(OFFER, io)).toBeNull();
    expect(open!.text).toBe(OFFER.source);
    expect(open!.undo).toEqual([run.module]); // one replace: one undo step
    expect(open!.saves).toBe(1);
    expect(disk.get(PATH)).toBe(OFFER.source);
    expect(writes).toEqual([]); // never around the editor
    expect(isFileApplied(PATH)).toBe(true);
    open!.undoLast();
    await until(() => !isFileApplied(PATH));
    expect(isFileApplied(PATH)).toBe(false);
  });

  it('refuses while the editor holds unsaved edits, the editor left as it is', async () => {
    const typed = `${run.module}# a note\n`;
    const { io, disk, open } = access(run.module, typed);
    expect(await applyFileRewrite(OFFER, io)).toMatch(
      /^mymod\.py was edited in its editor since porter recorded it/
    );
    expect(open!.text).toBe(typed);
    expect(disk.get(PATH)).toBe(run.module);
    expect(isFileApplied(PATH)).toBe(false);
  });

  it('says why when the file cannot be read or written', async () => {
    const gone: IFileRewrite = {
      ...OFFER,
      path: 'proj/gone.py',
      file: 'gone.py'
    };
    expect(await applyFileRewrite(gone, access().io)).toBe(
      'gone.py could not be read: No such file or directory'
    );
    const { io } = access();
    io.write = async () => {
      throw new Error('Permission denied');
    };
    expect(await applyFileRewrite(OFFER, io)).toBe(
      'mymod.py could not be written: Permission denied'
    );
    expect(isFileApplied(PATH)).toBe(false);
  });
});
