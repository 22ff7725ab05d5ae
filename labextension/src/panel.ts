// The sidebar: a shield tab with the pending count, two tabs (Pending, History), and a banner
// for what keeps it from working (server extension missing, server errors, silent kernels).

import { ServerConnection } from '@jupyterlab/services';
import { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { Panel, Widget } from '@lumino/widgets';

import { ChangeSetsModel } from './changesModel';
import { ChangesView } from './changesView';
import { el } from './dom';
import { HistoryView } from './historyView';
import { BadgedIcon } from './icon';
import { IItemHandlers, verdictWords } from './pendingItem';
import { PendingView } from './pendingView';
import { INSTALL_COMMANDS } from './request';
import { IApprovalsModel, IConnection } from './tokens';

export const PANEL_ID = 'jupyter-approvals-sidebar';

type Tab = 'pending' | 'history';

export class ApprovalsPanel extends Panel {
  constructor(options: ApprovalsPanel.IOptions) {
    super();
    this._model = options.model;
    this.id = PANEL_ID;
    this.addClass('jpa-Sidebar');
    this.node.dataset.testid = 'jpa-sidebar';
    this.title.icon = this._badge;
    // Static: Notebook 7 names its "Left Sidebar" menu entry after the caption once.
    this.title.caption = 'Approval Requests';

    this._pending = new PendingView(this._model, options.handlers);
    this._changes = options.changeSets ? new ChangesView(options.changeSets) : null;
    this._history = new HistoryView({
      serverSettings: options.serverSettings,
      paths: options.journalPaths
    });
    this.addWidget(this._buildHeader());
    this.addWidget(this._banner);
    this.addWidget(this._lastDecision);
    if (this._changes) {
      this.addWidget(this._changes);
    }
    this.addWidget(this._pending);
    this.addWidget(this._history);
    this._banner.addClass('jpa-Sidebar-banner');
    this._history.hide();

    this._model.changed.connect(this._syncCount, this);
    this._model.connectionChanged.connect(this._syncConnection, this);
    this._model.lastDecisionChanged.connect(this._syncLastDecision, this);
    this._lastDecision.addClass('jpa-Sidebar-last');
    this._lastDecision.node.dataset.testid = 'jpa-sidebar-last-decision';
    this._lastDecision.hide();
    this._syncCount();
    this._syncConnection();
  }

  /** Emitted when the sidebar becomes visible (a person opened it). */
  get shown(): ISignal<this, void> {
    return this._shown;
  }

  get currentTab(): Tab {
    return this._tab;
  }

  set currentTab(tab: Tab) {
    this._tab = tab;
    for (const [name, button] of Object.entries(this._tabs)) {
      button.setAttribute('aria-selected', String(name === tab));
      button.classList.toggle('jpa-mod-current', name === tab);
    }
    this._pending.setHidden(tab !== 'pending');
    this._changes?.setHidden(tab !== 'pending');
    this._history.setHidden(tab !== 'history');
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._shown.emit();
  }

  private _buildHeader(): Widget {
    const header = new Widget();
    header.addClass('jpa-Sidebar-header');
    const tabs = document.createElement('div');
    tabs.className = 'jpa-Sidebar-tabs';
    tabs.setAttribute('role', 'tablist');
    for (const [name, button] of Object.entries(this._tabs) as [Tab, HTMLButtonElement][]) {
      button.className = 'jpa-Sidebar-tab';
      button.setAttribute('role', 'tab');
      button.dataset.testid = `jpa-sidebar-${name}-tab`;
      button.addEventListener('click', () => (this.currentTab = name));
      tabs.appendChild(button);
    }
    this._tabs.history.textContent = 'History';
    header.node.appendChild(tabs);
    this.currentTab = 'pending';
    return header;
  }

  private _syncCount(): void {
    const count = this._model.keys.length;
    this._badge.count = count;
    this.node.dataset.pendingCount = String(count);
    this._tabs.pending.textContent = count ? `Pending (${count})` : 'Pending';
  }

  private _syncConnection(): void {
    const connection = this._model.connection;
    this.node.dataset.connection = connection.state;
    this._badge.problem = connection.state === 'missing';
    this._syncCount();
    const banner = this._banner.node;
    banner.replaceChildren();
    if (connection.state === 'missing') {
      banner.appendChild(renderMissing(connection));
    } else if (connection.state === 'error') {
      banner.appendChild(
        el('p', 'jpa-Sidebar-error', { text: connection.message, testid: 'jpa-sidebar-error' })
      );
    } else if (connection.state === 'connecting') {
      banner.appendChild(
        el('p', 'jpa-Sidebar-note', { text: 'Asking the server for pending requests…' })
      );
    }
    const notes: string[] = [];
    const silent = connection.unansweredKernels.length;
    if (silent) {
      notes.push(
        `${silent} kernel${silent === 1 ? '' : 's'} not heard from yet (running a cell?): ` +
          'their requests are listed once they are idle.'
      );
    }
    for (const { kernel_id, error, elsewhere } of connection.journalErrors) {
      notes.push(
        elsewhere
          ? `Kernel ${kernel_id.slice(0, 8)} records its decisions in ${elsewhere}, which ` +
              'the History tab does not read (its state directory was changed in the ' +
              'kernel).'
          : `The journal of kernel ${kernel_id.slice(0, 8)} cannot be written: ${error}`
      );
    }
    if (notes.length) {
      const box = document.createElement('div');
      box.className = 'jpa-Sidebar-notes';
      box.dataset.testid = 'jpa-sidebar-notes';
      box.append(...notes.map(note => el('p', 'jpa-Sidebar-note', { text: note })));
      banner.appendChild(box);
    }
    this._banner.setHidden(!banner.firstChild);
  }

  private _syncLastDecision(): void {
    const last = this._model.lastDecision;
    const node = this._lastDecision.node;
    node.replaceChildren();
    this._lastDecision.setHidden(last === null);
    if (last === null) {
      return;
    }
    const { verdict } = last;
    node.dataset.verdict = verdict.state;
    node.dataset.decision = 'decision' in verdict ? verdict.decision : '';
    // The verdict first: a long path after it may wrap, never hide it.
    const outcome =
      verdict.state === 'ok'
        ? verdictWords(verdict.decision)
        : verdict.state === 'error'
          ? `Not decided (${verdict.code})`
          : 'Sending…';
    const where = last.elsewhere ? ` ${last.elsewhere}` : '';
    const text = el('p', 'jpa-Sidebar-note');
    text.append(
      el('span', 'jpa-Sidebar-last-verdict', { text: `${outcome}${where}` }),
      ` · ${last.action}: ${last.summary}`,
      verdict.state === 'error' ? ` · ${verdict.message}` : ''
    );
    const close = document.createElement('button');
    close.className = 'jpa-Sidebar-last-close';
    close.textContent = '×';
    close.title = 'Dismiss';
    close.setAttribute('aria-label', 'Dismiss the last decision note');
    close.addEventListener('click', () => this._model.clearLastDecision());
    node.append(text, close);
  }

  private _model: IApprovalsModel;
  private _lastDecision = new Widget();
  private _changes: ChangesView | null;
  private _badge = new BadgedIcon();
  private _banner = new Widget();
  private _pending: PendingView;
  private _history: HistoryView;
  private _tab: Tab = 'pending';
  private _tabs: Record<Tab, HTMLButtonElement> = {
    pending: document.createElement('button'),
    history: document.createElement('button')
  };
  private _shown = new Signal<this, void>(this);
}

export namespace ApprovalsPanel {
  export interface IOptions {
    model: IApprovalsModel;
    handlers: IItemHandlers;
    serverSettings?: ServerConnection.ISettings;
    /** Notebooks whose project journals the history tab offers, the preferred first. */
    journalPaths?: () => string[];
    /** The sandboxed kernels' change sets, shown above the pending list. */
    changeSets?: ChangeSetsModel;
  }
}

/** What to do when the server extension does not answer: the commands, ready to copy. */
function renderMissing(connection: IConnection): HTMLElement {
  const box = document.createElement('div');
  box.className = 'jpa-Sidebar-missing';
  box.dataset.testid = 'jpa-sidebar-extension-missing';
  const title = document.createElement('h3');
  title.textContent = 'The jupyter-approvals server extension is not running';
  const commands = document.createElement('div');
  commands.className = 'jpa-Sidebar-commands';
  for (const command of INSTALL_COMMANDS) {
    // One line per command, wrapped only between words (never inside a package name).
    const line = document.createElement('div');
    command.split(' ').forEach((word, index) => {
      const span = document.createElement('span');
      span.textContent = word;
      line.append(...(index ? [' ', span] : [span]));
    });
    commands.appendChild(line);
  }
  box.append(
    title,
    el('p', '', {
      text:
        'The sidebar lists and decides requests through it. Install and enable it ' +
        'in the environment that runs Jupyter:'
    }),
    commands,
    el('p', '', { text: 'then restart Jupyter and reload this page.' }),
    el('p', 'jpa-Sidebar-detail', { text: `(${connection.detail ?? connection.message})` })
  );
  return box;
}
