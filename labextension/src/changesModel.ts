// The sandboxed kernels' change sets, from `GET changes` (docs/protocol.md 6.5), and deciding
// one. Polled on their own, every 2 s, so a failing `GET changes` never holds up the pending
// list.

import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { PolledModel, PollState } from './polling';
import {
  fetchChangePage,
  fetchChangePreview,
  fetchChangeSets,
  IChangePreview,
  postChangeDecision
} from './request';
import {
  IChangeDecisionReply,
  IChangePage,
  IChangeSet,
  IChangesReply,
  ISandboxState
} from './tokens';

/** Poll intervals in ms: every 2 s; after an error, longer each time up to 15 s. */
export const CHANGES_FREQUENCY = { interval: 2000, max: 15_000 };

export class ChangeSetsModel extends PolledModel<IChangesReply> {
  constructor(options: ChangeSetsModel.IOptions = {}) {
    super('jupyter-approvals:changes', CHANGES_FREQUENCY);
    this._settings = options.serverSettings;
  }

  /** The change sets as last fetched, in the server's order. */
  get changeSets(): readonly IChangeSet[] {
    return this._changeSets;
  }

  /** What the agent code policy amounts to here, as the server last said (null: unknown). */
  get sandbox(): ISandboxState | null {
    return this._sandbox;
  }

  /** Whether the server answered at least once (an empty list then means there are none). */
  get loaded(): boolean {
    return this._loaded;
  }

  /** Emitted when an answer differs from the change sets held, and on the first answer. */
  get changed(): ISignal<this, readonly IChangeSet[]> {
    return this._changed;
  }

  /** Apply or discard one change set, all of its files; polls again after. */
  async decide(
    changeSet: IChangeSet,
    decision: 'apply' | 'discard'
  ): Promise<IChangeDecisionReply> {
    try {
      return await postChangeDecision(
        changeSet.kernel_id,
        decision,
        changeSet.fingerprint,
        this._settings
      );
    } finally {
      void this.refresh();
    }
  }

  /** More files of a listed change set, from `offset` on (a listing holds the first 1,000). */
  page(changeSet: IChangeSet, offset: number): Promise<IChangePage> {
    return fetchChangePage(changeSet.kernel_id, changeSet.fingerprint, offset, this._settings);
  }

  /** One file's change of a listed change set, as the server shows it from its bytes. */
  preview(changeSet: IChangeSet, path: string): Promise<IChangePreview> {
    return fetchChangePreview(changeSet.kernel_id, path, this._settings);
  }

  protected fetch(): Promise<IChangesReply> {
    return fetchChangeSets(this._settings);
  }

  protected onTick(state: PollState<IChangesReply>): void {
    if (state.phase === 'resolved' || state.phase === 'reconnected') {
      const reply = state.payload as IChangesReply;
      const changeSets = reply.change_sets;
      const sandbox = reply.sandbox ?? null;
      const first = !this._loaded;
      this._loaded = true;
      const sandboxChanged = JSON.stringify(sandbox) !== JSON.stringify(this._sandbox);
      this._sandbox = sandbox;
      if (
        first ||
        sandboxChanged ||
        JSON.stringify(changeSets.map(keyOf)) !== JSON.stringify(this._changeSets.map(keyOf))
      ) {
        this._changeSets = changeSets;
        this._changed.emit(changeSets);
      }
    }
  }

  private _settings: ServerConnection.ISettings | undefined;
  private _changeSets: IChangeSet[] = [];
  private _loaded = false;
  private _sandbox: ISandboxState | null = null;
  private _changed = new Signal<this, readonly IChangeSet[]>(this);
}

/** What identifies a change set's content (its reading floor and expiry tick on their own). */
function keyOf(changeSet: IChangeSet): string {
  return `${changeSet.kernel_id} ${changeSet.fingerprint}`;
}

export namespace ChangeSetsModel {
  export interface IOptions {
    /** Defaults to the page's settings (base URL, token). */
    serverSettings?: ServerConnection.ISettings;
  }
}
