// A request row of the history tab (src/historyRequests.ts): what a person reads first.

import { describe, expect, it } from 'vitest';

import { decisionWords, outcomeWords, renderRequestRow } from '../src/historyRequests';
import { IJournalRequestRow } from '../src/tokens';

const ROW: IJournalRequestRow = {
  request_id: 'a'.repeat(16),
  outcome: 'executed',
  complete: true,
  summary: 'Overwrite sales.csv',
  action: 'file.write',
  notebook_path: '/home/ana/sales/clean.ipynb',
  decision: 'approved',
  decided_by: 'ana',
  channel: 'sidebar',
  latency_ms: 2200,
  ended: '2026-12-03T09:00:07.000Z',
  events: [
    { event: 'executed', time: '2026-12-03T09:00:07.000Z' },
    { event: 'approved', time: '2026-12-03T09:00:05.000Z' },
    { event: 'requested', time: '2026-12-03T09:00:01.000Z' }
  ]
};

describe('a request row', () => {
  it('says how the request ended and who decided it, in words', () => {
    // Given / When the words of a run, a loss and a decision
    // Then they read as a person says them, never as a code
    expect(outcomeWords('executed')).toBe('Ran');
    expect(outcomeWords('lost')).toBe('Lost with its kernel');
    expect(decisionWords(ROW)).toBe('approved by ana in the sidebar after 2.2 s');
    expect(decisionWords({ ...ROW, decision: undefined })).toBe('');
  });

  it('leads with the outcome and summary, its lines folded until asked for', () => {
    // Given a row rendered with simple time and line renderers
    let rendered = 0;
    const item = renderRequestRow(
      ROW,
      () => document.createElement('time'),
      entry => {
        rendered += 1;
        const line = document.createElement('li');
        line.textContent = entry.event;
        return line;
      }
    );
    const toggle = item.querySelector('button')!;
    const events = item.querySelector('ul')!;

    // Then the first things read are the outcome and the summary, with the notebook's name
    expect(item.dataset.outcome).toBe('executed');
    expect(item.querySelector('.jpa-Sidebar-outcome')!.textContent).toBe('Ran');
    expect(item.querySelector('.jpa-Sidebar-summary')!.textContent).toBe('Overwrite sales.csv');
    expect(item.textContent).toContain('clean.ipynb');
    expect(item.textContent).not.toContain('/home/ana');
    // And the lines are neither shown nor built until the toggle is pressed
    expect(events.hidden).toBe(true);
    expect(rendered).toBe(0);
    toggle.click();
    expect(events.hidden).toBe(false);
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect([...events.children].map(line => line.textContent)).toEqual([
      'executed',
      'approved',
      'requested'
    ]);
    // And folding again keeps what was built
    toggle.click();
    expect(events.hidden).toBe(true);
    expect(rendered).toBe(3);
  });
});
