// A request's preview, as the sidebar and the preview tab (previewPanel.ts) show it. The
// structured form is drawn by the renderer the approval card uses too
// (jupyter_approvals/views/preview.js), so a person reads the same thing in both places; the
// text form is one click away.

import { IStructuredPreview, renderStructured } from '../../jupyter_approvals/views/preview.js';
import { el } from './dom';
import { IPendingRequest } from './tokens';

export type { IStructuredPreview };

/** The preview of `item`: its structured form when it has one, else its text. */
export class PreviewBody {
  readonly node = el('div', 'jpa-Sidebar-previewBody', { testid: 'jpa-preview-body' });

  constructor(item: IPendingRequest) {
    this._text.textContent = item.preview || '(no preview)';
    const doc = item.structured;
    let drawn: HTMLElement | null = null;
    try {
      // Drawn once: a request's preview never changes, so a poll redraws nothing.
      drawn = doc ? renderStructured(doc) : null;
    } catch (error) {
      // Not of the documented shape (the server checks it; a card's event is not checked):
      // the text form shows instead.
      console.warn('jupyter-approvals: a structured preview that cannot be shown', error);
    }
    if (drawn) {
      this._structured = drawn;
      this.node.append(this._structured, this._text);
    } else {
      this.node.append(this._text);
    }
    this.toggle.hidden = !this.hasStructured;
    this.toggle.addEventListener('click', () => this.showText(!this._asText));
    this.showText(false);
  }

  /** True when there is a structured form to switch from. */
  get hasStructured(): boolean {
    return this._structured !== null;
  }

  /** Show the text form (or, with false, the structured form when there is one). */
  showText(text: boolean): void {
    const structured = this._structured !== null && !text;
    this._text.hidden = structured;
    if (this._structured) {
      this._structured.hidden = !structured;
    }
    this._asText = text;
    this.toggle.textContent = text ? 'show structured' : 'show as text';
  }

  /** The button that switches between the two forms; hidden without a structured one. */
  readonly toggle = el('button', 'jpa-Sidebar-link', {
    text: 'show as text',
    testid: 'jpa-sidebar-as-text'
  });

  private _asText = false;

  private _text = el('pre', 'jpa-Sidebar-previewText', { testid: 'jpa-preview-text' });
  private _structured: HTMLElement | null = null;
}
