// What the sidebar's polls have in common: a Lumino Poll that backs off on errors and stands
// by while the page is hidden, polled at once when the page is shown again, with a `refresh`
// that resolves once the answer it asked for has been applied.

import { IDisposable } from '@lumino/disposable';
import { IPoll, Poll } from '@lumino/polling';
import { Signal } from '@lumino/signaling';

/** A Poll's state, as its `ticked` signal gives it. */
export type PollState<T> = IPoll.State<T, unknown, 'standby'>;

export class VisiblePoll<T> implements IDisposable {
  /**
   * `factory` asks the server; `apply` gets every tick, and acts on the ones that carry an
   * answer (`resolved`, `reconnected`) or an error (`rejected`).
   */
  constructor(options: VisiblePoll.IOptions<T>) {
    this._poll = new Poll<T, unknown, 'standby'>({
      auto: false,
      factory: options.factory,
      name: options.name,
      // Nothing is asked while nobody can see the answer; the tab's badge waits too.
      standby: 'when-hidden'
    });
    // Set here, not in the options: the constructor raises any max below 30 s to 30 s.
    this._poll.frequency = { ...options.frequency, backoff: true };
    this._poll.ticked.connect((_, state) => options.apply(state));
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  /** Poll now and every interval after; at once again whenever the page is shown. */
  start(): void {
    document.addEventListener('visibilitychange', this._onVisibility);
    void this._poll.start();
  }

  /**
   * Poll now. Calls made while a refresh is under way share it; a refresh made while a
   * scheduled poll waits for its answer supersedes it (that answer is dropped, never applied
   * after a newer one). Resolves once the answer was applied (or the poll stood by, or was
   * disposed); never rejects.
   */
  async refresh(): Promise<void> {
    await this._poll.refresh();
    await this._poll.tick.catch(() => undefined);
  }

  dispose(): void {
    document.removeEventListener('visibilitychange', this._onVisibility);
    this._poll.dispose();
  }

  private _onVisibility = (): void => {
    if (!document.hidden) {
      void this.refresh();
    }
  };

  private _poll: Poll<T, unknown, 'standby'>;
}

export namespace VisiblePoll {
  export interface IOptions<T> {
    name: string;
    factory: () => Promise<T>;
    apply: (state: PollState<T>) => void;
    /** Interval while the server answers; after errors it grows (randomly, up to 3×) to max. */
    frequency: { interval: number; max: number };
  }
}

/**
 * A model fed by one VisiblePoll: starting, refreshing and disposing are the poll's; a
 * subclass says what to fetch and what to do with each tick.
 */
export abstract class PolledModel<T> implements IDisposable {
  constructor(name: string, frequency: VisiblePoll.IOptions<T>['frequency']) {
    this._poll = new VisiblePoll<T>({
      name,
      factory: () => this.fetch(),
      apply: state => this.onTick(state),
      frequency
    });
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  start(): void {
    this._poll.start();
  }

  /** Poll now; resolves once the answer is applied. */
  refresh(): Promise<void> {
    return this._poll.refresh();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    Signal.clearData(this);
  }

  /** Ask the server (called by the poll, never before `start`). */
  protected abstract fetch(): Promise<T>;

  /** Act on one tick of the poll: an answer, an error, or standby. */
  protected abstract onTick(state: PollState<T>): void;

  private _poll: VisiblePoll<T>;
}
