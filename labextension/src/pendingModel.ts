// The pending requests of every kernel and the state of the connection, from `GET pending`
// (docs/protocol.md 6.1): polled every second, backing off while the server fails, keyed by
// `kernel_id/id`, emitting only what changed.

import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { PolledModel, PollState } from './polling';
import { describeError, fetchPending, IAnswer, ServerExtensionMissing } from './request';
import { ServerClock } from './serverClock';
import { IConnection, IPendingChange, IPendingReply, IPendingRequest, itemKey } from './tokens';

/**
 * Poll intervals in ms: every second while the server answers; after an error, longer each
 * time up to 15 s (a server that is restarting, or has no extension, is not asked every second).
 */
export const PENDING_FREQUENCY = { interval: 1000, max: 15_000 };

/** What `GET pending` answered when the server extension is missing: nothing can be decided. */
const NOTHING: IPendingReply = {
  pending: [],
  unanswered_kernels: [],
  kernels_without_approvals: [],
  journal_errors: []
};

export class PendingModel extends PolledModel<IAnswer<IPendingReply>> {
  constructor(options: PendingModel.IOptions) {
    super('jupyter-approvals:pending', PENDING_FREQUENCY);
    this._settings = options.serverSettings;
    this._clock = options.clock;
  }

  /** Keys (`kernel_id/id`) in the server's order: oldest request first. */
  get keys(): readonly string[] {
    return this._keys;
  }

  get(key: string): IPendingRequest | undefined {
    return this._items.get(key);
  }

  /** Emitted after an answer that changed the list (not on every poll). */
  get changed(): ISignal<this, IPendingChange> {
    return this._changed;
  }

  get connection(): IConnection {
    return this._connection;
  }

  get connectionChanged(): ISignal<this, IConnection> {
    return this._connectionChanged;
  }

  /** Emitted with every answer, once the list and the connection have taken it. */
  get answered(): ISignal<this, IPendingReply> {
    return this._answered;
  }

  protected fetch(): Promise<IAnswer<IPendingReply>> {
    return fetchPending(this._settings);
  }

  protected onTick(state: PollState<IAnswer<IPendingReply>>): void {
    // A tick that resolved carries the factory's answer; one that was rejected, its error.
    if (state.phase === 'resolved' || state.phase === 'reconnected') {
      this._onAnswer(state.payload as IAnswer<IPendingReply>);
    } else if (state.phase === 'rejected') {
      this._onError(state.payload);
    }
  }

  private _onAnswer({ body, date }: IAnswer<IPendingReply>): void {
    // The clock first: whoever redraws on `changed` counts the time left with it.
    if (date !== null) {
      this._clock.update(date);
    }
    this._apply(body);
    this._setConnection({
      state: 'ok',
      message: '',
      unansweredKernels: body.unanswered_kernels ?? [],
      journalErrors: body.journal_errors ?? []
    });
    this._answered.emit(body);
  }

  private _onError(error: unknown): void {
    const missing = error instanceof ServerExtensionMissing;
    if (missing) {
      // Without the extension no request can be decided: none is listed.
      this._apply(NOTHING);
    }
    const { code, message } = describeError(error);
    this._setConnection({
      state: missing ? 'missing' : 'error',
      message: missing ? message : `${code}: ${message}`,
      detail: missing ? error.detail : undefined,
      unansweredKernels: [],
      journalErrors: []
    });
  }

  /** Replace the list with the server's, emitting the keys added, removed and changed. */
  private _apply(reply: IPendingReply): void {
    const items = new Map<string, IPendingRequest>();
    const signatures = new Map<string, string>();
    for (const item of reply.pending) {
      const key = itemKey(item);
      if (!items.has(key)) {
        items.set(key, item);
        signatures.set(key, JSON.stringify(item));
      }
    }
    const keys = [...items.keys()];
    const added = keys.filter(key => !this._items.has(key));
    const removed = this._keys.filter(key => !items.has(key));
    const updated = keys.filter(
      key => this._signatures.has(key) && this._signatures.get(key) !== signatures.get(key)
    );
    const kept = keys.filter(key => this._items.has(key));
    const keptBefore = this._keys.filter(key => items.has(key));
    const reordered = kept.some((key, index) => keptBefore[index] !== key);
    this._items = items;
    this._signatures = signatures;
    this._keys = keys;
    if (added.length || removed.length || updated.length || reordered) {
      this._changed.emit({ added, removed, updated, reordered });
    }
  }

  private _setConnection(connection: IConnection): void {
    if (JSON.stringify(connection) !== JSON.stringify(this._connection)) {
      this._connection = connection;
      this._connectionChanged.emit(connection);
    }
  }

  private _settings: ServerConnection.ISettings | undefined;
  private _clock: ServerClock;
  private _items = new Map<string, IPendingRequest>();
  private _signatures = new Map<string, string>();
  private _keys: string[] = [];
  private _connection: IConnection = {
    state: 'connecting',
    message: '',
    unansweredKernels: [],
    journalErrors: []
  };
  private _changed = new Signal<this, IPendingChange>(this);
  private _connectionChanged = new Signal<this, IConnection>(this);
  private _answered = new Signal<this, IPendingReply>(this);
}

export namespace PendingModel {
  export interface IOptions {
    /** Defaults to the page's settings (base URL, token). */
    serverSettings?: ServerConnection.ISettings;
    /** Follows the `Date` header of every answer. */
    clock: ServerClock;
  }
}
