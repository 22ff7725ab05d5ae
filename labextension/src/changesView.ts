// The sandboxed kernels' change sets in the Pending tab: per kernel, what its code would
// change in the project (counts first, then each file), its fingerprint, and Apply all /
// Discard all, enabled once the server's reading floor has passed. Everything shown is what
// the server computed from the kernel's overlay (docs/protocol.md 6.5).

import { Widget } from '@lumino/widgets';

import { ChangeSetsModel } from './changesModel';
import { el } from './dom';
import { PreviewBody } from './previewView';
import { foldTall } from '../../jupyter_approvals/views/preview.js';
import { IChangeSet, IFileChange, IPendingRequest } from './tokens';

/** How tall a change set's list of files is shown before the rest waits behind a button (a
 * file's change, opened inside the list, shows the whole list). */
const FILES_FOLD_PX = 240;

/** What each kind of change will do, in the present tense (nothing happened yet). */
const VERBS: Record<IFileChange['kind'], string> = {
  created: 'create',
  modified: 'modify',
  deleted: 'delete',
  renamed: 'rename',
  unsupported: 'not applied'
};
const KIND_ORDER: IFileChange['kind'][] = [
  'created',
  'modified',
  'deleted',
  'renamed',
  'unsupported'
];
// Control, zero-width and bidirectional-override characters: a file name could hide its
// real extension or forge a line with them.
// eslint-disable-next-line no-control-regex
const HIDING = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/** `text` with every character that could hide or forge what is shown written as U+XXXX. */
export function visibleName(text: string): string {
  return text.replace(
    HIDING,
    char => `⟦U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟧`
  );
}

/** The counts of a change set as one line, e.g. "3 files: 1 to create, 2 to modify". */
export function countsLine(changeSet: IChangeSet): string {
  const total = changeSet.changes.length + (changeSet.changes_left_out ?? 0);
  const parts = KIND_ORDER.filter(kind => changeSet.counts[kind]).map(kind => {
    const count = (changeSet.counts[kind] ?? 0).toLocaleString();
    return kind === 'unsupported' ? `${count} not applied` : `${count} to ${VERBS[kind]}`;
  });
  return `${total.toLocaleString()} ${total === 1 ? 'file' : 'files'}: ${parts.join(', ')}`;
}

/** Whose change set it is: a sandboxed kernel's, or the files an agent saved (`agent-<name>`). */
export function changeSetTitle(changeSet: IChangeSet): string {
  const id = changeSet.kernel_id;
  return id.startsWith('agent-')
    ? `Files saved by agent ${visibleName(id.slice('agent-'.length))}`
    : `Changes from sandboxed kernel ${id.slice(0, 8)}`;
}

function sizeOf(change: IFileChange): string {
  const before = change.before?.size;
  const after = change.after?.size;
  if (change.kind === 'modified' && before !== undefined && after !== undefined) {
    return `${before.toLocaleString()} → ${after.toLocaleString()} bytes`;
  }
  const size = after ?? before;
  return size === undefined ? '' : `${size.toLocaleString()} bytes`;
}

/**
 * One change set as the server listed it: its counts, each file (with its diff on "show"),
 * its fingerprint, and Apply all / Discard all, enabled once the reading floor has passed.
 * Used by the sidebar and by the card under a cell.
 */
export class ChangeSetSection {
  constructor(options: ChangeSetSection.IOptions) {
    this._model = options.model;
    this.node = this._render(options);
  }

  /** The section's element. */
  readonly node: HTMLElement;

  /** Stop the section's timers (it is no longer shown). */
  dispose(): void {
    this._timers.forEach(timer => window.clearTimeout(timer));
    this._timers = [];
  }

  private _render(options: ChangeSetSection.IOptions): HTMLElement {
    const { changeSet, title, highlighted } = options;
    const section = el('section', 'jpa-Changes-set', { testid: 'jpa-changes-set' });
    section.dataset.kernelId = changeSet.kernel_id;
    section.append(
      el('div', 'jpa-Changes-title', {
        text: title ?? changeSetTitle(changeSet)
      }),
      el('div', 'jpa-Changes-counts', {
        text: countsLine(changeSet),
        testid: 'jpa-changes-counts'
      })
    );
    const list = el('ul', 'jpa-Changes-files');
    for (const change of changeSet.changes) {
      list.append(...this._fileItem(changeSet, change, highlighted));
    }
    section.append(list, foldTall(list, FILES_FOLD_PX));
    const leftOut = changeSet.changes_left_out ?? 0;
    if (leftOut > 0) {
      section.append(this._moreButton(changeSet, list, changeSet.changes.length, leftOut));
    }
    section.append(
      el('div', 'jpa-Changes-fingerprint', {
        text: changeSet.fingerprint,
        testid: 'jpa-changes-fingerprint'
      })
    );
    const apply = el('button', 'jp-Button jp-mod-accept jpa-Changes-apply', {
      text: 'Apply all',
      testid: 'jpa-changes-apply'
    });
    const discard = el('button', 'jp-Button jp-mod-reject jpa-Changes-discard', {
      text: 'Discard all',
      testid: 'jpa-changes-discard'
    });
    const result = el('div', 'jpa-Changes-result', { testid: 'jpa-changes-result' });
    const buttons = [apply, discard];
    // The server refuses a decision sooner than its floor: the buttons wait for it too.
    for (const button of buttons) {
      button.disabled = changeSet.decide_after_s > 0;
    }
    if (changeSet.decide_after_s > 0) {
      this._timers.push(
        window.setTimeout(
          () => buttons.forEach(button => (button.disabled = false)),
          changeSet.decide_after_s * 1000
        )
      );
    }
    const decide = (decision: 'apply' | 'discard'): void => {
      buttons.forEach(button => (button.disabled = true));
      result.textContent = decision === 'apply' ? 'Applying…' : 'Discarding…';
      this._model
        .decide(changeSet, decision)
        .then(reply => {
          const refused = Object.entries(reply.refused);
          const verb = decision === 'apply' ? 'applied' : 'discarded';
          const text =
            `${reply.done.length} ${verb}` +
            (refused.length
              ? `; refused: ${refused.map(([path, code]) => `${visibleName(path)} (${code})`).join(', ')}`
              : '');
          result.textContent = text;
          options.decided?.(`Sandboxed kernel ${changeSet.kernel_id.slice(0, 8)}: ${text}`);
        })
        .catch((error: Error) => {
          result.textContent = error.message;
          buttons.forEach(button => (button.disabled = false));
        });
    };
    apply.addEventListener('click', () => decide('apply'));
    discard.addEventListener('click', () => decide('discard'));
    const actions = el('div', 'jpa-Changes-actions');
    actions.append(apply, discard);
    section.append(actions, result);
    return section;
  }

  /** One file's row, and the box its diff opens in. */
  private _fileItem(
    changeSet: IChangeSet,
    change: IFileChange,
    highlighted?: ReadonlySet<string>
  ): HTMLElement[] {
    const item = el('li', `jpa-Changes-file jpa-mod-${change.kind}`, {
      testid: 'jpa-changes-file'
    });
    if (highlighted?.has(change.path) || highlighted?.has(change.detail)) {
      item.classList.add('jpa-mod-thisCell');
      item.title = 'Changed by this cell';
    }
    const name =
      change.kind === 'renamed'
        ? `${visibleName(change.detail)} → ${visibleName(change.path)}`
        : visibleName(change.path);
    const show = el('button', 'jpa-Sidebar-link jpa-Changes-show', {
      text: 'show',
      testid: 'jpa-changes-show'
    });
    const preview = el('div', 'jpa-Changes-preview', { testid: 'jpa-changes-preview' });
    preview.hidden = true;
    show.addEventListener('click', () => this._togglePreview(changeSet, change, show, preview));
    item.append(
      el('span', 'jpa-Changes-kind', { text: VERBS[change.kind] }),
      el('span', 'jpa-Changes-path', { text: name }),
      el('span', 'jpa-Changes-size', {
        text: change.kind === 'unsupported' ? visibleName(change.detail) : sizeOf(change)
      }),
      show
    );
    return [item, preview];
  }

  /** "and N more files": a button that lists the next page of them from the server. */
  private _moreButton(
    changeSet: IChangeSet,
    list: HTMLElement,
    offset: number,
    leftOut: number
  ): HTMLElement {
    const more = el('button', 'jpa-Sidebar-link jpa-Changes-leftOut', {
      text: `and ${leftOut.toLocaleString()} more ${leftOut === 1 ? 'file' : 'files'}, in the counts above: list them`,
      testid: 'jpa-changes-left-out'
    });
    more.addEventListener('click', () => {
      more.disabled = true;
      more.textContent = 'Listing…';
      this._model
        .page(changeSet, offset)
        .then(page => {
          for (const change of page.changes) {
            list.append(...this._fileItem(changeSet, change));
          }
          const next = offset + page.changes.length;
          more.replaceWith(
            page.changes_left_out > 0
              ? this._moreButton(changeSet, list, next, page.changes_left_out)
              : el('span', 'jpa-Changes-leftOut')
          );
        })
        .catch((error: Error) => {
          more.disabled = false;
          more.textContent = error.message;
        });
    });
    return more;
  }

  /** Show (fetched once) or hide one file's change, as the server shows it from its bytes. */
  private _togglePreview(
    changeSet: IChangeSet,
    change: IFileChange,
    button: HTMLButtonElement,
    box: HTMLElement
  ): void {
    if (!box.hidden) {
      box.hidden = true;
      button.textContent = 'show';
      return;
    }
    box.hidden = false;
    // A file's change opens inside the list: a folded list shows all of itself first.
    const fold = box.parentElement?.nextElementSibling;
    if (
      fold instanceof HTMLButtonElement &&
      fold.matches('.jpa-sp-more') &&
      !fold.hidden &&
      fold.getAttribute('aria-expanded') === 'false'
    ) {
      fold.click();
    }
    button.textContent = 'hide';
    if (box.childElementCount) {
      return;
    }
    box.textContent = 'Loading…';
    this._model
      .preview(changeSet, change.path)
      .then(shown => {
        const body = new PreviewBody({
          preview: shown.preview,
          structured: shown.structured
        } as IPendingRequest);
        box.replaceChildren(body.node, body.toggle);
      })
      .catch((error: Error) => {
        box.textContent = error.message;
      });
  }

  private _model: ChangeSetsModel;
  private _timers: number[] = [];
}

export namespace ChangeSetSection {
  export interface IOptions {
    model: ChangeSetsModel;
    changeSet: IChangeSet;
    /** The section's title (default: the kernel's short id). */
    title?: string;
    /** Paths to mark as changed by the cell the section is shown under. */
    highlighted?: ReadonlySet<string>;
    /** Told what a decision did, in one line. */
    decided?: (text: string) => void;
  }
}

/** The Pending tab's change sets: one section per sandboxed kernel with changes. */
export class ChangesView extends Widget {
  constructor(model: ChangeSetsModel) {
    super();
    this._model = model;
    this.addClass('jpa-Changes');
    this.node.dataset.testid = 'jpa-changes';
    model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    this._clearSections();
    super.dispose();
  }

  private _render(): void {
    this._clearSections();
    const sets = this._model.changeSets;
    const sandbox = this._model.sandbox;
    this._held.textContent =
      sandbox && sandbox.effective_policy !== sandbox.policy
        ? `Agents' code is held per cell here: sandboxed kernels cannot run` +
          (sandbox.unavailable ? ` (${sandbox.unavailable})` : '') +
          '. `jupyter approvals doctor` says what to change.'
        : '';
    this._sections = sets.map(
      changeSet =>
        new ChangeSetSection({
          model: this._model,
          changeSet,
          decided: text => this._tell(text)
        })
    );
    this.node.replaceChildren(
      this._held,
      this._note,
      ...this._sections.map(section => section.node)
    );
    this.node.classList.toggle(
      'jpa-mod-empty',
      sets.length === 0 && !this._note.textContent && !this._held.textContent
    );
  }

  /** Keep what the last decision did in view: its change set leaves the list at once. */
  private _tell(text: string): void {
    this._note.textContent = text;
    this.node.classList.remove('jpa-mod-empty');
  }

  private _clearSections(): void {
    this._sections.forEach(section => section.dispose());
    this._sections = [];
  }

  private _model: ChangeSetsModel;
  private _sections: ChangeSetSection[] = [];
  private _note = el('div', 'jpa-Changes-note', { testid: 'jpa-changes-note' });
  private _held = el('div', 'jpa-Changes-held', { testid: 'jpa-changes-held' });
}
