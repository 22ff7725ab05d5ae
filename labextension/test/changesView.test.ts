// The change sets in the sidebar (src/changesView.ts): what a person reads before applying a
// sandboxed kernel's changes, and when the buttons let them decide.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// jsdom has no DragEvent, which @lumino/dragdrop (below @lumino/widgets) names at import.
vi.hoisted(() => {
  const scope = globalThis as unknown as { DragEvent?: unknown };
  scope.DragEvent ??= class DragEvent extends Event {};
});

import { ChangeSetsModel } from '../src/changesModel';
import { ChangesView, changeSetTitle, countsLine, visibleName } from '../src/changesView';
import { IChangeSet } from '../src/tokens';

function changeSet(overrides: Partial<IChangeSet> = {}): IChangeSet {
  const state = (size: number) => ({ size, sha256: 'a'.repeat(64), mode: '0644' });
  return {
    kernel_id: '4d5709cc-15dd-43cb-8a30-468dfd4167bf',
    fingerprint: 'sha256:' + 'b'.repeat(64),
    counts: { created: 1, modified: 1, unsupported: 1 },
    changes: [
      { path: 'out/report.md', kind: 'created', before: null, after: state(9), detail: '' },
      { path: 'sales.csv', kind: 'modified', before: state(14), after: state(1400), detail: '' },
      {
        path: 'key',
        kind: 'unsupported',
        before: null,
        after: null,
        detail: "symbolic link to '/root/.ssh/id_rsa'"
      }
    ],
    decide_after_s: 1,
    expires_in_s: 599,
    ...overrides
  };
}

/** A model holding `sets` as if the server had listed them, with `decide` recorded. */
function modelWith(sets: IChangeSet[]): ChangeSetsModel {
  const model = new ChangeSetsModel();
  (model as unknown as { onTick: (s: unknown) => void }).onTick({
    phase: 'resolved',
    payload: { change_sets: sets }
  });
  return model;
}

describe('visibleName', () => {
  it('writes characters that could hide or forge a name as code points', () => {
    // Given names with a newline, an escape sequence and a right-to-left override
    // Then each such character is shown as U+XXXX and the rest is kept
    expect(visibleName('a\nb.csv')).toBe('a⟦U+000A⟧b.csv');
    expect(visibleName('c\u001b[31md.csv')).toBe('c⟦U+001B⟧[31md.csv');
    expect(visibleName('e\u202egnp.exe')).toBe('e⟦U+202E⟧gnp.exe');
    expect(visibleName('plain/path é.csv')).toBe('plain/path é.csv');
  });
});

describe('changeSetTitle', () => {
  it("names a kernel's change set by its kernel, an agent's saves by the agent", () => {
    expect(changeSetTitle(changeSet())).toBe('Changes from sandboxed kernel 4d5709cc');
    expect(changeSetTitle(changeSet({ kernel_id: 'agent-bot' }))).toBe('Files saved by agent bot');
  });
});

describe('countsLine', () => {
  it('counts first, in the present tense, nothing in the past', () => {
    expect(countsLine(changeSet())).toBe('3 files: 1 to create, 1 to modify, 1 not applied');
  });
});

describe('countsLine with files left out of the list', () => {
  it('counts every file of the set, listed or not', () => {
    const set = changeSet({ counts: { created: 1002 }, changes_left_out: 1000 });
    expect(countsLine({ ...set, changes: set.changes.slice(0, 2) })).toBe(
      '1,002 files: 1,002 to create'
    );
  });
});

describe('ChangesView', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('lists each file with what will happen, its size and the fingerprint', () => {
    // Given a listed change set
    const view = new ChangesView(modelWith([changeSet()]));
    // Then every file is a row, and the fingerprint is shown whole
    const rows = [...view.node.querySelectorAll('[data-testid="jpa-changes-file"]')].map(
      row => row.textContent
    );
    expect(rows).toEqual([
      'createout/report.md9 bytesshow',
      'modifysales.csv14 → 1,400 bytesshow',
      "not appliedkeysymbolic link to '/root/.ssh/id_rsa'show"
    ]);
    expect(view.node.querySelector('[data-testid="jpa-changes-fingerprint"]')?.textContent).toBe(
      'sha256:' + 'b'.repeat(64)
    );
  });

  it('enables Apply and Discard only once the reading floor has passed', () => {
    // Given a change set whose floor has one second left
    const view = new ChangesView(modelWith([changeSet({ decide_after_s: 1 })]));
    const apply = view.node.querySelector<HTMLButtonElement>('[data-testid="jpa-changes-apply"]')!;
    const discard = view.node.querySelector<HTMLButtonElement>(
      '[data-testid="jpa-changes-discard"]'
    )!;
    // Then both wait, and are enabled after that second
    expect([apply.disabled, discard.disabled]).toEqual([true, true]);
    vi.advanceTimersByTime(999);
    expect(apply.disabled).toBe(true);
    vi.advanceTimersByTime(2);
    expect([apply.disabled, discard.disabled]).toEqual([false, false]);
  });

  it('applies the set it shows, by its fingerprint, and says what was refused', async () => {
    // Given a change set past its floor, and a server that refuses one file
    const model = modelWith([changeSet({ decide_after_s: 0 })]);
    const decide = vi.spyOn(model, 'decide').mockResolvedValue({
      ok: false,
      kernel_id: changeSet().kernel_id,
      decision: 'apply',
      done: ['out/report.md'],
      refused: { 'sales.csv': 'APPROVAL_FINGERPRINT_MISMATCH' }
    });
    const view = new ChangesView(model);
    // When the person clicks Apply all
    view.node.querySelector<HTMLButtonElement>('[data-testid="jpa-changes-apply"]')!.click();
    await vi.waitFor(() => expect(decide).toHaveBeenCalled());
    // Then the model decides that very change set, and the result names the refusal
    expect(decide.mock.calls[0][0].fingerprint).toBe('sha256:' + 'b'.repeat(64));
    expect(decide.mock.calls[0][1]).toBe('apply');
    await vi.waitFor(() =>
      expect(view.node.querySelector('[data-testid="jpa-changes-result"]')?.textContent).toBe(
        '1 applied; refused: sales.csv (APPROVAL_FINGERPRINT_MISMATCH)'
      )
    );
  });

  it("shows a file's change from the server when asked, once", async () => {
    // Given a listed change set and a server that previews a file
    const model = modelWith([changeSet()]);
    const preview = vi.spyOn(model, 'preview').mockResolvedValue({
      path: 'sales.csv',
      kind: 'modified',
      summary: 'Replace sales.csv',
      preview: '-1,10\n+1,12',
      structured: null
    });
    const view = new ChangesView(model);
    const show = view.node.querySelectorAll<HTMLButtonElement>(
      '[data-testid="jpa-changes-show"]'
    )[1];
    // When the person clicks "show" on the modified file, hides it and shows it again
    show.click();
    const box = view.node.querySelectorAll<HTMLElement>('[data-testid="jpa-changes-preview"]')[1];
    await vi.waitFor(() => expect(box.textContent).toContain('+1,12'));
    show.click();
    expect(box.hidden).toBe(true);
    show.click();
    // Then the preview of that file was asked for once, and is shown again
    expect(preview).toHaveBeenCalledTimes(1);
    expect(preview.mock.calls[0][1]).toBe('sales.csv');
    expect(box.hidden).toBe(false);
  });

  it('folds a tall list of files without a scroll bar, and opening a change shows it all', () => {
    // Given a list of files taller than its place (jsdom lays nothing out: its height is set)
    const tall = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'scrollHeight');
    Object.defineProperty(HTMLElement.prototype, 'scrollHeight', {
      configurable: true,
      get(this: HTMLElement) {
        return this.classList.contains('jpa-Changes-files') ? 900 : 0;
      }
    });
    try {
      const model = modelWith([changeSet()]);
      vi.spyOn(model, 'preview').mockReturnValue(new Promise(() => undefined));
      const view = new ChangesView(model);
      const list = view.node.querySelector<HTMLElement>('.jpa-Changes-files')!;
      const fold = list.nextElementSibling as HTMLButtonElement;
      // Then it is cut at 240 pixels, nothing scrolls, and a button shows the rest
      expect(list.style.maxHeight).toBe('240px');
      expect(list.style.overflow).toBe('hidden');
      expect(fold.hidden).toBe(false);
      expect(fold.getAttribute('aria-expanded')).toBe('false');
      // When the person shows one file's change
      view.node.querySelector<HTMLButtonElement>('[data-testid="jpa-changes-show"]')!.click();
      // Then the whole list shows, the change inside it
      expect(list.style.maxHeight).toBe('none');
      expect(fold.getAttribute('aria-expanded')).toBe('true');
    } finally {
      if (tall) Object.defineProperty(HTMLElement.prototype, 'scrollHeight', tall);
    }
  });

  it('is hidden while there is nothing to decide', () => {
    const view = new ChangesView(modelWith([]));
    expect(view.node.classList.contains('jpa-mod-empty')).toBe(true);
  });
});

describe('ChangesView where the sandbox cannot run', () => {
  it("says agents' code is held per cell, and why", () => {
    // Given a server whose sandbox policy works as ask here
    const model = new ChangeSetsModel();
    (model as unknown as { onTick: (s: unknown) => void }).onTick({
      phase: 'resolved',
      payload: {
        change_sets: [],
        sandbox: {
          policy: 'sandbox',
          effective_policy: 'ask',
          unavailable: "the 'python3-sandboxed' kernelspec is not installed"
        }
      }
    });
    // When the Pending tab shows the change sets
    const view = new ChangesView(model);
    // Then it says so, with the reason, and is not hidden
    const held = view.node.querySelector('[data-testid="jpa-changes-held"]');
    expect(held?.textContent).toBe(
      "Agents' code is held per cell here: sandboxed kernels cannot run (the " +
        "'python3-sandboxed' kernelspec is not installed). `jupyter approvals doctor` says what " +
        'to change.'
    );
    expect(view.node.classList.contains('jpa-mod-empty')).toBe(false);
  });
});

describe('ChangesView with more files than a listing holds', () => {
  it('lists the next files from the server when asked', async () => {
    // Given a listing of 2 files of a set of 3
    const set = changeSet({ changes_left_out: 1, counts: { created: 3 } });
    set.changes = set.changes.slice(0, 2);
    const model = modelWith([set]);
    const asked: number[] = [];
    model.page = async (_changeSet, offset) => {
      asked.push(offset);
      return {
        kernel_id: set.kernel_id,
        fingerprint: set.fingerprint,
        offset,
        changes: [{ path: 'third.txt', kind: 'created', before: null, after: null, detail: '' }],
        changes_left_out: 0
      };
    };
    const view = new ChangesView(model);
    const more = view.node.querySelector<HTMLButtonElement>('[data-testid="jpa-changes-left-out"]');
    expect(more?.textContent).toBe('and 1 more file, in the counts above: list them');
    // When the person asks for them
    more?.click();
    await Promise.resolve();
    await Promise.resolve();
    // Then the server is asked from the third file on, and the file is listed
    expect(asked).toEqual([2]);
    const files = Array.from(view.node.querySelectorAll('[data-testid="jpa-changes-file"]'));
    expect(files.map(file => file.querySelector('.jpa-Changes-path')?.textContent)).toEqual([
      'out/report.md',
      'sales.csv',
      'third.txt'
    ]);
    expect(view.node.querySelector('[data-testid="jpa-changes-left-out"]')).toBeNull();
  });
});
