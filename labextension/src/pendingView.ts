// The list of pending requests, keyed by `kernel_id/id`. A poll that changed nothing touches
// no DOM; a change adds, removes or updates only the rows concerned. One timer counts down
// every row while the list is visible.

import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { IItemHandlers, PendingItem } from './pendingItem';
import { IApprovalsModel, IPendingChange } from './tokens';

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
    this.node.append(this._empty, this._list);
    _model.changed.connect(this._onChanged, this);
    _model.verdictChanged.connect(this._onVerdict, this);
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
      this._rows.get(key)?.node.remove();
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
    if (change.added.length || change.reordered) {
      this._placeRows(model.keys);
    }
    this._empty.hidden = this._rows.size > 0;
  }

  /**
   * Put the rows in the model's order, moving only the rows out of place. New requests are
   * the newest, so they are normally appended and nothing else moves (a moved row would
   * lose the focus of its reason field).
   */
  private _placeRows(keys: readonly string[]): void {
    let cursor = this._list.firstElementChild;
    for (const key of keys) {
      const row = this._rows.get(key);
      if (!row) {
        continue;
      }
      if (row.node === cursor) {
        cursor = cursor.nextElementSibling;
      } else {
        this._list.insertBefore(row.node, cursor);
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
  private _list = document.createElement('ul');
  private _empty = document.createElement('div');
  private _ticker = 0;
}
