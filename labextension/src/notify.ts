// A JupyterLab notification when a new request arrives while the sidebar is closed. One at a
// time: a newer one replaces it; opening the sidebar or an empty list dismisses it. The toast
// hides after a while (it must not sit on the notebook for the request's ten minutes); the
// notification stays in the notification center, and the tab badge keeps counting.

import { Notification } from '@jupyterlab/apputils';
import { IDisposable } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';

import { IApprovalsModel, IPendingChange } from './tokens';

/** How long the toast shows. */
const TOAST_MS = 15_000;

export class NewRequestNotifier implements IDisposable {
  constructor(
    private readonly _model: IApprovalsModel,
    private readonly _panel: Widget,
    private readonly _reveal: () => void
  ) {
    _model.changed.connect(this._onChanged, this);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Call when the sidebar is shown: the person is looking at it. */
  dismiss(): void {
    if (this._id) {
      Notification.dismiss(this._id);
      this._id = '';
    }
  }

  dispose(): void {
    this._disposed = true;
    this.dismiss();
    this._model.changed.disconnect(this._onChanged, this);
  }

  private _onChanged(model: IApprovalsModel, change: IPendingChange): void {
    if (!model.keys.length) {
      this.dismiss();
      return;
    }
    if (!change.added.length || this._panel.isVisible) {
      return;
    }
    const first = model.get(change.added[0]);
    const total = model.keys.length;
    const message =
      change.added.length === 1 && first
        ? `Approval requested: ${first.action}: ${first.summary}`
        : `${change.added.length} new approval requests (${total} pending)`;
    this.dismiss();
    this._id = Notification.warning(message, {
      autoClose: TOAST_MS,
      actions: [
        {
          label: 'Review',
          caption: 'Open the approvals sidebar',
          displayType: 'accent',
          callback: () => this._reveal()
        }
      ]
    });
  }

  private _id = '';
  private _disposed = false;
}
