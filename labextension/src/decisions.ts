// Decisions sent from the sidebar (`POST` to a request's `decide_url`, docs/protocol.md 6.2)
// and their verdicts, per listed request, until the request leaves the list.

import { ServerConnection } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { LastDecisionModel } from './lastDecision';
import { PendingModel } from './pendingModel';
import { describeError, postDecision } from './request';
import {
  Decision,
  DecisionPlace,
  IDecisionBody,
  IPendingChange,
  IPendingRequest,
  itemKey,
  Verdict
} from './tokens';

export class DecisionsModel implements IDisposable {
  constructor(options: DecisionsModel.IOptions) {
    this._settings = options.serverSettings;
    this._pending = options.pending;
    this._last = options.lastDecision;
    this._pending.changed.connect(this._onPendingChanged, this);
  }

  /** Where the decision sent for the request `key` stands, while it is listed. */
  verdict(key: string): Verdict | undefined {
    return this._verdicts.get(key);
  }

  /** Emitted with the key of the request whose verdict changed. */
  get verdictChanged(): ISignal<this, string> {
    return this._verdictChanged;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * Send a decision for `item` exactly as displayed (its fingerprint is the one sent). While
   * one is being sent for the item, another press sends nothing and gets that one's verdict.
   */
  async decide(
    item: IPendingRequest,
    decision: Decision,
    reason: string,
    place: DecisionPlace = 'sidebar'
  ): Promise<Verdict> {
    const key = itemKey(item);
    const current = this._verdicts.get(key);
    if (current?.state === 'sending') {
      return current;
    }
    this._setVerdict(key, { state: 'sending', decision });
    this._last.sending(item.id);
    let verdict: Verdict;
    try {
      const body: IDecisionBody = { decision, fingerprint: item.fingerprint, reason };
      // Only the server's route for held code takes a place: a kernel records its own card's
      // decisions itself, and its route refuses fields it does not know.
      if (place === 'card' && item.held_at === 'server') {
        body.channel = 'card';
      }
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
    if (this._pending.get(key)) {
      this._setVerdict(key, verdict);
    }
    // The item may leave the list at the next poll (an auto-answered request ends at once):
    // the outcome stays where the person can still read it.
    this._last.sent(item, verdict);
    return verdict;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    Signal.clearData(this);
  }

  private _onPendingChanged(_: PendingModel, change: IPendingChange): void {
    for (const key of change.removed) {
      this._verdicts.delete(key);
    }
  }

  private _setVerdict(key: string, verdict: Verdict): void {
    this._verdicts.set(key, verdict);
    this._verdictChanged.emit(key);
  }

  private _settings: ServerConnection.ISettings | undefined;
  private _pending: PendingModel;
  private _last: LastDecisionModel;
  private _verdicts = new Map<string, Verdict>();
  private _verdictChanged = new Signal<this, string>(this);
  private _disposed = false;
}

export namespace DecisionsModel {
  export interface IOptions {
    serverSettings?: ServerConnection.ISettings;
    /** The list whose requests are decided; a verdict goes with its request. */
    pending: PendingModel;
    /** Where the outcome of every decision is kept. */
    lastDecision: LastDecisionModel;
  }
}
