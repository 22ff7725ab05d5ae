// The latest decision, kept where the person can read it after its request left the list: one
// sent from this sidebar with its verdict, or one made elsewhere (a card, another frontend, a
// pause) as `GET pending` names it in `last_decision` (docs/protocol.md 6.1).

import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { IDecided, ILastDecision, IPendingRequest, Verdict } from './tokens';

export class LastDecisionModel implements IDisposable {
  get value(): ILastDecision | null {
    return this._value;
  }

  get changed(): ISignal<this, ILastDecision | null> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Forget the latest decision (the person dismissed its note). */
  clear(): void {
    if (this._value !== null) {
      this._set(null);
    }
  }

  /** This sidebar is sending a decision for request `id`: the server naming it is no news. */
  sending(id: string): void {
    this._decidedHere.add(id);
  }

  /** A decision sent from this sidebar, and how it ended. */
  sent(item: IPendingRequest, verdict: Verdict): void {
    this._set({ action: item.action, summary: item.summary, verdict });
  }

  /** The latest decision the server names; shown once, when it is news. */
  follow(latest: IDecided | null): void {
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
    this._set({
      action: latest.action ?? '',
      summary: latest.summary ?? '',
      verdict,
      elsewhere: latest.channel === 'card' ? 'in the card' : `via ${latest.channel ?? '?'}`
    });
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    Signal.clearData(this);
  }

  private _set(value: ILastDecision | null): void {
    this._value = value;
    this._changed.emit(value);
  }

  private _value: ILastDecision | null = null;
  /** The key of the latest decision the server named (undefined before its first answer). */
  private _latestSeen: string | undefined = undefined;
  /** Ids of the requests this sidebar sent a decision for. */
  private _decidedHere = new Set<string>();
  private _changed = new Signal<this, ILastDecision | null>(this);
  private _disposed = false;
}
