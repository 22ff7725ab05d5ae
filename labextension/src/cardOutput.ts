// The output of an approval card in a notebook (docs/protocol.md 4.2). The kernel's output
// holds the card's widget view and, beside it, the request the card showed
// (`application/vnd.jupyter-approvals.card+json`). While the kernel holds the card, the widget
// renders as usual. When the widget is gone (the notebook was reopened after its kernel ended
// or restarted, or the kernel released the card), the output shows the request as a dated
// record with how it ended, read from the decision journal, instead of a widget error.
// Display only: the record has no buttons, and nothing in the output's data is trusted to
// say how the request ended.

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel } from '@lumino/widgets';

import { CardOutcome } from './cardOutcomes';
import { el } from './dom';
import { decisionWords, outcomeWords } from './historyRequests';
import { isRequestId } from './tokens';

/** The MIME type of the request beside a card's widget view. */
export const CARD_MIME = 'application/vnd.jupyter-approvals.card+json';
/** The widget view's MIME type (ipywidgets). */
export const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';
/** How long a widget may say "Loading widget..." before the record shows (ms). */
export const LOADING_GRACE_MS = 3000;

/** The request a card showed, as its output records it. */
export interface ICardRecord {
  request_id: string;
  action: string;
  summary: string;
  fingerprint: string;
  asked_at: string;
  agent: string | null;
}

/** The record in an output's data, or null when it is not one this output can read. */
export function readCardRecord(data: unknown): ICardRecord | null {
  if (!data || typeof data !== 'object') {
    return null;
  }
  const record = data as Record<string, unknown>;
  const texts = ['request_id', 'action', 'summary', 'fingerprint', 'asked_at'];
  if (!texts.every(key => typeof record[key] === 'string')) {
    return null;
  }
  if (!isRequestId(record.request_id)) {
    return null;
  }
  return {
    request_id: record.request_id as string,
    action: record.action as string,
    summary: record.summary as string,
    fingerprint: record.fingerprint as string,
    asked_at: record.asked_at as string,
    agent: typeof record.agent === 'string' ? record.agent : null
  };
}

/** A moment as a person reads it, in their time zone. */
function when(iso: string | undefined): string {
  const moment = iso ? new Date(iso) : null;
  return moment && !isNaN(moment.getTime())
    ? moment.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
    : 'at an unknown time';
}

/** How the request ended, in one sentence, from its journal row (or its absence). */
export function outcomeSentence(outcome: CardOutcome): string {
  if (outcome === null) {
    return "How it ended is not in this project's decision journal.";
  }
  if (outcome.outcome === 'pending') {
    return 'Nobody decided before its kernel ended: nothing ran.';
  }
  if (outcome.outcome === 'approved') {
    const who = decisionWords(outcome);
    return `${who ? who[0].toUpperCase() + who.slice(1) : 'Approved'}; no run of it is journaled.`;
  }
  const parts = [outcomeWords(outcome.outcome)];
  const decided = decisionWords(outcome);
  if (decided) {
    parts.push(decided);
  }
  let sentence = `${parts.join(', ')} (${when(outcome.ended)}).`;
  if (outcome.reason) {
    sentence += ` Reason: ${outcome.reason}`;
  }
  return sentence;
}

/** Where the renderer asks how a card's request ended. */
export type OutcomeLookup = (requestId: string) => Promise<CardOutcome>;

/** The line saying how request `id` ended, filled in once the journal answered. */
export function outcomeLine(lookup: OutcomeLookup, id: string): HTMLElement {
  const outcome = el('div', 'jpa-CardRecord-outcome', {
    text: 'How it ended: looking it up in the decision journal…',
    testid: 'jpa-card-record-outcome'
  });
  lookup(id).then(
    found => {
      outcome.textContent = outcomeSentence(found);
      outcome.dataset.outcome = found?.outcome ?? 'unknown';
    },
    error => {
      outcome.textContent = `How it ended could not be read: ${
        error instanceof Error ? error.message : String(error)
      }`;
      outcome.dataset.outcome = 'unknown';
    }
  );
  return outcome;
}

/**
 * The renderer of a card's output: the live widget (made by the notebook's own widget
 * renderer) while it renders, else the request's record.
 */
export class CardOutput extends Panel implements IRenderMime.IRenderer {
  constructor(options: { live: IRenderMime.IRenderer | null; lookup: OutcomeLookup }) {
    super();
    this.addClass('jpa-CardOutput');
    this._live = options.live;
    this._lookup = options.lookup;
    if (this._live) {
      this.addWidget(this._live);
      // The widget renderer replaces its own text ("Loading widget...", "Error displaying
      // widget"), adds the view, or hides itself: changes of its node's children and class,
      // not of the view's inside (a live card's countdown changes that every second).
      this._observer = new MutationObserver(() => this._settle());
      this._observer.observe(this._live.node, {
        childList: true,
        attributes: true,
        attributeFilter: ['class']
      });
    }
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._record = readCardRecord(model.data[CARD_MIME]);
    // An untrusted notebook's widget views are not rendered (they are not safe); its record is.
    if (this._live && model.trusted && model.data[WIDGET_MIME]) {
      this._started = Date.now();
      window.setTimeout(() => this._settle(), LOADING_GRACE_MS);
      await this._live.renderModel(model);
    }
    this._settle();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._observer?.disconnect();
    super.dispose();
  }

  /** Show the live widget when it rendered, else the record (after a grace for loading). */
  private _settle(): void {
    if (this.isDisposed) {
      return;
    }
    const live = this._live;
    const rendered =
      !!live && live.node.childElementCount > 0 && !live.node.classList.contains('lm-mod-hidden');
    const loading =
      !!live &&
      this._started !== null &&
      !rendered &&
      !(live.node.textContent ?? '').startsWith('Error displaying widget') &&
      !live.node.classList.contains('lm-mod-hidden') &&
      Date.now() - this._started < LOADING_GRACE_MS;
    if (rendered || loading) {
      if (live) {
        live.node.style.display = '';
      }
      this._recordNode?.remove();
      this._recordNode = null;
      return;
    }
    if (live) {
      live.node.style.display = 'none';
    }
    if (!this._recordNode) {
      this._recordNode = this._renderRecord();
      this.node.append(this._recordNode);
    }
  }

  private _renderRecord(): HTMLElement {
    const record = this._record;
    const node = el('div', 'jpa-CardRecord', { testid: 'jpa-card-record' });
    if (!record) {
      node.append(
        el('div', 'jpa-CardRecord-title', {
          text: 'An approval card whose record cannot be read.'
        })
      );
      return node;
    }
    node.dataset.requestId = record.request_id;
    const asked = [`Asked ${when(record.asked_at)}`];
    if (record.agent) {
      asked.push(`by agent ${record.agent}`);
    }
    asked.push(`fingerprint ${record.fingerprint.replace(/^sha256:/, '').slice(0, 12)}`);
    asked.push(`request ${record.request_id}`);
    const outcome = outcomeLine(this._lookup, record.request_id);
    node.append(
      el('div', 'jpa-CardRecord-title', {
        text: `Approval request: ${record.action}`,
        testid: 'jpa-card-record-title'
      }),
      el('div', 'jpa-CardRecord-summary', { text: record.summary }),
      outcome,
      el('div', 'jpa-CardRecord-meta', { text: asked.join(' · ') }),
      el('div', 'jpa-CardRecord-meta', {
        text: 'This card is no longer live: its kernel ended or released it. Run the cell again to ask again.'
      })
    );
    return node;
  }

  private _live: IRenderMime.IRenderer | null;
  private _lookup: OutcomeLookup;
  private _record: ICardRecord | null = null;
  private _recordNode: HTMLElement | null = null;
  private _observer: MutationObserver | null = null;
  private _started: number | null = null;
}

/**
 * The factory of a notebook's card outputs: `rendermime` is that notebook's own registry (it
 * holds the notebook's widget renderer), `lookup` asks how a request ended. Ranked before the
 * widget view so the card's output comes here; safe, because an untrusted output renders as
 * its record only.
 */
export function cardOutputFactory(
  rendermime: { createRenderer(mimeType: string): IRenderMime.IRenderer },
  lookup: OutcomeLookup
): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [CARD_MIME],
    createRenderer: () => {
      let live: IRenderMime.IRenderer | null;
      try {
        live = rendermime.createRenderer(WIDGET_MIME);
      } catch {
        live = null; // no widget manager in this frontend: the record is all there is
      }
      return new CardOutput({ live, lookup });
    }
  };
}

/** The rank of the card's factory: before the widget manager's (-10 in a notebook). */
export const CARD_OUTPUT_RANK = -20;
