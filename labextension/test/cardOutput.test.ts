// A card's output (src/cardOutput.ts, src/cardOutcomes.ts): the live widget while it renders,
// else the request's dated record with how it ended, as the journal says, never a widget error.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// jsdom has no DragEvent, which @lumino/dragdrop (below @lumino/widgets) names at import.
vi.hoisted(() => {
  const scope = globalThis as unknown as { DragEvent?: unknown };
  scope.DragEvent ??= class DragEvent extends Event {};
});

vi.mock('../src/request', async importOriginal => ({
  ...(await importOriginal<typeof import('../src/request')>()),
  fetchJournalRequests: vi.fn()
}));

import { Widget } from '@lumino/widgets';

import { CardOutcomes } from '../src/cardOutcomes';
import {
  CARD_MIME,
  CardOutput,
  LOADING_GRACE_MS,
  WIDGET_MIME,
  outcomeSentence,
  readCardRecord
} from '../src/cardOutput';
import { fetchJournalRequests } from '../src/request';
import { IJournalRequestRow } from '../src/tokens';

const ID = '9995114a4d0a7c96';
const RECORD = {
  version: 1,
  request_id: ID,
  action: 'table.write',
  summary: 'Write quickstart-output/sales.csv',
  fingerprint: 'sha256:' + 'b2'.repeat(32),
  asked_at: '2026-11-29T11:35:36.258Z',
  agent: null
};

function row(outcome: string, extra: Partial<IJournalRequestRow> = {}): IJournalRequestRow {
  return { request_id: ID, outcome, complete: true, events: [], ...extra };
}

/** A stand-in for the notebook's widget renderer that ends the way it is told to. */
class FakeWidgetRenderer extends Widget {
  constructor(private readonly ending: 'view' | 'missing' | 'loading') {
    super();
  }
  async renderModel(): Promise<void> {
    this.node.textContent = 'Loading widget...';
    if (this.ending === 'view') {
      this.node.textContent = '';
      this.node.append(document.createElement('div'));
    } else if (this.ending === 'missing') {
      this.node.textContent = 'Error displaying widget: model not found';
    }
  }
}

async function rendered(
  live: Widget | null,
  lookup = vi.fn(async () => row('executed')),
  trusted = true
): Promise<CardOutput> {
  const output = new CardOutput({ live: live as never, lookup });
  await output.renderModel({
    trusted,
    data: { [CARD_MIME]: RECORD, [WIDGET_MIME]: { model_id: 'm1' }, 'text/plain': 'x' }
  } as never);
  await Promise.resolve();
  await Promise.resolve();
  return output;
}

function record(output: CardOutput): HTMLElement | null {
  return output.node.querySelector('[data-testid="jpa-card-record"]');
}

describe('readCardRecord', () => {
  it('reads the kernel record and refuses anything else', () => {
    expect(readCardRecord(RECORD)?.request_id).toBe(ID);
    expect(readCardRecord({ ...RECORD, request_id: '../../etc' })).toBeNull();
    expect(readCardRecord({ ...RECORD, action: 3 })).toBeNull();
    expect(readCardRecord('text')).toBeNull();
  });
});

describe('outcomeSentence', () => {
  it('says how a request ended, and who decided, in the past tense', () => {
    const ran = outcomeSentence(
      row('executed', { decision: 'approved', decided_by: 'ana', channel: 'sidebar' })
    );
    expect(ran).toMatch(/^Ran, approved by ana in the sidebar \(/);
    expect(outcomeSentence(row('rejected', { reason: 'wrong file' }))).toMatch(
      /^Rejected .*Reason: wrong file$/
    );
    expect(outcomeSentence(row('pending'))).toBe(
      'Nobody decided before its kernel ended: nothing ran.'
    );
    expect(outcomeSentence(null)).toMatch(/not in this project's decision journal/);
  });
});

describe('CardOutput', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] }));
  afterEach(() => vi.useRealTimers());

  it('shows the live widget and no record while the kernel holds the card', async () => {
    // Given a card whose widget renders
    const lookup = vi.fn(async () => row('executed'));
    const output = await rendered(new FakeWidgetRenderer('view'), lookup);
    // Then the widget shows and the journal is not asked
    expect(record(output)).toBeNull();
    expect(output.widgets[0].node.style.display).toBe('');
    vi.advanceTimersByTime(LOADING_GRACE_MS + 1);
    expect(record(output)).toBeNull();
    expect(lookup).not.toHaveBeenCalled();
  });

  it('shows the dated record and how it ended where the widget is gone', async () => {
    // Given a reopened notebook whose kernel no longer has the card's widget
    const lookup = vi.fn(async () =>
      row('executed', { decision: 'approved', decided_by: 'ana', ended: RECORD.asked_at })
    );
    const output = await rendered(new FakeWidgetRenderer('missing'), lookup);
    await vi.waitFor(() =>
      expect(
        output.node.querySelector('[data-testid="jpa-card-record-outcome"]')?.textContent
      ).toMatch(/^Ran, approved by ana/)
    );
    // Then no widget error shows: the record says what was asked, when, and how it ended
    expect(output.widgets[0].node.style.display).toBe('none');
    const text = record(output)?.textContent ?? '';
    expect(text).toContain('Approval request: table.write');
    expect(text).toContain('Write quickstart-output/sales.csv');
    expect(text).toContain(`request ${ID}`);
    expect(text).not.toContain('Error displaying widget');
    expect(lookup).toHaveBeenCalledWith(ID);
  });

  it('waits a moment for a widget that is loading, then shows the record', async () => {
    // Given a widget that stays "Loading widget..." (no kernel to restore it from)
    const output = await rendered(new FakeWidgetRenderer('loading'));
    // Then nothing flashes at first, and the record shows after the grace period
    expect(record(output)).toBeNull();
    vi.advanceTimersByTime(LOADING_GRACE_MS + 1);
    expect(record(output)).not.toBeNull();
  });

  it('follows the widget renderer when it settles later (its manager restored late)', async () => {
    // Given a widget still loading when the card rendered
    const live = new FakeWidgetRenderer('loading');
    const output = await rendered(live);
    expect(record(output)).toBeNull();
    // When the renderer later finds the model gone, Then the record shows at once
    live.node.textContent = 'Error displaying widget: model not found';
    await vi.waitFor(() => expect(record(output)).not.toBeNull());
    // When it renders a view after all, Then the view shows and the record goes
    live.node.textContent = '';
    live.node.append(document.createElement('div'));
    await vi.waitFor(() => expect(record(output)).toBeNull());
    expect(live.node.style.display).toBe('');
  });

  it('shows only the record for an untrusted notebook or where no widgets render', async () => {
    const live = new FakeWidgetRenderer('view');
    const untrusted = await rendered(live, undefined, false);
    expect(record(untrusted)).not.toBeNull();
    expect(live.node.childElementCount).toBe(0); // never asked to render
    expect(record(await rendered(null))).not.toBeNull();
  });

  it('says so when the journal cannot be read', async () => {
    const output = await rendered(
      new FakeWidgetRenderer('missing'),
      vi.fn(async () => {
        throw new Error('server down');
      })
    );
    await vi.waitFor(() =>
      expect(
        output.node.querySelector('[data-testid="jpa-card-record-outcome"]')?.textContent
      ).toBe('How it ended could not be read: server down')
    );
  });
});

describe('CardOutcomes', () => {
  it('asks the journal once for the cards of one notebook, paging until all are found', async () => {
    // Given a journal whose first page has one of two requests and whose second has the other
    const other = 'aaaaaaaaaaaaaaaa';
    vi.mocked(fetchJournalRequests)
      .mockResolvedValueOnce({
        requests: [row('executed')],
        has_more: true,
        next_before: '120',
        limit: 2,
        journal: 'j',
        project_root: '/p',
        corrupt_lines: 0
      })
      .mockResolvedValueOnce({
        requests: [row('rejected', { request_id: other })],
        has_more: false,
        next_before: null,
        limit: 2,
        journal: 'j',
        project_root: '/p',
        corrupt_lines: 0
      });
    const outcomes = new CardOutcomes();
    // When two cards of the notebook ask, and one asks again
    const [first, second, again] = await Promise.all([
      outcomes.lookup('nb.ipynb', ID),
      outcomes.lookup('nb.ipynb', other),
      outcomes.lookup('nb.ipynb', ID)
    ]);
    // Then one lookup of both ids read two pages, and each card got its own row
    expect(first?.outcome).toBe('executed');
    expect(second?.outcome).toBe('rejected');
    expect(again).toBe(first);
    expect(vi.mocked(fetchJournalRequests).mock.calls.map(call => call[0])).toEqual([
      { request: `${ID},${other}`, path: 'nb.ipynb', limit: 2, before: undefined },
      { request: `${ID},${other}`, path: 'nb.ipynb', limit: 2, before: '120' }
    ]);
  });
});
