// A main-area tab with one request's preview at full size, opened from its sidebar row.

import { Widget } from '@lumino/widgets';

import { el } from './dom';
import { PreviewBody } from './previewView';
import { IPendingRequest } from './tokens';

/** The DOM event an approval card sends to open its preview here (docs/protocol.md 4.1). */
export const OPEN_PREVIEW_EVENT = 'jupyter-approvals:open-preview';

/** What a card's event carries, as the request the tab shows (text fields as text). */
export function previewOfCard(shown: Record<string, unknown>): IPendingRequest {
  const text = (name: string): string =>
    typeof shown[name] === 'string' ? String(shown[name]) : '';
  const structured = shown.structured;
  return {
    kernel_id: '',
    id: text('request_id'),
    action: text('action'),
    summary: text('summary'),
    preview: text('preview'),
    preview_omitted: typeof shown.preview_omitted === 'number' ? shown.preview_omitted : 0,
    structured:
      structured && typeof structured === 'object'
        ? (structured as IPendingRequest['structured'])
        : null,
    fingerprint: text('fingerprint'),
    function: text('function'),
    status: 'pending',
    created_at: '',
    expires_at: ''
  };
}

/** A main-area tab with one request's preview at full size. */
export class PreviewPanel extends Widget {
  constructor(item: IPendingRequest) {
    super();
    this.id = `jpa-preview-${item.id}`;
    this.addClass('jpa-PreviewPanel');
    this.node.dataset.testid = 'jpa-preview-panel';
    this.title.label = `Preview: ${item.action}`;
    this.title.caption = item.summary;
    this.title.closable = true;
    const body = new PreviewBody(item);
    this.node.append(
      el('h2', 'jpa-PreviewPanel-action', { text: item.action }),
      el('p', 'jpa-PreviewPanel-summary', { text: item.summary }),
      el('p', 'jpa-PreviewPanel-meta', {
        text: `fingerprint ${item.fingerprint} · request ${item.id} · decide in the sidebar or the card`
      }),
      body.toggle,
      body.node
    );
  }
}
