import {
  CellOrderLink,
  commsOf,
  ICommLike,
  IKernelLike,
  openFor,
  ORDER_TARGET,
  OrderMessage
} from '../cellorder';

/** A kernel connection as the link sees it, keeping the messages it was given in the
 * order they would travel (one shell channel). */
class Wire implements IKernelLike {
  messages: [string, string, OrderMessage | null][] = [];
  comms: Comm[] = [];
  /** What comm_info_request answers. */
  info: Record<string, { target_name: string }> = {};

  createComm(target: string, commId?: string): Comm {
    const comm = new Comm(this, target, commId ?? `comm-${this.comms.length}`);
    this.comms.push(comm);
    return comm;
  }

  requestCommInfo(content: {
    target_name: string;
  }): Promise<{ content: unknown }> {
    this.messages.push(['comm_info_request', content.target_name, null]);
    return Promise.resolve({ content: { status: 'ok', comms: this.info } });
  }

  execute(link: CellOrderLink, source: string): void {
    link.beforeRun(source);
    this.messages.push(['execute_request', source, null]);
  }
}

class Comm implements ICommLike {
  isDisposed = false;
  commsOverSubshells = 'perCommTarget';
  constructor(
    private wire: Wire,
    readonly target: string,
    readonly id: string
  ) {}
  open(data: OrderMessage): void {
    this.wire.messages.push(['comm_open', this.id, data]);
  }
  send(data: OrderMessage): void {
    this.wire.messages.push(['comm_msg', this.id, data]);
  }
}

const kinds = (wire: Wire) => wire.messages.map(m => m[0]);

describe('when the kernel is told the order', () => {
  it('opens before a porter cell, after a cell that loads porter, never otherwise', () => {
    expect(openFor('%%port -b numpy\nx = 1')).toBe('before');
    expect(openFor('\n  %%port\nx = 1')).toBe('before');
    expect(openFor('%port on')).toBe('before');
    expect(openFor('x = 1\n%port backends numpy')).toBe('before');
    expect(openFor('%load_ext porter_ext')).toBe('after');
    expect(openFor('%load_ext porter_ext\n%port on')).toBe('after');
    expect(openFor('import numpy as np\nreport = 1')).toBe(null);
    expect(openFor('%portable')).toBe(null);
    expect(openFor('# %%port in a comment\nx = 1')).toBe(null);
  });

  it('sends nothing to a kernel of a notebook that does not use porter', () => {
    const wire = new Wire();
    const link = new CellOrderLink(wire, () => ['a', 'b']);
    wire.execute(link, 'x = 1');
    link.afterRun('x = 1');
    link.changed();
    link.flush();
    expect(kinds(wire)).toEqual(['execute_request']);
  });

  it('opens the comm with the order just before the first porter cell runs', () => {
    const wire = new Wire();
    const ids = ['load', 'md', 'ported'];
    const link = new CellOrderLink(wire, () => ids);
    wire.execute(link, '%load_ext porter_ext');
    wire.execute(link, '%%port\nx = 1');
    expect(wire.messages).toEqual([
      ['execute_request', '%load_ext porter_ext', null],
      ['comm_open', 'comm-0', { cells: ['load', 'md', 'ported'] }],
      ['execute_request', '%%port\nx = 1', null]
    ]);
    // on the kernel's main shell, in order with the execute requests
    expect(wire.comms[0].commsOverSubshells).toBe('disabled');
    expect(wire.comms[0].target).toBe(ORDER_TARGET);
  });

  it('sends a moved order before the next cell runs, once', () => {
    jest.useFakeTimers();
    try {
      const wire = new Wire();
      let ids = ['load', 'md', 'ported'];
      const link = new CellOrderLink(wire, () => ids);
      link.afterRun('%load_ext porter_ext');
      ids = ['load', 'ported', 'md'];
      link.changed();
      link.changed();
      wire.execute(link, '%%port\nx = 1');
      wire.execute(link, '%%port\nx = 2');
      jest.runAllTimers();
      expect(wire.messages).toEqual([
        ['comm_open', 'comm-0', { cells: ['load', 'md', 'ported'] }],
        ['comm_msg', 'comm-0', { cells: ['load', 'ported', 'md'] }],
        ['execute_request', '%%port\nx = 1', null],
        ['execute_request', '%%port\nx = 2', null]
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('debounces changes: one message for a burst of moves', () => {
    jest.useFakeTimers();
    try {
      const wire = new Wire();
      const ids = ['a'];
      const link = new CellOrderLink(wire, () => ids, 100);
      link.afterRun('import porter_ext');
      for (let i = 0; i < 500; i++) {
        ids.push(`c${i}`);
        link.changed();
        jest.advanceTimersByTime(10);
      }
      expect(kinds(wire)).toEqual(['comm_open']);
      jest.advanceTimersByTime(100);
      expect(kinds(wire)).toEqual(['comm_open', 'comm_msg']);
      expect(wire.messages[1][2]?.cells).toHaveLength(501);
    } finally {
      jest.useRealTimers();
    }
  });

  it('opens again once the kernel closed the comm (porter not loaded, a restart)', () => {
    const wire = new Wire();
    const link = new CellOrderLink(wire, () => ['a']);
    wire.execute(link, '%%port\nx = 1');
    expect(link.linked).toBe(true);
    wire.comms[0].isDisposed = true; // the kernel answered comm_close
    expect(link.linked).toBe(false);
    wire.execute(link, '%%port\nx = 1');
    expect(kinds(wire)).toEqual([
      'comm_open',
      'execute_request',
      'comm_open',
      'execute_request'
    ]);
  });

  it('takes over the comm a running kernel already has (a page reload)', async () => {
    const wire = new Wire();
    wire.info = {
      other: { target_name: 'jupyter.widget' },
      kept: { target_name: ORDER_TARGET }
    };
    const link = new CellOrderLink(wire, () => ['x', 'y']);
    await link.adopt();
    expect(wire.messages).toEqual([
      ['comm_info_request', ORDER_TARGET, null],
      ['comm_msg', 'kept', { cells: ['x', 'y'] }]
    ]);
    wire.execute(link, '%%port\nz = 1');
    expect(kinds(wire).slice(2)).toEqual(['execute_request']);
  });

  it('reads only the comms of its target from a comm_info reply', () => {
    expect(
      commsOf({ content: { comms: { a: { target_name: 'x' } } } }, 'x')
    ).toEqual(['a']);
    expect(commsOf({ content: { status: 'error' } }, 'x')).toEqual([]);
    expect(commsOf({ content: null }, 'x')).toEqual([]);
  });
});
