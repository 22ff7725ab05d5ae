// The card under an agent's cell whose code the server holds (docs/protocol.md 7.3). The
// server answers the held execute_request with a display_data naming the request; the output
// only points at it. What the card shows and decides is the request as the server lists it now
// (the sidebar's own row, with its Approve and Reject), so an output forged by cell code or an
// agent can show nothing of its own: at most it points at a request that really waits. One
// live card per request: a retry's cell, showing the same request again, points to it.

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { OutcomeLookup, outcomeLine } from './cardOutput';
import { el } from './dom';
import { IItemHandlers, PendingItem } from './pendingItem';
import { IApprovalsModel, IPendingRequest, isRequestId, itemKey } from './tokens';

/** The MIME type of the server's answer to held agent code. */
export const HELD_MIME = 'application/vnd.jupyter-approvals.held+json';

/** What the server's answer names: the held request and its fingerprint. */
export interface IHeldNotice {
  request_id: string;
  fingerprint: string;
}

/** The notice in an output's data, or null when it is not one this card can read. */
export function readHeld(data: unknown): IHeldNotice | null {
  if (!data || typeof data !== 'object') {
    return null;
  }
  const { request_id, fingerprint } = data as Record<string, unknown>;
  if (!isRequestId(request_id)) {
    return null;
  }
  if (typeof fingerprint !== 'string' || !fingerprint.startsWith('sha256:')) {
    return null;
  }
  return { request_id, fingerprint };
}

/** The request the server lists under that id and fingerprint, held by the server. */
function listedHeld(model: IApprovalsModel, notice: IHeldNotice): IPendingRequest | undefined {
  for (const key of model.keys) {
    const item = model.get(key);
    if (
      item &&
      item.id === notice.request_id &&
      item.fingerprint === notice.fingerprint &&
      item.held_at === 'server'
    ) {
      return item;
    }
  }
  return undefined;
}

/** How long a card waits for the sidebar's listing to name its request (ms). */
export const LISTING_GRACE_MS = 3000;

/** Which card of a request has its buttons: the first one rendered that is still attached. */
const liveCards = new Map<string, HeldCard>();

export class HeldCard extends Widget implements IRenderMime.IRenderer {
  constructor(
    private readonly _model: IApprovalsModel,
    private readonly _handlers: IItemHandlers,
    private readonly _lookup: OutcomeLookup
  ) {
    super();
    this.addClass('jpa-HeldCard');
    this.node.dataset.testid = 'jpa-held-card';
    _model.changed.connect(this._render, this);
    _model.verdictChanged.connect(this._onVerdict, this);
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._notice = readHeld(model.data[HELD_MIME]);
    this._renderedAt = Date.now();
    // A request newer than the sidebar's last poll is listed within a poll or two.
    window.setTimeout(() => this._render(), LISTING_GRACE_MS);
    this._render();
    return Promise.resolve();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._release();
    window.clearInterval(this._ticker);
    this._row?.dispose();
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._ticker = window.setInterval(() => this._row?.tick(this._model.now()), 1000);
    this._render();
  }

  protected onBeforeDetach(msg: Message): void {
    window.clearInterval(this._ticker);
    this._release();
    super.onBeforeDetach(msg);
  }

  /** Give up the buttons (another card of the request may take them). */
  private _release(): void {
    const id = this._notice?.request_id;
    if (id && liveCards.get(id) === this) {
      liveCards.delete(id);
      for (const other of Array.from(document.querySelectorAll('.jpa-HeldCard'))) {
        other.dispatchEvent(new CustomEvent('jpa-held-released', { detail: id }));
      }
    }
  }

  private _onVerdict(_: IApprovalsModel, key: string): void {
    const item = this._row?.item;
    if (item && itemKey(item) === key) {
      this._row?.setVerdict(this._model.verdict(key));
    }
  }

  private _render(): void {
    const notice = this._notice;
    if (!notice) {
      this._show(
        el('div', 'jpa-HeldCard-state', {
          text: 'jupyter-approvals: this held-code notice cannot be read.'
        })
      );
      return;
    }
    const item = listedHeld(this._model, notice);
    const id = notice.request_id;
    if (item && this.isAttached) {
      const owner = liveCards.get(id);
      if (!owner || owner === this || !owner.isAttached) {
        liveCards.set(id, this);
        if (!this._row || this._row.item.id !== item.id) {
          this._row?.dispose();
          this._row = new PendingItem(item, this._handlers);
          this._row.node.dataset.testid = 'jpa-held-card-row';
          this._show(this._header(), this._row.node);
        } else {
          this._row.update(item);
        }
        this._row.setVerdict(this._model.verdict(itemKey(item)));
        this._row.tick(this._model.now());
        return;
      }
      if (!this._waiting) {
        this._waiting = true;
        this.node.addEventListener('jpa-held-released', () => this._render());
      }
      this._showPointer(id);
      return;
    }
    if (item) {
      return; // not attached yet: rendered once it is
    }
    this._showEnded(id);
  }

  private _header(): HTMLElement {
    return el('div', 'jpa-HeldCard-header', {
      text: 'The server holds this agent code until a person decides: nothing ran.',
      testid: 'jpa-held-card-header'
    });
  }

  private _showPointer(id: string): void {
    if (this.node.dataset.shows === 'pointer') {
      return;
    }
    this._row?.dispose();
    this._row = null;
    this._show(
      el('div', 'jpa-HeldCard-state', {
        text: `The same held code as an earlier cell (request ${id}): decide it there or in the Approvals sidebar.`,
        testid: 'jpa-held-card-state'
      })
    );
    this.node.dataset.shows = 'pointer';
  }

  private _showEnded(id: string): void {
    if (Date.now() - this._renderedAt < LISTING_GRACE_MS) {
      this._show(
        el('div', 'jpa-HeldCard-state', {
          text: `Held agent code (request ${id}): asking the server for it…`,
          testid: 'jpa-held-card-state'
        })
      );
      return;
    }
    if (this.node.dataset.shows === 'ended') {
      return;
    }
    this._release();
    this._row?.dispose();
    this._row = null;
    const state = el('div', 'jpa-HeldCard-state', {
      text: `Held agent code (request ${id}): nothing of it waits for a decision now.`,
      testid: 'jpa-held-card-state'
    });
    this._show(state, outcomeLine(this._lookup, id));
    this.node.dataset.shows = 'ended';
  }

  private _show(...nodes: HTMLElement[]): void {
    delete this.node.dataset.shows;
    this.node.replaceChildren(...nodes);
  }

  private _notice: IHeldNotice | null = null;
  private _row: PendingItem | null = null;
  private _ticker = 0;
  private _waiting = false;
  private _renderedAt = 0;
}

/** The factory of a notebook's held-code cards: safe, the card writes text only. */
export function heldCardFactory(
  model: IApprovalsModel,
  handlers: IItemHandlers,
  lookup: OutcomeLookup
): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [HELD_MIME],
    defaultRank: 10,
    createRenderer: () => new HeldCard(model, handlers, lookup)
  };
}
