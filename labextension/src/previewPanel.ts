// A main-area tab with one request's preview at full size, opened from its sidebar row.

import { Widget } from '@lumino/widgets';

import { el } from './dom';
import { PreviewBody } from './previewView';
import { previewPanelId } from './openPreview';
import { IPendingRequest } from './tokens';

/** A main-area tab with one request's preview at full size. */
export class PreviewPanel extends Widget {
  constructor(item: IPendingRequest) {
    super();
    this.id = previewPanelId(item);
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
