// One pending request in the sidebar. Its DOM is built once; `update` changes only the text
// that changed, so a poll never resets the reason being typed or the focus.

import { el, setBreakableText } from './dom';
import { PreviewBody } from './previewView';
import { foldTall } from '../../jupyter_approvals/views/preview.js';
import { Decision, IPendingRequest, Verdict } from './tokens';

/** What a row asks of its list. */
export interface IItemHandlers {
  decide(item: IPendingRequest, decision: Decision, reason: string): void;
  open(item: IPendingRequest): void;
  /** Show the request's preview full size in a main-area tab. */
  openPreview?(item: IPendingRequest): void;
}

/** How long a new row's buttons wait at least, so that a person reads before answering; a
 * kernel's stricter `min_answer_seconds` (its listing's `min_answer_ms`) makes them wait
 * longer. The kernel refuses sooner answers on every path anyway. */
export const READING_FLOOR_MS = 1000;

/** How tall a row's preview is shown before the rest waits behind a button: with the row's
 * header and buttons, a row fits the sidebar of a window 900 pixels high. */
export const PREVIEW_FOLD_PX = 360;

function setText(node: HTMLElement, text: string): void {
  if (node.textContent !== text) {
    node.textContent = text;
  }
}

/** The short fingerprint: the first 12 hex digits after `sha256:`. */
export function shortFingerprint(fingerprint: string): string {
  return fingerprint.startsWith('sha256:') ? fingerprint.slice(7, 19) : fingerprint;
}

/** A decision that went through, in words: "Approved", "Rejected", "Approved and executed". */
export function verdictWords(decision: string, status?: string | null): string {
  const made = decision === 'approve' ? 'Approved' : 'Rejected';
  if (!status || status === 'approved' || status === 'rejected') {
    return made;
  }
  return `${made} (${status.replace(/_/g, ' ')})`;
}

/** `answer within m:ss` (the time left until `expiresAt`), or `expired`. */
export function timeLeft(expiresAt: string, now: number): string {
  const ms = Date.parse(expiresAt) - now;
  if (Number.isNaN(ms)) {
    return '';
  }
  if (ms <= 0) {
    return 'expired';
  }
  const s = Math.floor(ms / 1000);
  return `answer within ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** A notebook path the document manager can open: relative to the server root. */
export function isOpenable(path: string | null | undefined): path is string {
  return !!path && !path.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(path);
}

export class PendingItem {
  readonly node = el('li', 'jpa-Sidebar-item', { testid: 'jpa-sidebar-item' });

  constructor(
    item: IPendingRequest,
    private readonly _handlers: IItemHandlers
  ) {
    this._item = item;
    // Focusable, so the keyboard commands (keyboard.ts) can act on the row that has the focus.
    this.node.tabIndex = 0;
    this.node.dataset.requestId = item.id;
    this.node.dataset.kernelId = item.kernel_id ?? '';

    const header = el('div', 'jpa-Sidebar-itemHeader');
    header.append(this._action, this._clock);
    this._fingerprint.tabIndex = 0;
    this._fingerprint.setAttribute('role', 'button');
    this._fingerprint.title = 'Fingerprint of the call: click to show it in full';
    this._fingerprint.addEventListener('click', () => this._toggleFingerprint());
    this._fingerprint.addEventListener('keydown', event => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        this._toggleFingerprint();
      }
    });
    const fingerprintRow = el('div', 'jpa-Sidebar-meta');
    fingerprintRow.append('fingerprint ', this._fingerprint);
    const functionRow = this._functionRow;
    functionRow.append('runs ', this._function);

    this._path.type = 'button';
    this._path.addEventListener('click', () => {
      if (isOpenable(this._item.notebook_path)) {
        this._handlers.open(this._item);
      }
    });
    // The omitted count sits in the summary: visible even while the preview is collapsed.
    // Every preview starts expanded, as in the card; its headline counts come first.
    const previewTitle = el('summary', 'jpa-Sidebar-previewTitle');
    previewTitle.append('Preview', this._omitted);
    const body = new PreviewBody(item);
    const tools = el('div', 'jpa-Sidebar-previewTools');
    const full = el('button', 'jpa-Sidebar-link', {
      text: 'open full size',
      testid: 'jpa-sidebar-open-preview'
    });
    full.title = 'Open this preview in a tab of the main area';
    full.hidden = !this._handlers.openPreview;
    full.addEventListener('click', () => this._handlers.openPreview?.(this._item));
    tools.append(body.toggle, full);
    this._preview.append(previewTitle, tools, body.node, foldTall(body.node, PREVIEW_FOLD_PX));
    this._preview.open = true;

    this._reason.type = 'text';
    this._reason.placeholder = 'Reason (optional)';
    this._reason.setAttribute('aria-label', 'Reason');
    this._approve.textContent = 'Approve';
    this._reject.textContent = 'Reject';
    this._approve.addEventListener('click', () => this._decide('approve'));
    this._reject.addEventListener('click', () => this._decide('reject'));
    const buttons = el('div', 'jpa-Sidebar-buttons');
    buttons.append(this._approve, this._reject, this._floor);
    // As long as the kernel's own floor (a stricter setting waits longer), never less.
    const floor = Math.max(READING_FLOOR_MS, item.min_answer_ms ?? 0);
    this._readableAt = Date.now() + floor;
    this._opens = window.setTimeout(() => this._syncButtons(), floor + 20);
    const actions = el('div', 'jpa-Sidebar-actions');
    actions.append(this._reason, buttons);

    this.node.append(
      header,
      this._summary,
      this._origin,
      fingerprintRow,
      functionRow,
      this._preview,
      this._busy,
      actions,
      this._verdict
    );
    this.update(item);
  }

  get item(): IPendingRequest {
    return this._item;
  }

  /** Show `item` (the same request, as polled again); only changed text is touched. */
  update(item: IPendingRequest): void {
    this._item = item;
    setText(this._action, item.action);
    setBreakableText(this._summary, item.summary);
    this._renderOrigin();
    this._renderFingerprint();
    setText(this._function, item.function);
    // Held agent code runs no protected function: the preview is the code itself.
    this._functionRow.hidden = !item.function;
    this.node.dataset.heldAt = item.held_at ?? 'kernel';
    const omitted = item.preview_omitted;
    setText(this._omitted, omitted > 0 ? ` (${omitted} more characters left out)` : '');
    this._omitted.hidden = !(omitted > 0);
    // A busy kernel's row stays (and the reason being typed with it); it is decided once the
    // kernel can take the decision.
    this._busy.hidden = item.decide_now !== false;
    this._syncButtons();
  }

  /** Stop the row's timers (it left the list). */
  dispose(): void {
    window.clearTimeout(this._opens);
  }

  /** Count down to the request's expiry. */
  tick(now: number): void {
    if (now < this._readableAt + 1000) {
      this._syncButtons(); // the reading floor's countdown, while it runs
    }
    const left = timeLeft(this._item.expires_at, now);
    setText(this._clock, left);
    const ms = Date.parse(this._item.expires_at) - now;
    this._clock.classList.toggle('jpa-mod-urgent', ms < 60_000);
    const expired = left === 'expired';
    if (expired !== this._expired) {
      this._expired = expired;
      this.node.classList.toggle('jpa-mod-expired', expired);
    }
  }

  setVerdict(verdict: Verdict | undefined): void {
    this._verdictState = verdict;
    const node = this._verdict;
    node.dataset.verdict = verdict?.state ?? '';
    node.dataset.decision = verdict && 'decision' in verdict ? verdict.decision : '';
    if (!verdict) {
      setText(node, '');
    } else if (verdict.state === 'sending') {
      setText(node, verdict.decision === 'approve' ? 'Approving…' : 'Rejecting…');
    } else if (verdict.state === 'ok') {
      setText(node, verdictWords(verdict.decision, verdict.status));
    } else {
      setText(node, `${verdict.code}: ${verdict.message}`);
    }
    this._syncButtons();
  }

  private _decide(decision: Decision): void {
    this._handlers.decide(this._item, decision, this._reason.value);
  }

  private _syncButtons(): void {
    const state = this._verdictState?.state;
    // Disabled while the POST is out, and for good once it was decided. An expired request
    // stays answerable: the server, whose clock counts, says whether it timed out.
    const reading = Math.max(0, this._readableAt - Date.now());
    const disabled =
      state === 'sending' || state === 'ok' || this._item.decide_now === false || reading > 0;
    this._approve.disabled = disabled;
    this._reject.disabled = disabled;
    setText(this._floor, reading > 0 ? `read first: ${Math.ceil(reading / 1000)} s` : '');
  }

  private _toggleFingerprint(): void {
    this._fullFingerprint = !this._fullFingerprint;
    this._renderFingerprint();
  }

  private _renderFingerprint(): void {
    const fingerprint = this._item.fingerprint;
    setText(this._fingerprint, this._fullFingerprint ? fingerprint : shortFingerprint(fingerprint));
    this._fingerprint.dataset.fingerprint = fingerprint;
    this._fingerprint.classList.toggle('jpa-mod-full', this._fullFingerprint);
  }

  private _renderOrigin(): void {
    const { notebook_path: path, cell_id: cellId, username } = this._item;
    // A write the server holds for an agent comes from no notebook: say nothing rather than
    // "unknown notebook".
    const noNotebook = !path && this._item.held_at === 'server';
    this._from.hidden = noNotebook;
    this._path.hidden = noNotebook;
    setBreakableText(this._path, path || 'unknown notebook');
    const openable = isOpenable(path);
    this._path.classList.toggle('jpa-mod-link', openable);
    this._path.disabled = !openable;
    this._path.title = openable
      ? cellId
        ? 'Open the notebook at the requesting cell'
        : 'Open the notebook'
      : path
        ? 'Outside the server root: cannot be opened here'
        : '';
    if (!this._path.parentNode) {
      this._origin.append(this._agent, this._from, this._path, this._cell, this._user);
    }
    const count = this._item.execution_count;
    setText(this._cell, typeof count === 'number' ? ` cell [${count}]` : '');
    const agent = this._item.agent;
    setText(this._agent, agent ? `requested by agent ${agent} ` : '');
    this._agent.hidden = !agent;
    const who = this._item.display_name || username;
    setText(this._user, who ? ` run by ${who} (name not verified)` : '');
    this._user.title = who
      ? 'The name the client that ran the cell sent with it; nothing checks it.'
      : '';
  }

  private _item: IPendingRequest;
  private _fullFingerprint = false;
  private _expired = false;
  private _verdictState: Verdict | undefined;
  private _action = el('span', 'jpa-Sidebar-action', { testid: 'jpa-sidebar-action' });
  private _clock = el('span', 'jpa-Sidebar-clock', { testid: 'jpa-sidebar-time-left' });
  private _summary = el('div', 'jpa-Sidebar-summary', { testid: 'jpa-sidebar-summary' });
  private _origin = el('div', 'jpa-Sidebar-meta jpa-Sidebar-origin');
  private _path = el('button', 'jpa-Sidebar-path', { testid: 'jpa-sidebar-open-cell' });
  private _user = el('span', 'jpa-Sidebar-user');
  private _cell = el('span', 'jpa-Sidebar-cell', { testid: 'jpa-sidebar-cell' });
  private _agent = el('span', 'jpa-Sidebar-agent', { testid: 'jpa-sidebar-agent' });
  private _from = el('span', '', { text: 'from ' });
  private _functionRow = el('div', 'jpa-Sidebar-meta');
  private _fingerprint = el('code', 'jpa-Sidebar-fingerprint', {
    testid: 'jpa-sidebar-fingerprint'
  });
  private _function = el('code', 'jpa-Sidebar-function', { testid: 'jpa-sidebar-function' });
  private _preview = el('details', 'jpa-Sidebar-preview', { testid: 'jpa-sidebar-preview' });
  private _omitted = el('span', 'jpa-Sidebar-omitted', { testid: 'jpa-sidebar-omitted' });
  private _reason = el('input', 'jpa-Sidebar-reason', { testid: 'jpa-sidebar-reason' });
  private _approve = el('button', 'jpa-Sidebar-approve', { testid: 'jpa-sidebar-approve' });
  private _reject = el('button', 'jpa-Sidebar-reject', { testid: 'jpa-sidebar-reject' });
  private _verdict = el('div', 'jpa-Sidebar-verdict', { testid: 'jpa-sidebar-verdict' });
  private _floor = el('span', 'jpa-Sidebar-floor', { testid: 'jpa-sidebar-floor' });
  private _readableAt = 0;
  private _opens = 0;
  private _busy = el('p', 'jpa-Sidebar-note jpa-Sidebar-busy', {
    testid: 'jpa-sidebar-busy',
    text: 'The kernel is running a cell: this can be decided when the cell has ended.'
  });
}
