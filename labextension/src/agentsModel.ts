// The registered agents, from `GET agents` (docs/protocol.md 6.2.2), and pausing one. Agents
// change rarely: they are polled every few seconds, on their own, so a failing `GET agents`
// never holds up the pending list.

import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { PolledModel, PollState } from './polling';
import { fetchAgents, postPause } from './request';
import { IAgent } from './tokens';

/** Poll intervals in ms: every 5 s; after an error, longer each time up to a minute. */
export const AGENTS_FREQUENCY = { interval: 5000, max: 60_000 };

export class AgentsModel extends PolledModel<IAgent[]> {
  constructor(options: AgentsModel.IOptions = {}) {
    super('jupyter-approvals:agents', AGENTS_FREQUENCY);
    this._settings = options.serverSettings;
  }

  /** The agents as last fetched, in the server's order. */
  get agents(): readonly IAgent[] {
    return this._agents;
  }

  /** Emitted when an answer differs from the agents held. */
  get changed(): ISignal<this, readonly IAgent[]> {
    return this._changed;
  }

  /**
   * Pause an agent (its held requests rejected, its token refused) or resume it. The caller
   * polls after: the agents, and whatever else the pause changed.
   */
  async setPaused(agent: string, paused: boolean): Promise<void> {
    await postPause(agent, paused, this._settings);
  }

  protected fetch(): Promise<IAgent[]> {
    return fetchAgents(this._settings);
  }

  protected onTick(state: PollState<IAgent[]>): void {
    // An error keeps the agents held: they come with a later poll.
    if (state.phase === 'resolved' || state.phase === 'reconnected') {
      const agents = state.payload as IAgent[];
      if (JSON.stringify(agents) !== JSON.stringify(this._agents)) {
        this._agents = agents;
        this._changed.emit(agents);
      }
    }
  }

  private _settings: ServerConnection.ISettings | undefined;
  private _agents: IAgent[] = [];
  private _changed = new Signal<this, readonly IAgent[]>(this);
}

export namespace AgentsModel {
  export interface IOptions {
    /** Defaults to the page's settings (base URL, token). */
    serverSettings?: ServerConnection.ISettings;
  }
}
