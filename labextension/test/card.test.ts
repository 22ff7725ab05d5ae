// The approval card's front end (jupyter_approvals/kernel/card/card.js), as the kernel serves
// it: one module of views/preview.js and card.js (see vitest.config.mts). No kernel runs
// here: a fake anywidget model holds the synced traits and records what the card sends. The
// kernel checks every decision itself; these tests cover what the person sees and what the
// card sends back, with the clock and the timers faked.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import card, { ICardModel } from 'virtual:jupyter-approvals-card';

import type { IStructuredPreview } from '../../jupyter_approvals/views/preview.js';

/** The local clock at the start of every test. */
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

const FINGERPRINT = 'sha256:' + '0123456789abcdef'.repeat(4);

/** Markup, an event handler and a script: none of it may become an element or run. */
const HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';

/** The event a card dispatches to open its preview full size (docs/protocol.md 4.1). */
const OPEN_PREVIEW_EVENT = 'jupyter-approvals:open-preview';

const STRUCTURED: IStructuredPreview = {
  version: 1,
  headline: [{ label: 'rows to add', count: 2, tone: 'added' }],
  blocks: [{ type: 'argv', title: null, items: ['rm', '-rf', 'build'] }],
  left_out: [],
  notes: []
};

/** The traits the kernel syncs for a pending request (kernel/card/widget.py). */
function traits(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    request_id: 'r1',
    action: 'table.write',
    summary: 'Write data/orders.csv',
    preview: 'id,units\n5,4',
    preview_omitted: 0,
    structured: null,
    fingerprint: FINGERPRINT,
    function: 'sales.save',
    state: 'pending',
    message: 'Waiting for your decision.',
    reason: '',
    notice: '',
    expires_at: new Date(T0 + 10 * 60_000).toISOString(),
    origin: 'requested from notebook sales/clean.ipynb, cell [5]',
    journal_error: '',
    min_answer_ms: 0,
    ...fields
  };
}

/** anywidget's model, in memory: `set` changes traits as a kernel sync does. */
class FakeModel implements ICardModel {
  constructor(private readonly _traits: Record<string, unknown>) {}

  readonly sent: Record<string, unknown>[] = [];

  get(name: string): unknown {
    return this._traits[name];
  }

  set(fields: Record<string, unknown>): void {
    Object.assign(this._traits, fields);
    for (const callback of [...this._listeners]) {
      callback();
    }
  }

  on(_event: 'change', callback: () => void): void {
    this._listeners.add(callback);
  }

  off(_event: 'change', callback: () => void): void {
    this._listeners.delete(callback);
  }

  send(content: Record<string, unknown>): void {
    this.sent.push(content);
  }

  get listening(): number {
    return this._listeners.size;
  }

  private _listeners = new Set<() => void>();
}

const cleanups: (() => void)[] = [];

/** The card of `model`, drawn into a fresh element of the page. */
function show(model: FakeModel) {
  const root = document.createElement('div');
  document.body.appendChild(root);
  cleanups.push(card.render({ model, el: root }));
  const part = <T extends HTMLElement = HTMLElement>(selector: string): T => {
    const found = root.querySelector<T>(selector);
    if (!found) {
      throw new Error(`no ${selector} in the card`);
    }
    return found;
  };
  return {
    root,
    part,
    approve: part<HTMLButtonElement>('.jpa-approve'),
    reject: part<HTMLButtonElement>('.jpa-reject'),
    floor: part('.jpa-floor')
  };
}

function shown(element: HTMLElement): boolean {
  return element.style.display !== 'none';
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) {
    cleanup();
  }
  document.body.replaceChildren();
  delete (window as unknown as Record<string, unknown>)[OPEN_PREVIEW_EVENT];
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('what the card shows', () => {
  it('names the action, summary, origin, time left and a short fingerprint', () => {
    // When the card of a pending request is shown
    const { root, part } = show(new FakeModel(traits()));

    // Then it says what will run, from where, and for how long it can be answered
    expect(root.querySelector('[data-testid="jpa-card"]')?.getAttribute('data-state')).toBe(
      'pending'
    );
    expect(part('.jpa-action').textContent).toBe('table.write');
    expect(part('.jpa-summary').textContent).toBe('Write data/orders.csv');
    expect(part('.jpa-origin').textContent).toBe(
      'runs sales.save, requested from notebook sales/clean.ipynb, cell [5]'
    );
    expect(part('.jpa-clock').textContent).toBe('answer within 10:00');
    // And the fingerprint in short: the first 12 hex digits after the algorithm
    expect(part('.jpa-fp').textContent).toBe('0123456789ab');
  });

  it('shows the full fingerprint on request, and the short one again', () => {
    // Given a card
    const { part } = show(new FakeModel(traits()));
    const toggle = part<HTMLButtonElement>('.jpa-fingerprint .jpa-link');
    expect(toggle.textContent).toBe('show full');

    // When the person asks for the full fingerprint
    toggle.click();

    // Then it is shown whole, and the toggle offers the short form
    expect(part('.jpa-fp').textContent).toBe(FINGERPRINT);
    expect(toggle.textContent).toBe('show short');
    toggle.click();
    expect(part('.jpa-fp').textContent).toBe('0123456789ab');
  });

  it('counts the time left down every second', async () => {
    // Given a card whose request ends in 65 s
    const { part } = show(
      new FakeModel(traits({ expires_at: new Date(T0 + 65_000).toISOString() }))
    );
    expect(part('.jpa-clock').textContent).toBe('answer within 1:05');

    // When 6 s pass, and then the end passes
    await vi.advanceTimersByTimeAsync(6000);
    expect(part('.jpa-clock').textContent).toBe('answer within 0:59');
    await vi.advanceTimersByTimeAsync(120_000);

    // Then the clock stops at zero
    expect(part('.jpa-clock').textContent).toBe('answer within 0:00');
  });

  it('shows the text preview and how much of it was left out', () => {
    // When a request without a structured preview, cut short, is shown
    const { part } = show(new FakeModel(traits({ preview_omitted: 1234 })));

    // Then the text form is shown with the cut, and there is nothing to toggle
    expect(shown(part('pre'))).toBe(true);
    expect(part('pre').textContent).toBe('id,units\n5,4');
    expect(part('.jpa-omitted').textContent).toBe(
      '… 1234 more characters left out of this preview'
    );
    expect(shown(part('.jpa-text-toggle'))).toBe(false);
    expect(shown(part('.jpa-preview-body'))).toBe(false);
  });

  it('says so when there is no preview at all', () => {
    const { part } = show(new FakeModel(traits({ preview: '' })));
    expect(part('pre').textContent).toBe('(no preview)');
    expect(part('.jpa-omitted').textContent).toBe('');
  });
});

describe('a structured preview in the card', () => {
  it('is shown instead of the text, which is one click away', () => {
    // When a request with a structured preview is shown
    const { part } = show(new FakeModel(traits({ structured: STRUCTURED })));

    // Then the structured form is shown, drawn by the shared renderer
    const body = part('.jpa-preview-body');
    expect(shown(body)).toBe(true);
    expect(body.querySelector('[data-testid="jpa-sp-headline"]')?.textContent).toBe(
      '2 rows to add'
    );
    expect(Array.from(body.querySelectorAll('.jpa-sp-argv li'), li => li.textContent)).toEqual([
      'rm',
      '-rf',
      'build'
    ]);
    expect(shown(part('pre'))).toBe(false);

    // When the person asks for the text
    const toggle = part<HTMLButtonElement>('.jpa-text-toggle');
    expect(toggle.textContent).toBe('show as text');
    toggle.click();

    // Then the text form is shown, and the toggle leads back
    expect(shown(body)).toBe(false);
    expect(shown(part('pre'))).toBe(true);
    expect(toggle.textContent).toBe('show structured');
    toggle.click();
    expect(shown(body)).toBe(true);
  });

  it('is drawn once: a sync that changes other traits keeps the same nodes', () => {
    // Given a card showing a structured preview
    const model = new FakeModel(traits({ structured: STRUCTURED }));
    const { part } = show(model);
    const drawn = part('.jpa-preview-body').firstElementChild;

    // When the kernel syncs a new message
    model.set({ message: 'Still waiting.' });

    // Then the preview is the same element (a selection or scroll in it stays)
    expect(part('.jpa-preview-body').firstElementChild).toBe(drawn);
  });

  it('falls back to the text form when the document cannot be drawn, buttons working', () => {
    // Given a structured preview not of the documented shape (a kernel can send anything)
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const model = new FakeModel(
      traits({ structured: { version: 1, headline: [], blocks: [{ type: 'argv' }] } })
    );

    // When the card is shown
    const { part, approve } = show(model);

    // Then the text form is shown with no toggle, and the problem is logged
    expect(shown(part('pre'))).toBe(true);
    expect(shown(part('.jpa-preview-body'))).toBe(false);
    expect(part('.jpa-preview-body').childNodes).toHaveLength(0);
    expect(shown(part('.jpa-text-toggle'))).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
    // And the person can still decide
    expect(approve.disabled).toBe(false);
    approve.click();
    expect(model.sent).toHaveLength(1);
  });
});

describe('the reading floor', () => {
  it('keeps Approve and Reject off, counting down, until the card could have been read', async () => {
    // When a card with a 3 s reading floor is shown
    const { approve, reject, floor } = show(new FakeModel(traits({ min_answer_ms: 3000 })));

    // Then both buttons are off, and the card says how long to read
    expect(approve.disabled).toBe(true);
    expect(reject.disabled).toBe(true);
    expect(floor.textContent).toBe('read first: 3 s');

    // When a second passes, the countdown follows
    await vi.advanceTimersByTimeAsync(1000);
    expect(floor.textContent).toBe('read first: 2 s');
    expect(approve.disabled).toBe(true);

    // And just before the floor, the buttons are still off
    await vi.advanceTimersByTimeAsync(1999);
    expect(approve.disabled).toBe(true);

    // When the floor has passed, both work and the countdown is gone
    await vi.advanceTimersByTimeAsync(21);
    expect(approve.disabled).toBe(false);
    expect(reject.disabled).toBe(false);
    expect(floor.textContent).toBe('');
  });

  it('does not send a click made before the floor', async () => {
    // Given a card with a 2 s floor
    const model = new FakeModel(traits({ min_answer_ms: 2000 }));
    const { approve } = show(model);

    // When the person clicks Approve at once (a disabled button does not fire)
    approve.click();
    await vi.advanceTimersByTimeAsync(500);
    approve.click();

    // Then nothing was sent
    expect(model.sent).toEqual([]);
  });

  it('keeps counting from when the card was drawn, whatever the kernel syncs meanwhile', async () => {
    // Given a card with a 3 s floor, 2 s in
    const model = new FakeModel(traits({ min_answer_ms: 3000 }));
    const { approve, floor } = show(model);
    await vi.advanceTimersByTimeAsync(2000);

    // When the kernel syncs a change
    model.set({ message: 'Still waiting.' });

    // Then the floor is not restarted
    expect(floor.textContent).toBe('read first: 1 s');
    await vi.advanceTimersByTimeAsync(1020);
    expect(approve.disabled).toBe(false);
  });
});

describe('a decision', () => {
  it('sends the decision with the fingerprint, the reason and everything displayed', () => {
    // Given a card with a structured preview, past its floor
    const model = new FakeModel(traits({ structured: STRUCTURED, preview_omitted: 7 }));
    const { part, approve } = show(model);

    // When the person types a reason and approves
    part<HTMLInputElement>('.jpa-reason').value = 'checked the totals';
    approve.click();

    // Then one message names the request, the decision, the fingerprint and the reason, and
    // reports exactly what the card displayed, for the kernel to compare with its record
    expect(model.sent).toEqual([
      {
        op: 'decide',
        id: 'r1',
        decision: 'approve',
        fingerprint: FINGERPRINT,
        reason: 'checked the totals',
        shown: {
          action: 'table.write',
          summary: 'Write data/orders.csv',
          preview: 'id,units\n5,4',
          preview_omitted: 7,
          structured: STRUCTURED,
          fingerprint: FINGERPRINT,
          function: 'sales.save'
        }
      }
    ]);
  });

  it('sends one decision per press: the buttons wait for the kernel to answer', async () => {
    // Given a card past its floor
    const model = new FakeModel(traits());
    const { approve, reject } = show(model);

    // When the person double-clicks Reject, then clicks Approve
    reject.click();
    reject.click();
    approve.click();

    // Then one rejection was sent, and both buttons are off
    expect(model.sent.map(sent => sent.decision)).toEqual(['reject']);
    expect(model.sent[0].reason).toBe('');
    expect(approve.disabled).toBe(true);
    expect(reject.disabled).toBe(true);

    // And when the kernel answers (any synced change), the buttons are back
    model.set({ notice: 'APPROVAL_TOO_SOON: answered sooner than a person reads' });
    expect(approve.disabled).toBe(false);
    reject.click();
    expect(model.sent).toHaveLength(2);
  });

  it('gives the buttons back after a few seconds if the kernel changes nothing', async () => {
    // Given a decision the kernel has not answered
    const model = new FakeModel(traits());
    const { approve } = show(model);
    approve.click();

    // When almost 3 s pass, the button is still off; at 3 s it is back
    await vi.advanceTimersByTimeAsync(2999);
    expect(approve.disabled).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(approve.disabled).toBe(false);
  });

  it('dismisses without deciding', () => {
    // Given a card
    const model = new FakeModel(traits());
    const { part } = show(model);

    // When the person closes it
    part<HTMLButtonElement>('.jpa-dismiss').click();

    // Then only a dismissal is sent
    expect(model.sent).toEqual([{ op: 'dismiss' }]);
  });
});

describe('the states after a decision', () => {
  it('hides the buttons once approved, and counts the time to use the approval', () => {
    // Given a pending card
    const model = new FakeModel(traits());
    const { root, part } = show(model);

    // When the kernel says it was approved
    model.set({
      state: 'approved',
      message: 'Approved. Run the cell again to use it.',
      expires_at: new Date(T0 + 90_000).toISOString()
    });

    // Then the actions and the close button are gone, and the clock counts the approval
    expect(root.querySelector('.jpa-card')?.getAttribute('data-state')).toBe('approved');
    expect(shown(part('.jpa-actions'))).toBe(false);
    expect(shown(part('.jpa-dismiss'))).toBe(false);
    expect(part('.jpa-clock').textContent).toBe('use within 1:30');
    expect(part('.jpa-status').textContent).toBe('Approved. Run the cell again to use it.');
  });

  it('says the reason of a rejection, and nothing counts down', () => {
    // When the kernel says the request was rejected with a reason
    const model = new FakeModel(traits());
    const { part } = show(model);
    model.set({ state: 'rejected', message: 'Rejected.', reason: 'wrong region' });

    // Then the status gives the reason, and the clock is empty
    expect(part('.jpa-status').textContent).toBe('Rejected. Reason: wrong region');
    expect(part('.jpa-clock').textContent).toBe('');
  });

  it('shows a refused decision and a journal that cannot be written', () => {
    // When the kernel reports both
    const model = new FakeModel(traits());
    const { part } = show(model);
    model.set({
      notice: 'A decision was refused (APPROVAL_FINGERPRINT_MISMATCH).',
      journal_error: 'The decision journal cannot be written (disk full).'
    });

    // Then the card says so
    expect(part('.jpa-notice').textContent).toBe(
      'A decision was refused (APPROVAL_FINGERPRINT_MISMATCH).'
    );
    expect(part('.jpa-journal-error').textContent).toBe(
      'The decision journal cannot be written (disk full).'
    );
  });
});

describe('a card no kernel answers for', () => {
  it('restored from saved widget state long after its deadline, offers no buttons', () => {
    // Given a card restored from a notebook's saved widget state: pending, its deadline an
    // hour ago (no kernel synced its end)
    const model = new FakeModel(traits({ expires_at: new Date(T0 - 3_600_000).toISOString() }));

    // When it is drawn
    const { root, part } = show(model);

    // Then it says what it is and when it ended, with nothing to press and no clock
    expect(root.querySelector('.jpa-card')?.getAttribute('data-state')).toBe('unheard');
    expect(shown(part('.jpa-actions'))).toBe(false);
    expect(shown(part('.jpa-dismiss'))).toBe(false);
    expect(part('.jpa-clock').textContent).toBe('');
    expect(part('.jpa-status').textContent).toContain(
      'it is a saved copy, or its kernel is gone. Its request ended at 2026-12-01 09:00 UTC; ' +
        'nothing runs from it.'
    );
    // And what was asked is still shown
    expect(part('.jpa-summary').textContent).toBe('Write data/orders.csv');
  });

  it('goes quiet only well after its deadline, so a clock running ahead keeps it live', async () => {
    // Given a live pending card whose kernel has stopped syncing
    const model = new FakeModel(traits());
    const { root, part } = show(model);

    // When its deadline passed 9 minutes ago, Then it still offers its buttons
    await vi.advanceTimersByTimeAsync(19 * 60_000);
    expect(shown(part('.jpa-actions'))).toBe(true);
    expect(part('.jpa-clock').textContent).toBe('answer within 0:00');

    // When more than 10 minutes passed since, Then it stops offering them
    await vi.advanceTimersByTimeAsync(62_000);
    expect(root.querySelector('.jpa-card')?.getAttribute('data-state')).toBe('unheard');
    expect(shown(part('.jpa-actions'))).toBe(false);
  });

  it('an approval no kernel ended says the approval ended', () => {
    // Given an approved card restored long after its approval's lifetime
    const model = new FakeModel(
      traits({ state: 'approved', expires_at: new Date(T0 - 3_600_000).toISOString() })
    );
    const { part } = show(model);
    // Then it names the approval, not the request, and counts nothing
    expect(part('.jpa-status').textContent).toContain('Its approval ended at');
    expect(part('.jpa-clock').textContent).toBe('');
  });

  it('a decided card keeps its own words whenever it is drawn', () => {
    // Given a rejected card restored long after its deadline
    const model = new FakeModel(
      traits({
        state: 'rejected',
        message: 'Rejected.',
        expires_at: new Date(T0 - 3_600_000).toISOString()
      })
    );
    const { root, part } = show(model);
    // Then it is the record the kernel last synced
    expect(root.querySelector('.jpa-card')?.getAttribute('data-state')).toBe('rejected');
    expect(part('.jpa-status').textContent).toBe('Rejected.');
  });
});

describe('hostile strings', () => {
  it('shows markup in every synced text as its characters, never as elements', () => {
    // Given a request whose every text is markup (code in a kernel chooses them)
    const model = new FakeModel(
      traits({
        action: HOSTILE,
        summary: HOSTILE,
        preview: HOSTILE,
        function: HOSTILE,
        origin: HOSTILE,
        fingerprint: HOSTILE,
        message: HOSTILE,
        notice: HOSTILE,
        journal_error: HOSTILE
      })
    );

    // When the card is shown, and the kernel rejects it with a reason of markup
    const { root, part } = show(model);
    model.set({ state: 'rejected', reason: HOSTILE });

    // Then each text reads as written, and no element or script of it exists or ran
    expect(part('.jpa-action').textContent).toBe(HOSTILE);
    expect(part('.jpa-summary').textContent).toBe(HOSTILE);
    expect(part('pre').textContent).toBe(HOSTILE);
    expect(part('.jpa-origin').textContent).toBe(`runs ${HOSTILE}, ${HOSTILE}`);
    expect(part('.jpa-fp').textContent).toBe(HOSTILE); // not sha256: so shown as it is
    expect(part('.jpa-status').textContent).toBe(`${HOSTILE} Reason: ${HOSTILE}`);
    expect(part('.jpa-notice').textContent).toBe(HOSTILE);
    expect(part('.jpa-journal-error').textContent).toBe(HOSTILE);
    expect(root.querySelector('img, script')).toBeNull();
    expect((window as unknown as { pwned?: number }).pwned).toBeUndefined();
  });

  it('cannot pick a class of the page through a structured preview', () => {
    // When a structured preview names a tone that is a class of JupyterLab's
    const structured = {
      ...STRUCTURED,
      headline: [{ label: HOSTILE, count: 1, tone: 'lm-mod-hidden' }]
    };
    const { root } = show(new FakeModel(traits({ structured })));

    // Then the count is neutral, and its label is text
    expect(root.querySelector('.lm-mod-hidden')).toBeNull();
    expect(root.querySelector('.jpa-sp-tone-neutral')?.textContent).toBe(`1 ${HOSTILE}`);
    expect(root.querySelector('img, script')).toBeNull();
  });
});

describe('open full size', () => {
  it('is hidden when no sidebar listens', () => {
    const { part } = show(new FakeModel(traits()));
    expect(shown(part('.jpa-full-size'))).toBe(false);
  });

  it('asks the sidebar, naming only the request and its fingerprint', () => {
    // Given a sidebar that listens for the event
    (window as unknown as Record<string, unknown>)[OPEN_PREVIEW_EVENT] = true;
    const events: CustomEvent[] = [];
    const listen = (event: Event) => events.push(event as CustomEvent);
    window.addEventListener(OPEN_PREVIEW_EVENT, listen);
    const { part } = show(new FakeModel(traits()));

    // When the person asks for the full-size preview
    const button = part<HTMLButtonElement>('.jpa-full-size');
    expect(shown(button)).toBe(true);
    button.click();
    window.removeEventListener(OPEN_PREVIEW_EVENT, listen);

    // Then one event names the request and its fingerprint, and nothing else
    expect(events.map(event => event.detail)).toEqual([
      { request_id: 'r1', fingerprint: FINGERPRINT }
    ]);
  });
});

describe('closing the view', () => {
  it('stops its timers and stops following the model', async () => {
    // Given a card with a floor, shown
    const model = new FakeModel(traits({ min_answer_ms: 3000 }));
    const { part, approve } = show(model);
    expect(model.listening).toBe(1);

    // When its view is removed (anywidget calls the function render returned)
    cleanups.pop()?.();

    // Then it no longer listens, and nothing ticks any more
    expect(model.listening).toBe(0);
    const clock = part('.jpa-clock').textContent;
    await vi.advanceTimersByTimeAsync(5000);
    expect(part('.jpa-clock').textContent).toBe(clock);
    expect(approve.disabled).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
