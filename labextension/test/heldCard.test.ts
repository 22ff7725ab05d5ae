// The card under an agent's held cell (src/heldCard.ts): the server's listed request with the
// sidebar's buttons, one live card per request, and nothing of a forged notice's own.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// jsdom has no DragEvent, which @lumino/dragdrop (below @lumino/widgets) names at import.
vi.hoisted(() => {
  const scope = globalThis as unknown as { DragEvent?: unknown };
  scope.DragEvent ??= class DragEvent extends Event {};
});

import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { HELD_MIME, HeldCard, LISTING_GRACE_MS, readHeld } from '../src/heldCard';
import { READING_FLOOR_MS } from '../src/pendingItem';
import { IApprovalsModel, IPendingRequest, itemKey } from '../src/tokens';

const ID = '0123456789abcdef';
const FINGERPRINT = 'sha256:' + 'a'.repeat(64);

function held(extra: Partial<IPendingRequest> = {}): IPendingRequest {
  return {
    kernel_id: 'k1',
    id: ID,
    action: 'agent.execute',
    summary: 'Run code from agent claude',
    preview: "import shutil; shutil.rmtree('data')",
    preview_omitted: 0,
    fingerprint: FINGERPRINT,
    function: '',
    status: 'pending',
    created_at: '2026-12-01T10:00:00.000Z',
    expires_at: '2026-12-01T10:10:00.000Z',
    held_at: 'server',
    agent: 'claude',
    ...extra
  };
}

/** A sidebar model that lists `items` and records decisions. */
function modelListing(items: IPendingRequest[]) {
  const changed = new Signal<IApprovalsModel, unknown>({} as never);
  const listed = new Map(items.map(item => [itemKey(item), item]));
  const model = {
    get keys() {
      return Array.from(listed.keys());
    },
    get: (key: string) => listed.get(key),
    changed,
    verdictChanged: new Signal({} as never),
    verdict: () => undefined,
    now: () => Date.now(),
    remove(key: string) {
      listed.delete(key);
      changed.emit({ added: [], removed: [key], updated: [], reordered: false });
    }
  };
  return model;
}

const decided: Array<[string, string]> = [];
const made: HeldCard[] = [];
const handlers = {
  decide: (item: IPendingRequest, decision: string) => void decided.push([item.id, decision]),
  open: () => undefined
};

async function card(
  model: ReturnType<typeof modelListing>,
  notice: unknown,
  lookup = vi.fn(async () => null)
): Promise<HeldCard> {
  const rendered = new HeldCard(model as never, handlers, lookup);
  made.push(rendered);
  Widget.attach(rendered, document.body);
  await rendered.renderModel({ data: { [HELD_MIME]: notice } } as never);
  return rendered;
}

function byTestId(node: HTMLElement, testid: string): HTMLElement | null {
  return node.querySelector(`[data-testid="${testid}"]`);
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  vi.useRealTimers();
  made.splice(0).forEach(shown => shown.dispose());
  document.body.replaceChildren();
  decided.length = 0;
});

describe('readHeld', () => {
  it('reads the server notice and refuses anything else', () => {
    expect(readHeld({ request_id: ID, fingerprint: FINGERPRINT })).toEqual({
      request_id: ID,
      fingerprint: FINGERPRINT
    });
    expect(readHeld({ request_id: 'x', fingerprint: FINGERPRINT })).toBeNull();
    expect(readHeld({ request_id: ID, fingerprint: 'md5:1' })).toBeNull();
  });
});

describe('HeldCard', () => {
  it("shows the listed request with the sidebar's buttons and decides it", async () => {
    // Given held agent code the server lists
    const model = modelListing([held()]);
    const shown = await card(model, { request_id: ID, fingerprint: FINGERPRINT });
    // Then the card shows the code and, after the reading floor, Approve decides that request
    expect(byTestId(shown.node, 'jpa-held-card-header')?.textContent).toMatch(/nothing ran/);
    expect(shown.node.textContent).toContain("shutil.rmtree('data')");
    vi.advanceTimersByTime(READING_FLOOR_MS + 50);
    (byTestId(shown.node, 'jpa-sidebar-approve') as HTMLButtonElement).click();
    expect(decided).toEqual([[ID, 'approve']]);
  });

  it('gives one live card per request: a retry points to it, and takes over when it goes', async () => {
    // Given the same held request shown by two cells (the agent retried)
    const model = modelListing([held()]);
    const first = await card(model, { request_id: ID, fingerprint: FINGERPRINT });
    const retry = await card(model, { request_id: ID, fingerprint: FINGERPRINT });
    // Then only the first has buttons; the retry points to it
    expect(byTestId(first.node, 'jpa-sidebar-approve')).not.toBeNull();
    expect(byTestId(retry.node, 'jpa-sidebar-approve')).toBeNull();
    expect(byTestId(retry.node, 'jpa-held-card-state')?.textContent).toMatch(/earlier cell/);
    // When the first cell's output goes, Then the retry's card takes the buttons
    first.dispose();
    expect(byTestId(retry.node, 'jpa-sidebar-approve')).not.toBeNull();
  });

  it('shows nothing of a notice whose request is not listed, and how it ended', async () => {
    // Given a notice naming a fingerprint the server does not list (forged, or ended)
    const model = modelListing([held()]);
    const lookup = vi.fn(async () => null);
    const forged = await card(
      model,
      { request_id: ID, fingerprint: 'sha256:' + 'f'.repeat(64) },
      lookup
    );
    // Then it offers no buttons; after the listing's grace it says nothing waits
    expect(byTestId(forged.node, 'jpa-sidebar-approve')).toBeNull();
    vi.advanceTimersByTime(LISTING_GRACE_MS + 10);
    expect(byTestId(forged.node, 'jpa-held-card-state')?.textContent).toMatch(
      /nothing of it waits for a decision now/
    );
    await vi.waitFor(() =>
      expect(byTestId(forged.node, 'jpa-card-record-outcome')?.textContent).toMatch(
        /not in this project's decision journal/
      )
    );
    expect(lookup).toHaveBeenCalledWith(ID);
  });

  it('turns into its ended state once the server no longer lists the request', async () => {
    const model = modelListing([held()]);
    const shown = await card(model, { request_id: ID, fingerprint: FINGERPRINT });
    vi.advanceTimersByTime(LISTING_GRACE_MS + 10);
    model.remove(itemKey(held()));
    expect(byTestId(shown.node, 'jpa-sidebar-approve')).toBeNull();
    expect(byTestId(shown.node, 'jpa-held-card-state')?.textContent).toMatch(/nothing of it waits/);
  });
});
