// The card under a cell whose execution changed files in its sandboxed kernel. The notice
// under the cell is a display_data the server sent (docs/protocol.md 6.6); it only points at
// the kernel. What the card shows and decides is that kernel's change set as the server lists
// it now, so a notice forged by cell code can show nothing of its own: at most it points at a
// kernel's real change set.

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { ChangeSetsModel } from './changesModel';
import { ChangeSetSection, visibleName } from './changesView';
import { el } from './dom';

/** The MIME type of the server's notice. */
export const CHANGES_MIME = 'application/vnd.jupyter-approvals.changes+json';

/** What a notice says: which kernel, and which paths the cell changed (the first 20). */
export interface IChangeNotice {
  kernel_id: string;
  paths: string[];
  count: number;
}

/** The notice in an output's data, or null when it is not one this card can read. */
export function readNotice(data: unknown): IChangeNotice | null {
  if (!data || typeof data !== 'object') {
    return null;
  }
  const { kernel_id, paths, count } = data as Record<string, unknown>;
  if (
    typeof kernel_id !== 'string' ||
    !Array.isArray(paths) ||
    !paths.every(path => typeof path === 'string') ||
    typeof count !== 'number'
  ) {
    return null;
  }
  return { kernel_id, paths: paths as string[], count };
}

/** The one-line header: what the cell did, in the past tense (it happened, in the sandbox). */
export function noticeLine(notice: IChangeNotice): string {
  const files = notice.count === 1 ? '1 file' : `${notice.count.toLocaleString()} files`;
  return `Sandboxed: this cell changed ${files} in its sandbox, not in the project.`;
}

export class ChangesCard extends Widget implements IRenderMime.IRenderer {
  constructor(model: ChangeSetsModel) {
    super();
    this._model = model;
    this.addClass('jpa-ChangesCard');
    this.node.dataset.testid = 'jpa-changes-card';
    model.changed.connect(this._render, this);
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._notice = readNotice(model.data[CHANGES_MIME]);
    this._render();
    return Promise.resolve();
  }

  dispose(): void {
    this._section?.dispose();
    super.dispose();
  }

  private _render(): void {
    this._section?.dispose();
    this._section = null;
    const notice = this._notice;
    if (!notice) {
      this.node.replaceChildren(
        el('div', 'jpa-ChangesCard-header', {
          text: 'jupyter-approvals: this change notice cannot be read.'
        })
      );
      return;
    }
    const header = el('div', 'jpa-ChangesCard-header', {
      text: noticeLine(notice),
      testid: 'jpa-changes-card-header'
    });
    const changeSet = this._model.changeSets.find(set => set.kernel_id === notice.kernel_id);
    if (!changeSet) {
      const named = notice.paths.map(visibleName).join(', ');
      this.node.replaceChildren(
        header,
        el('div', 'jpa-ChangesCard-state', {
          text: this._model.loaded
            ? `Nothing of it waits for a decision now (${named}): it was applied or ` +
              'discarded, or its kernel ended. History has the record.'
            : 'Asking the server for its change set…',
          testid: 'jpa-changes-card-state'
        }),
        this._note
      );
      return;
    }
    this._section = new ChangeSetSection({
      model: this._model,
      changeSet,
      title: 'Waiting for your decision: every change of this kernel (this cell’s marked)',
      highlighted: new Set(notice.paths),
      decided: text => (this._note.textContent = text)
    });
    this.node.replaceChildren(header, this._section.node, this._note);
  }

  private _model: ChangeSetsModel;
  private _notice: IChangeNotice | null = null;
  private _section: ChangeSetSection | null = null;
  private _note = el('div', 'jpa-Changes-note', { testid: 'jpa-changes-card-note' });
}

/** The renderer factory: safe, the card writes text only. */
export function changesCardFactory(model: ChangeSetsModel): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [CHANGES_MIME],
    defaultRank: 10,
    createRenderer: () => new ChangesCard(model)
  };
}
