// The list of pending requests, keyed by `kernel_id/id`. A poll that changed nothing touches
// no DOM; a change adds, removes or updates only the rows concerned. One timer counts down
// every row while the list is visible. When agents asked, rows are grouped by who asked, and
// each agent's group has a Pause button; paused agents are listed above with Resume.

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { IItemHandlers, PendingItem } from './pendingItem';
import { IAgent, IApprovalsModel, IPendingChange, IPendingRequest } from './tokens';

/** The group of a request: the agent that asked, or '' for the person's own calls. */
function requester(item: IPendingRequest | undefined): string {
  return item?.agent ?? '';
}

export class PendingView extends Widget {
  constructor(
    private readonly _model: IApprovalsModel,
    private readonly _handlers: IItemHandlers
  ) {
    super();
    this.addClass('jpa-Sidebar-pending');
    this.node.dataset.testid = 'jpa-sidebar-pending';
    this._empty.className = 'jpa-Sidebar-empty';
    this._empty.dataset.testid = 'jpa-sidebar-empty';
    this._empty.textContent = 'No request is waiting for a decision.';
    this._list.className = 'jpa-Sidebar-list';
    this._list.dataset.testid = 'jpa-sidebar-list';
    this._paused.className = 'jpa-Sidebar-pausedAgents';
    this._paused.dataset.testid = 'jpa-sidebar-paused-agents';
    this.node.append(this._paused, this._empty, this._list);
    _model.changed.connect(this._onChanged, this);
    _model.verdictChanged.connect(this._onVerdict, this);
    _model.agentsChanged.connect(this._onAgents, this);
    this._onAgents(_model, _model.agents);
    this._onChanged(_model, { added: _model.keys, removed: [], updated: [], reordered: false });
  }

  dispose(): void {
    window.clearInterval(this._ticker);
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._startTicker();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.isVisible) {
      this._startTicker();
    }
  }

  protected onBeforeHide(msg: Message): void {
    super.onBeforeHide(msg);
    this._stopTicker();
  }

  protected onBeforeDetach(msg: Message): void {
    this._stopTicker();
    super.onBeforeDetach(msg);
  }

  private _onChanged(model: IApprovalsModel, change: IPendingChange): void {
    for (const key of change.removed) {
      const gone = this._rows.get(key);
      gone?.dispose();
      gone?.node.remove();
      this._rows.delete(key);
    }
    const now = model.now();
    for (const key of change.added) {
      const item = model.get(key);
      if (item && !this._rows.has(key)) {
        const row = new PendingItem(item, this._handlers);
        row.setVerdict(model.verdict(key));
        row.tick(now);
        this._rows.set(key, row);
      }
    }
    for (const key of change.updated) {
      const item = model.get(key);
      const row = this._rows.get(key);
      if (item && row) {
        row.update(item);
        row.tick(now);
      }
    }
    if (change.added.length || change.removed.length || change.reordered) {
      this._placeRows(model.keys);
    }
    this._empty.hidden = this._rows.size > 0;
  }

  /** Group headers (one per requester) only when some agent asked: otherwise a plain list. */
  private _groups(keys: readonly string[]): Map<string, string[]> {
    const groups = new Map<string, string[]>([['', []]]);
    for (const key of keys) {
      if (!this._rows.has(key)) {
        continue;
      }
      const group = requester(this._model.get(key));
      groups.set(group, [...(groups.get(group) ?? []), key]);
    }
    return groups;
  }

  /** Ask before pausing: a pause rejects every request of the agent at once. */
  private async _confirmPause(agent: string, button: HTMLButtonElement): Promise<void> {
    const pending = this._headers.get(agent)?.dataset.count ?? '';
    const answer = await showDialog({
      title: `Pause agent ${agent}?`,
      body:
        `Its ${pending ? `${pending} ` : ''}pending requests are rejected now, its connections ` +
        'are closed and its token is refused until you resume it.',
      buttons: [
        Dialog.cancelButton(),
        Dialog.warnButton({ label: 'Pause agent', ariaLabel: `Pause agent ${agent}` })
      ]
    });
    if (!answer.button.accept) {
      return;
    }
    button.disabled = true;
    try {
      await this._model.setPaused(agent, true);
    } finally {
      button.disabled = false;
    }
  }

  private _header(group: string, count: number): HTMLLIElement {
    let header = this._headers.get(group);
    if (!header) {
      header = document.createElement('li');
      header.className = 'jpa-Sidebar-group';
      header.dataset.testid = 'jpa-sidebar-group';
      header.dataset.agent = group;
      const title = document.createElement('span');
      title.className = 'jpa-Sidebar-groupTitle';
      header.append(title);
      if (group) {
        const pause = document.createElement('button');
        pause.className = 'jpa-Sidebar-pause';
        pause.dataset.testid = 'jpa-sidebar-pause';
        pause.textContent = 'Pause agent';
        pause.title = `Reject every request of agent ${group} and refuse it until resumed`;
        pause.addEventListener('click', () => void this._confirmPause(group, pause));
        header.append(pause);
      }
      this._headers.set(group, header);
    }
    const title = header.firstElementChild as HTMLElement;
    header.dataset.count = String(count);
    const text = group ? `Requested by agent ${group} (${count})` : `Requested by you (${count})`;
    if (title.textContent !== text) {
      title.textContent = text;
    }
    return header;
  }

  private _onAgents(model: IApprovalsModel, agents: readonly IAgent[]): void {
    this._paused.replaceChildren();
    for (const agent of agents.filter(a => a.paused)) {
      const row = document.createElement('div');
      row.className = 'jpa-Sidebar-pausedAgent';
      row.dataset.agent = agent.name;
      const resume = document.createElement('button');
      resume.className = 'jpa-Sidebar-resume';
      resume.dataset.testid = 'jpa-sidebar-resume';
      resume.textContent = 'Resume';
      resume.addEventListener('click', () => {
        resume.disabled = true;
        void model.setPaused(agent.name, false);
      });
      row.append(`agent ${agent.name} is paused `, resume);
      this._paused.append(row);
    }
    this._paused.hidden = this._paused.childElementCount === 0;
  }

  /**
   * Put the rows in the model's order, moving only the rows out of place. New requests are
   * the newest, so they are normally appended and nothing else moves (a moved row would
   * lose the focus of its reason field).
   */
  private _placeRows(keys: readonly string[]): void {
    const groups = this._groups(keys);
    const grouped = groups.size > 1;
    const nodes: Element[] = [];
    for (const [group, members] of groups) {
      if (grouped && members.length) {
        nodes.push(this._header(group, members.length));
      }
      for (const key of members) {
        nodes.push(this._rows.get(key)!.node);
      }
    }
    for (const [group, header] of this._headers) {
      if (!grouped || !groups.get(group)?.length) {
        header.remove();
        this._headers.delete(group);
      }
    }
    let cursor = this._list.firstElementChild;
    for (const node of nodes) {
      if (node === cursor) {
        cursor = cursor.nextElementSibling;
      } else {
        this._list.insertBefore(node, cursor);
      }
    }
  }

  private _onVerdict(model: IApprovalsModel, key: string): void {
    this._rows.get(key)?.setVerdict(model.verdict(key));
  }

  private _startTicker(): void {
    this._tick();
    if (!this._ticker) {
      this._ticker = window.setInterval(() => this._tick(), 1000);
    }
  }

  private _stopTicker(): void {
    window.clearInterval(this._ticker);
    this._ticker = 0;
  }

  private _tick(): void {
    const now = this._model.now();
    this._rows.forEach(row => row.tick(now));
  }

  private _rows = new Map<string, PendingItem>();
  private _headers = new Map<string, HTMLLIElement>();
  private _paused = document.createElement('div');
  private _list = document.createElement('ul');
  private _empty = document.createElement('div');
  private _ticker = 0;
}
