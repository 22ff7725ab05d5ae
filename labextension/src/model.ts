// The sidebar's model (IApprovalsModel), put together from one model per concern:
// - PendingModel (pendingModel.ts): `GET pending` polled, the list and the connection;
// - AgentsModel (agentsModel.ts): `GET agents` polled, and pausing an agent;
// - DecisionsModel (decisions.ts): decisions sent and their verdicts;
// - LastDecisionModel (lastDecision.ts): the latest decision, here or elsewhere;
// - ServerClock (serverClock.ts): the server's time, from its `Date` headers.
// The polls are Lumino Polls (polling.ts). This class only wires them and re-emits their
// signals with itself as the sender, as IApprovalsModel promises.

import { ServerConnection } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { AgentsModel } from './agentsModel';
import { DecisionsModel } from './decisions';
import { LastDecisionModel } from './lastDecision';
import { PendingModel } from './pendingModel';
import { ServerClock } from './serverClock';
import {
  Decision,
  DecisionPlace,
  IAgent,
  IApprovalsModel,
  IConnection,
  ILastDecision,
  IPendingChange,
  IPendingRequest,
  Verdict
} from './tokens';

export class ApprovalsModel implements IApprovalsModel, IDisposable {
  constructor(options: ApprovalsModel.IOptions = {}) {
    const serverSettings = options.serverSettings;
    this._clock = new ServerClock();
    this._pending = new PendingModel({ serverSettings, clock: this._clock });
    this._agents = new AgentsModel({ serverSettings });
    this._last = new LastDecisionModel();
    // Before the list's changes are re-emitted: a removed request's verdict is gone by then.
    this._decisions = new DecisionsModel({
      serverSettings,
      pending: this._pending,
      lastDecision: this._last
    });
    this._pending.answered.connect((_, reply) => this._last.follow(reply.last_decision ?? null));
    this._pending.changed.connect((_, change) => this._changed.emit(change), this);
    this._pending.connectionChanged.connect(
      (_, connection) => this._connectionChanged.emit(connection),
      this
    );
    this._decisions.verdictChanged.connect((_, key) => this._verdictChanged.emit(key), this);
    this._last.changed.connect((_, last) => this._lastDecisionChanged.emit(last), this);
    this._agents.changed.connect((_, agents) => this._agentsChanged.emit(agents), this);
  }

  get keys(): readonly string[] {
    return this._pending.keys;
  }

  get(key: string): IPendingRequest | undefined {
    return this._pending.get(key);
  }

  get connection(): IConnection {
    return this._pending.connection;
  }

  get changed(): ISignal<IApprovalsModel, IPendingChange> {
    return this._changed;
  }

  get connectionChanged(): ISignal<IApprovalsModel, IConnection> {
    return this._connectionChanged;
  }

  get lastDecision(): ILastDecision | null {
    return this._last.value;
  }

  get lastDecisionChanged(): ISignal<IApprovalsModel, ILastDecision | null> {
    return this._lastDecisionChanged;
  }

  clearLastDecision(): void {
    this._last.clear();
  }

  get verdictChanged(): ISignal<IApprovalsModel, string> {
    return this._verdictChanged;
  }

  verdict(key: string): Verdict | undefined {
    return this._decisions.verdict(key);
  }

  get agents(): readonly IAgent[] {
    return this._agents.agents;
  }

  get agentsChanged(): ISignal<IApprovalsModel, readonly IAgent[]> {
    return this._agentsChanged;
  }

  /** Pause or resume an agent, then poll the agents and the list (its held requests end). */
  async setPaused(agent: string, paused: boolean): Promise<void> {
    await this._agents.setPaused(agent, paused);
    await Promise.all([this._agents.refresh(), this._pending.refresh()]);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Start polling; polling stands by while the page is hidden and resumes at once after. */
  start(): void {
    this._pending.start();
    this._agents.start();
  }

  now(): number {
    return this._clock.now();
  }

  refresh(): Promise<void> {
    return this._pending.refresh();
  }

  /** Send a decision, then poll at once: the decided request changes or leaves the list. */
  async decide(
    item: IPendingRequest,
    decision: Decision,
    reason: string,
    place: DecisionPlace = 'sidebar'
  ): Promise<Verdict> {
    const verdict = await this._decisions.decide(item, decision, reason, place);
    if (verdict.state !== 'sending') {
      void this._pending.refresh();
    }
    return verdict;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._decisions.dispose();
    this._pending.dispose();
    this._agents.dispose();
    this._last.dispose();
    Signal.clearData(this);
  }

  private _clock: ServerClock;
  private _pending: PendingModel;
  private _agents: AgentsModel;
  private _last: LastDecisionModel;
  private _decisions: DecisionsModel;
  private _disposed = false;
  private _changed = new Signal<IApprovalsModel, IPendingChange>(this);
  private _connectionChanged = new Signal<IApprovalsModel, IConnection>(this);
  private _verdictChanged = new Signal<IApprovalsModel, string>(this);
  private _lastDecisionChanged = new Signal<IApprovalsModel, ILastDecision | null>(this);
  private _agentsChanged = new Signal<IApprovalsModel, readonly IAgent[]>(this);
}

export namespace ApprovalsModel {
  export interface IOptions {
    /** Defaults to the page's settings (base URL, token). */
    serverSettings?: ServerConnection.ISettings;
  }
}
