// The card under a cell that changed files in its sandboxed kernel (src/changesCard.ts): it
// shows the server's change set for the kernel the notice names, never the notice's own list.

import { describe, expect, it, vi } from 'vitest';

// jsdom has no DragEvent, which @lumino/dragdrop (below @lumino/widgets) names at import.
vi.hoisted(() => {
  const scope = globalThis as unknown as { DragEvent?: unknown };
  scope.DragEvent ??= class DragEvent extends Event {};
});

import { CHANGES_MIME, ChangesCard, noticeLine, readNotice } from '../src/changesCard';
import { ChangeSetsModel } from '../src/changesModel';
import { IChangeSet } from '../src/tokens';

const KERNEL = '4d5709cc-15dd-43cb-8a30-468dfd4167bf';

function listed(paths: string[]): IChangeSet {
  const state = { size: 3, sha256: 'a'.repeat(64), mode: '0644' };
  return {
    kernel_id: KERNEL,
    fingerprint: 'sha256:' + 'b'.repeat(64),
    counts: { created: paths.length },
    changes: paths.map(path => ({ path, kind: 'created', before: null, after: state, detail: '' })),
    decide_after_s: 0,
    expires_in_s: 599
  };
}

/** A model that answered with `sets` (or has not answered yet, with `undefined`). */
function modelWith(sets: IChangeSet[] | undefined): ChangeSetsModel {
  const model = new ChangeSetsModel();
  if (sets) {
    (model as unknown as { onTick: (s: unknown) => void }).onTick({
      phase: 'resolved',
      payload: { change_sets: sets }
    });
  }
  return model;
}

async function card(model: ChangeSetsModel, notice: unknown): Promise<ChangesCard> {
  const rendered = new ChangesCard(model);
  await rendered.renderModel({ data: { [CHANGES_MIME]: notice } } as never);
  return rendered;
}

function texts(node: HTMLElement, testid: string): string[] {
  return Array.from(node.querySelectorAll(`[data-testid="${testid}"]`)).map(
    found => found.textContent ?? ''
  );
}

describe('readNotice', () => {
  it('reads the server notice and refuses anything else', () => {
    expect(readNotice({ kernel_id: KERNEL, paths: ['a.csv'], count: 1 })).toEqual({
      kernel_id: KERNEL,
      paths: ['a.csv'],
      count: 1
    });
    expect(readNotice({ kernel_id: KERNEL, paths: [1], count: 1 })).toBeNull();
    expect(readNotice('a.csv')).toBeNull();
    expect(noticeLine({ kernel_id: KERNEL, paths: [], count: 1200 })).toBe(
      'Sandboxed: this cell changed 1,200 files in its sandbox, not in the project.'
    );
  });
});

describe('ChangesCard', () => {
  it("shows the server's change set of the kernel, marking this cell's files", async () => {
    // Given the server lists two created files, and the notice names one of them
    const model = modelWith([listed(['clean.csv', 'report.md'])]);
    // When the card renders the notice
    const shown = await card(model, { kernel_id: KERNEL, paths: ['report.md'], count: 1 });
    // Then it lists the server's files, with this cell's marked, and can decide them
    expect(texts(shown.node, 'jpa-changes-card-header')).toEqual([
      'Sandboxed: this cell changed 1 file in its sandbox, not in the project.'
    ]);
    const rows = Array.from(shown.node.querySelectorAll('[data-testid="jpa-changes-file"]'));
    expect(rows.map(row => row.classList.contains('jpa-mod-thisCell'))).toEqual([false, true]);
    expect(shown.node.querySelector('[data-testid="jpa-changes-apply"]')).not.toBeNull();
  });

  it("never shows a notice's own paths as waiting: a forged notice decides nothing", async () => {
    // Given the server lists no change set for the kernel a notice names
    const model = modelWith([]);
    // When a notice (forged by cell code, say) names files
    const shown = await card(model, { kernel_id: KERNEL, paths: ['passwords.txt'], count: 1 });
    // Then the card says nothing waits, and offers no decision
    expect(texts(shown.node, 'jpa-changes-card-state')[0]).toMatch(
      /^Nothing of it waits for a decision now/
    );
    expect(shown.node.querySelector('[data-testid="jpa-changes-apply"]')).toBeNull();
  });

  it('follows the server: a change set listed later appears in the card', async () => {
    // Given a card rendered before the server answered
    const model = modelWith(undefined);
    const shown = await card(model, { kernel_id: KERNEL, paths: ['a.txt'], count: 1 });
    expect(texts(shown.node, 'jpa-changes-card-state')).toEqual([
      'Asking the server for its change set…'
    ]);
    // When the server lists the kernel's change set
    (model as unknown as { onTick: (s: unknown) => void }).onTick({
      phase: 'resolved',
      payload: { change_sets: [listed(['a.txt'])] }
    });
    // Then the card shows it
    expect(texts(shown.node, 'jpa-changes-file').length).toBe(1);
  });
});
