// A row of the sidebar while its kernel runs a cell: the server's copy keeps it listed, and it
// can be decided only once the kernel can take the decision (docs/protocol.md 6.1).

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { PendingItem, READING_FLOOR_MS, timeLeft } from '../src/pendingItem';
import { IPendingRequest } from '../src/tokens';

function request(extra: Partial<IPendingRequest> = {}): IPendingRequest {
  return {
    kernel_id: 'k1',
    id: '0123456789abcdef',
    action: 'table.write',
    summary: 'Write sales.csv',
    preview: 'region,units',
    preview_omitted: 0,
    fingerprint: 'sha256:' + 'a'.repeat(64),
    function: '__main__.save',
    status: 'pending',
    created_at: '2026-12-01T10:00:00.000Z',
    expires_at: '2026-12-01T10:10:00.000Z',
    ...extra
  };
}

function row(item: PendingItem, testid: string): HTMLElement {
  const node = item.node.querySelector(`[data-testid="${testid}"]`);
  if (!(node instanceof HTMLElement)) {
    throw new Error(`no ${testid}`);
  }
  return node;
}

const handlers = { decide: () => undefined, open: () => undefined };

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

/** Let the reading floor of every row made so far pass. */
function afterTheFloor(): void {
  vi.advanceTimersByTime(READING_FLOOR_MS + 50);
}

describe('PendingItem of a new request', () => {
  it('keeps its buttons off for the reading floor, with a countdown', () => {
    // Given a row just shown
    const item = new PendingItem(request(), handlers);
    const approve = row(item, 'jpa-sidebar-approve') as HTMLButtonElement;

    // Then it cannot be answered yet, and says how long to read
    expect(approve.disabled).toBe(true);
    expect(row(item, 'jpa-sidebar-floor').textContent).toBe('read first: 1 s');

    // When the floor has passed, Then the buttons work and the countdown is gone
    afterTheFloor();
    expect(approve.disabled).toBe(false);
    expect(row(item, 'jpa-sidebar-floor').textContent).toBe('');
  });
});

describe('PendingItem of a busy kernel', () => {
  it('says why it cannot be decided now and keeps its buttons off', () => {
    // Given a row whose kernel runs a cell that awaits no decision
    const item = new PendingItem(request({ kernel_busy: true, decide_now: false }), handlers);

    // Then the note is shown and Approve and Reject are disabled
    expect(row(item, 'jpa-sidebar-busy').hidden).toBe(false);
    expect((row(item, 'jpa-sidebar-approve') as HTMLButtonElement).disabled).toBe(true);
    expect((row(item, 'jpa-sidebar-reject') as HTMLButtonElement).disabled).toBe(true);
  });

  it('keeps the reason being typed when the kernel becomes idle', () => {
    // Given a busy row with a reason typed into it
    const item = new PendingItem(request({ kernel_busy: true, decide_now: false }), handlers);
    const reason = row(item, 'jpa-sidebar-reason') as HTMLInputElement;
    reason.value = 'checked the totals';

    // When the next poll says the kernel is idle
    afterTheFloor();
    item.update(request({ kernel_busy: false, decide_now: true }));

    // Then the note goes, the buttons work, and the reason is still there
    expect(row(item, 'jpa-sidebar-busy').hidden).toBe(true);
    expect((row(item, 'jpa-sidebar-approve') as HTMLButtonElement).disabled).toBe(false);
    expect(reason.value).toBe('checked the totals');
  });

  it('can be decided while a cell of the busy kernel awaits the decision', () => {
    // Given a row whose kernel is busy with a cell awaiting wait()
    const item = new PendingItem(request({ kernel_busy: true, decide_now: true }), handlers);
    afterTheFloor();

    // Then nothing stops the person
    expect(row(item, 'jpa-sidebar-busy').hidden).toBe(true);
    expect((row(item, 'jpa-sidebar-approve') as HTMLButtonElement).disabled).toBe(false);
  });
});

describe('timeLeft', () => {
  it('says what it counts: the time left to answer', () => {
    // Given a request that expires 9 min 5 s from now, then one that has expired
    const now = Date.parse('2026-12-01T10:00:55.000Z');
    // Then the clock reads as the time to answer, and says when it is over
    expect(timeLeft('2026-12-01T10:10:00.000Z', now)).toBe('answer within 9:05');
    expect(timeLeft('2026-12-01T10:00:00.000Z', now)).toBe('expired');
  });
});

describe('PendingItem of a kernel with a stricter reading floor', () => {
  it('waits as long as the kernel does before its buttons work', () => {
    // Given a row whose kernel counts answers sooner than 3 s as too fast
    const item = new PendingItem(request({ min_answer_ms: 3000 }), handlers);
    const approve = row(item, 'jpa-sidebar-approve') as HTMLButtonElement;

    // When the default one second has passed, Then it still waits, counting down
    afterTheFloor();
    item.tick(Date.now());
    expect(approve.disabled).toBe(true);
    expect(row(item, 'jpa-sidebar-floor').textContent).toBe('read first: 2 s');

    // When the kernel's floor has passed too, Then the buttons work
    vi.advanceTimersByTime(2000);
    item.tick(Date.now());
    expect(approve.disabled).toBe(false);
  });
});
