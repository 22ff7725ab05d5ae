// The quiet line a protected call leaves under its card when it stopped to ask for approval
// (docs/protocol.md 4.2): the output's own text, in the muted style of a note rather than an
// error's red. Agents read the same output's text and its JSON; nothing here decides anything.

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

/** The MIME type of the stopped call's detail (the ApprovalPending error as JSON). */
export const PENDING_MIME = 'application/vnd.jupyter-approvals.pending+json';

/** The line: the output's text/plain, as text. */
export class PendingNote extends Widget implements IRenderMime.IRenderer {
  constructor() {
    super();
    this.addClass('jpa-PendingNote');
    this.node.dataset.testid = 'jpa-pending-note';
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const text = model.data['text/plain'];
    this.node.textContent = typeof text === 'string' ? text : 'Stopped to ask for approval.';
    return Promise.resolve();
  }
}

/** The factory: safe, the line is text only. */
export const pendingNoteFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [PENDING_MIME],
  defaultRank: 10,
  createRenderer: () => new PendingNote()
};
