/**
 * The notebook's cell order, told to the person's kernel, so that porter names a cell
 * recorded live as `porter run` does (`cell 3 · In [2]`, as JupyterLab counts): the
 * kernel knows the running cell's id (JupyterLab's `cellId` in each execute request),
 * not where the cell is. The order travels through the `porter.cells` comm, which porter
 * registers in the kernel when it is loaded (`porter_ext/session/cell_order.py`): the
 * ids of all cells in order, in the comm's opening message and again, debounced, when
 * cells are added, moved or removed, and at the latest just before a cell runs.
 *
 * The comm is opened only where porter is in use, so that a kernel without porter is
 * never asked: just before a cell with a `%%port` or `%port` line runs (its execute
 * request comes behind the comm's opening, so even "Run All" after a restart has the
 * order in place), and just after a cell that loads porter ran. A page reloaded on a
 * running kernel takes over the comm the kernel already has. Messages go on the main
 * shell, not on a comm subshell: they must reach the kernel before the execute request
 * sent after them.
 */
/** The comm target porter registers in the person's kernel. */
export const ORDER_TARGET = 'porter.cells';

/** Milliseconds the order waits for more changes before it is sent (a cell run sends
 * it at once). */
export const ORDER_DELAY = 250;

/** A cell whose run needs porter (a `%%port` cell, a `%port` line). */
const RUNS_PORTER = /^[ \t]*%%?port\b/m;
/** A cell that may load porter (`%load_ext porter_ext`, `import porter_ext`). */
const LOADS_PORTER = /\bporter_ext\b/;

/** When to open the comm for a cell of this source: `before` it runs (it needs porter,
 * so porter is loaded by then), `after` it ran (it may have loaded porter: the comm's
 * opening would reach the kernel before it), or never. */
export function openFor(source: string): 'before' | 'after' | null {
  if (LOADS_PORTER.test(source)) {
    return 'after';
  }
  return RUNS_PORTER.test(source) ? 'before' : null;
}

/** What the kernel is sent: the ids of every cell, in notebook order (a type, not an
 * interface: it is JSON a comm carries). */
export type OrderMessage = { cells: string[] };

export function orderMessage(ids: readonly string[]): OrderMessage {
  return { cells: [...ids] };
}

/** The part of a kernel's comm porter uses (JupyterLab's `IComm`). */
export interface ICommLike {
  readonly isDisposed: boolean;
  open(data: OrderMessage): unknown;
  send(data: OrderMessage): unknown;
}

/** The part of a kernel connection porter uses (JupyterLab's `IKernelConnection`). */
export interface IKernelLike {
  createComm(target: string, commId?: string): ICommLike;
  requestCommInfo(content: {
    target_name: string;
  }): Promise<{ content: unknown }>;
}

/** The comms of `target` a comm_info reply lists (their ids). */
export function commsOf(reply: { content: unknown }, target: string): string[] {
  const comms = (reply.content as { comms?: unknown } | null)?.comms;
  if (!comms || typeof comms !== 'object') {
    return [];
  }
  return Object.entries(comms as Record<string, { target_name?: unknown }>)
    .filter(([, info]) => info?.target_name === target)
    .map(([id]) => id);
}

/**
 * One notebook's link to its kernel: the comm (null until porter is known to be in the
 * kernel, or once the kernel closed it), whether the order changed since it was last
 * sent, and the debounce timer.
 */
export class CellOrderLink {
  constructor(
    private readonly kernel: IKernelLike,
    private readonly ids: () => string[],
    private readonly delay: number = ORDER_DELAY
  ) {}

  /** Whether the kernel is being told the order (a comm open, or being opened). */
  get linked(): boolean {
    return this._comm !== null && !this._comm.isDisposed;
  }

  /** A cell is about to run: open the comm first where it needs porter, and send the
   * order if it changed. */
  beforeRun(source: string): void {
    if (!this.linked && openFor(source) === 'before') {
      this.open();
    } else {
      this.flush();
    }
  }

  /** A cell ran: open the comm where it may have loaded porter. */
  afterRun(source: string): void {
    if (!this.linked && openFor(source) === 'after') {
      this.open();
    }
  }

  /** Cells were added, moved or removed: the order is sent after `delay` ms without
   * another change (or before the next cell runs). */
  changed(): void {
    this._dirty = true;
    if (!this.linked) {
      return;
    }
    if (this._timer !== null) {
      clearTimeout(this._timer);
    }
    this._timer = setTimeout(() => this.flush(), this.delay);
  }

  /** Send the order now if it changed since it was last sent. */
  flush(): void {
    this.clearTimer();
    if (!this._dirty || !this._comm || this._comm.isDisposed) {
      return;
    }
    this._comm.send(orderMessage(this.ids()));
    this._dirty = false;
  }

  /** Open the comm with the order in its first message. */
  open(): void {
    const comm = this.kernel.createComm(ORDER_TARGET);
    onMainShell(comm);
    this.clearTimer();
    comm.open(orderMessage(this.ids()));
    this._comm = comm;
    this._dirty = false;
  }

  /** The kernel already has porter's comm (a page reloaded on a running kernel): use
   * it, and send the order. */
  async adopt(): Promise<void> {
    const reply = await this.kernel.requestCommInfo({
      target_name: ORDER_TARGET
    });
    const [id] = commsOf(reply, ORDER_TARGET);
    if (id === undefined || this.linked) {
      return;
    }
    const comm = this.kernel.createComm(ORDER_TARGET, id);
    onMainShell(comm);
    this._comm = comm;
    this._dirty = true;
    this.flush();
  }

  /** No more messages (the notebook closed, or its kernel changed). */
  dispose(): void {
    this.clearTimer();
    this._comm = null;
  }

  private clearTimer(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _comm: ICommLike | null = null;
  private _dirty = true;
  private _timer: ReturnType<typeof setTimeout> | null = null;
}

/** The comm's messages go on the kernel's main shell, in order with execute requests
 * (JupyterLab 4.6 sends comm messages on a subshell by default where the kernel has
 * them, which would let a cell start before the order it must see). */
function onMainShell(comm: ICommLike): void {
  (comm as unknown as { commsOverSubshells?: string }).commsOverSubshells =
    'disabled';
}
