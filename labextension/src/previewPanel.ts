// A main-area tab with one request's preview at full size, opened from its sidebar row.

import { Widget } from '@lumino/widgets';

import { el } from './dom';
import { PreviewBody } from './previewView';
import { IPendingRequest } from './tokens';

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
    const toggle = el('button', 'jpa-Sidebar-link', { text: 'show as text' });
    toggle.hidden = !body.hasStructured;
    let asText = false;
    toggle.addEventListener('click', () => {
      asText = !asText;
      body.showText(asText);
      toggle.textContent = asText ? 'show structured' : 'show as text';
    });
    this.node.append(
      el('h2', 'jpa-PreviewPanel-action', { text: item.action }),
      el('p', 'jpa-PreviewPanel-summary', { text: item.summary }),
      el('p', 'jpa-PreviewPanel-meta', {
        text: `fingerprint ${item.fingerprint} · request ${item.id} · decide in the sidebar or the card`
      }),
      toggle,
      body.node
    );
  }
}
