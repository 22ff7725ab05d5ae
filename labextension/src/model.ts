// The pending requests of every kernel: polls `GET pending` every second, keeps the requests
// keyed by `kernel_id/id`, and emits only what changed. Decisions go through `decide`.

import { ServerConnection } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  describeError,
  fetchAgents,
  fetchPending,
  postDecision,
  postPause,
  ServerExtensionMissing
} from './request';
import {
  Decision,
  IAgent,
  IApprovalsModel,
  IConnection,
  IDecided,
  ILastDecision,
  IPendingChange,
  IPendingReply,
  IPendingRequest,
  itemKey,
  Verdict
} from './tokens';

/** Poll intervals in ms: while the extension answers; after an error; while it is missing. */
const INTERVAL = { ok: 1000, error: 3000, missing: 15000 };

/** The agents are asked for on every this many polls (they change rarely). */
const AGENT_POLLS = 5;

/** Clock differences under this (ms) are the `Date` header's 1 s resolution, not skew. */
const SKEW_THRESHOLD = 1500;

export class ApprovalsModel implements IApprovalsModel, IDisposable {
  constructor(options: ApprovalsModel.IOptions = {}) {
    this._settings = options.serverSettings;
  }

  get keys(): readonly string[] {
    return this._keys;
  }

  get(key: string): IPendingRequest | undefined {
    return this._items.get(key);
  }

  get connection(): IConnection {
    return this._connection;
  }

  get changed(): ISignal<IApprovalsModel, IPendingChange> {
    return this._changed;
  }

  get connectionChanged(): ISignal<IApprovalsModel, IConnection> {
    return this._connectionChanged;
  }

  get lastDecision(): ILastDecision | null {
    return this._lastDecision;
  }

  get lastDecisionChanged(): ISignal<IApprovalsModel, ILastDecision | null> {
    return this._lastDecisionChanged;
  }

  clearLastDecision(): void {
    if (this._lastDecision !== null) {
      this._lastDecision = null;
      this._lastDecisionChanged.emit(null);
    }
  }

  get verdictChanged(): ISignal<IApprovalsModel, string> {
    return this._verdictChanged;
  }

  get agents(): readonly IAgent[] {
    return this._agents;
  }

  get agentsChanged(): ISignal<IApprovalsModel, readonly IAgent[]> {
    return this._agentsChanged;
  }

  async setPaused(agent: string, paused: boolean): Promise<void> {
    await postPause(agent, paused, this._settings);
    this._polls = 0; // ask for the agents with the next poll
    await this.refresh();
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Start polling; polling pauses while the page is hidden and resumes at once after. */
  start(): void {
    document.addEventListener('visibilitychange', this._onVisibility);
    void this.refresh();
  }

  now(): number {
    return Date.now() + this._clockOffset;
  }

  verdict(key: string): Verdict | undefined {
    return this._verdicts.get(key);
  }

  refresh(): Promise<void> {
    window.clearTimeout(this._timer);
    if (!this._inFlight) {
      this._inFlight = this._poll().finally(() => {
        this._inFlight = null;
        this._schedule();
      });
    }
    return this._inFlight;
  }

  async decide(item: IPendingRequest, decision: Decision, reason: string): Promise<Verdict> {
    const key = itemKey(item);
    const current = this._verdicts.get(key);
    if (current?.state === 'sending') {
      return current;
    }
    this._setVerdict(key, { state: 'sending', decision });
    this._decidedHere.add(item.id);
    let verdict: Verdict;
    try {
      const body = { decision, fingerprint: item.fingerprint, reason };
      const reply = await postDecision(item, body, this._settings);
      verdict = reply.ok
        ? { state: 'ok', decision, status: reply.status ?? null }
        : {
            state: 'error',
            decision,
            code: reply.code ?? 'APPROVAL_ERROR',
            message: reply.message
          };
    } catch (error) {
      verdict = { state: 'error', decision, ...describeError(error) };
    }
    if (this._items.has(key)) {
      this._setVerdict(key, verdict);
    }
    // The item may leave the list at the next poll (an auto-answered request ends at once):
    // keep the outcome where the person can still read it.
    this._lastDecision = { action: item.action, summary: item.summary, verdict };
    this._lastDecisionChanged.emit(this._lastDecision);
    return verdict;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    window.clearTimeout(this._timer);
    document.removeEventListener('visibilitychange', this._onVisibility);
    Signal.clearData(this);
  }

  private async _poll(): Promise<void> {
    try {
      const { body, date } = await fetchPending(this._settings);
      if (date !== null) {
        this._updateClock(date);
      }
      this._apply(body);
      this._follow(body.last_decision ?? null);
      if (this._polls++ % AGENT_POLLS === 0) {
        await this._pollAgents();
      }
      this._setConnection({
        state: 'ok',
        message: '',
        unansweredKernels: body.unanswered_kernels ?? [],
        journalErrors: body.journal_errors ?? []
      });
    } catch (error) {
      const missing = error instanceof ServerExtensionMissing;
      if (missing) {
        this._apply({
          pending: [],
          unanswered_kernels: [],
          kernels_without_approvals: [],
          journal_errors: []
        });
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
  }

  private async _pollAgents(): Promise<void> {
    let agents: IAgent[];
    try {
      agents = await fetchAgents(this._settings);
    } catch {
      return; // the pending list is what matters; the agents come with a later poll
    }
    const before = JSON.stringify(this._agents);
    if (JSON.stringify(agents) !== before) {
      this._agents = agents;
      this._agentsChanged.emit(agents);
    }
  }

  private _schedule(): void {
    window.clearTimeout(this._timer);
    if (this._disposed || document.hidden) {
      return; // _onVisibility polls again when the page is shown
    }
    const state = this._connection.state;
    const delay =
      state === 'missing' ? INTERVAL.missing : state === 'error' ? INTERVAL.error : INTERVAL.ok;
    this._timer = window.setTimeout(() => void this.refresh(), delay);
  }

  private _onVisibility = (): void => {
    if (!document.hidden) {
      void this.refresh();
    }
  };

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
    for (const key of removed) {
      this._verdicts.delete(key);
    }
    if (added.length || removed.length || updated.length || reordered) {
      this._changed.emit({ added, removed, updated, reordered });
    }
  }

  /** Show a decision made anywhere else (a card, another frontend) once it is the latest. */
  private _follow(latest: IDecided | null): void {
    const key = latest ? `${latest.kernel_id ?? 'held'}/${latest.id}/${latest.decided_at}` : '';
    const first = this._latestSeen === undefined;
    if (key === this._latestSeen) {
      return;
    }
    this._latestSeen = key;
    // What was decided before this sidebar started is history, not news; and a decision this
    // sidebar sent is shown already, with its own verdict.
    if (first || latest === null || this._decidedHere.has(latest.id)) {
      return;
    }
    const rejected = latest.status === 'rejected';
    const verdict: Verdict =
      latest.status === 'auto_answered'
        ? {
            state: 'error',
            decision: 'approve',
            code: 'APPROVAL_AUTO_ANSWERED',
            message: 'answered sooner than a person reads; nothing ran'
          }
        : { state: 'ok', decision: rejected ? 'reject' : 'approve', status: latest.status };
    this._lastDecision = {
      action: latest.action ?? '',
      summary: latest.summary ?? '',
      verdict,
      elsewhere: latest.channel === 'card' ? 'in the card' : `via ${latest.channel ?? '?'}`
    };
    this._lastDecisionChanged.emit(this._lastDecision);
  }

  private _setConnection(connection: IConnection): void {
    if (JSON.stringify(connection) !== JSON.stringify(this._connection)) {
      this._connection = connection;
      this._connectionChanged.emit(connection);
    }
  }

  private _lastDecision: ILastDecision | null = null;
  /** The key of the latest decision the server named (undefined before the first poll). */
  private _latestSeen: string | undefined = undefined;
  /** Ids of the requests this sidebar sent a decision for. */
  private _decidedHere = new Set<string>();
  private _lastDecisionChanged = new Signal<this, ILastDecision | null>(this);

  private _setVerdict(key: string, verdict: Verdict): void {
    this._verdicts.set(key, verdict);
    this._verdictChanged.emit(key);
  }

  /** Follow the server's clock (expiry times are its), ignoring the header's resolution. */
  private _updateClock(serverDate: number): void {
    const offset = serverDate + 500 - Date.now();
    if (Math.abs(offset) < SKEW_THRESHOLD) {
      this._clockOffset = 0;
    } else if (Math.abs(offset - this._clockOffset) > 1000) {
      this._clockOffset = offset;
    }
  }

  private _agents: IAgent[] = [];
  private _agentsChanged = new Signal<IApprovalsModel, readonly IAgent[]>(this);
  private _polls = 0;
  private _settings: ServerConnection.ISettings | undefined;
  private _items = new Map<string, IPendingRequest>();
  private _signatures = new Map<string, string>();
  private _keys: string[] = [];
  private _verdicts = new Map<string, Verdict>();
  private _connection: IConnection = {
    state: 'connecting',
    message: '',
    unansweredKernels: [],
    journalErrors: []
  };
  private _clockOffset = 0;
  private _timer = 0;
  private _inFlight: Promise<void> | null = null;
  private _disposed = false;
  private _changed = new Signal<IApprovalsModel, IPendingChange>(this);
  private _connectionChanged = new Signal<IApprovalsModel, IConnection>(this);
  private _verdictChanged = new Signal<IApprovalsModel, string>(this);
}

export namespace ApprovalsModel {
  export interface IOptions {
    /** Defaults to the page's settings (base URL, token). */
    serverSettings?: ServerConnection.ISettings;
  }
}
