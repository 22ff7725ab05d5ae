// A request row of the history tab: what was asked, how it ended and who decided, in one line
// each; its journal lines folded below it (docs/protocol.md 6.3.1).

import { el } from './dom';
import { IJournalEntry, IJournalRequestRow } from './tokens';

/** How each outcome reads to a person, in the past tense. */
const OUTCOME_WORDS: Record<string, string> = {
  pending: 'Pending',
  approved: 'Approved, not run yet',
  staged: 'Staged in a sandbox',
  executed: 'Ran',
  failed: 'Failed',
  rejected: 'Rejected',
  expired: 'Expired',
  timed_out: 'Timed out',
  withdrawn: 'Withdrawn',
  dismissed: 'Card closed',
  lost: 'Lost with its kernel',
  auto_answered: 'Answered too fast',
  refused: 'Refused',
  agent_paused: 'Agent paused',
  agent_resumed: 'Agent resumed'
};

/** Where a decision was made, as a phrase. */
const CHANNEL_WORDS: Record<string, string> = {
  sidebar: 'in the sidebar',
  card: 'in the card',
  chat: 'in the chat',
  pause: 'by pausing the agent',
  server: 'by the server',
  cli: 'from the command line'
};

/** The outcome of a row as a person reads it. */
export function outcomeWords(outcome: string): string {
  return OUTCOME_WORDS[outcome] ?? outcome.replace(/_/g, ' ');
}

/** "approved by ana in the sidebar after 2.2 s", or '' when nobody decided. */
export function decisionWords(row: IJournalRequestRow): string {
  if (!row.decision) {
    return '';
  }
  const parts = [`${row.decision} by ${row.decided_by || 'a person'}`];
  if (row.channel) {
    parts.push(CHANNEL_WORDS[row.channel] ?? `via ${row.channel}`);
  }
  if (typeof row.latency_ms === 'number') {
    parts.push(`after ${(row.latency_ms / 1000).toFixed(1)} s`);
  }
  return parts.join(' ');
}

/** The last part of a path: a notebook is named by its file. */
function fileName(path: string): string {
  return path.split(/[\\/]/).pop() || path;
}

/**
 * A row for one request: outcome, summary and time first; who decided and where below; its
 * journal lines behind a disclosure button, rendered by `renderEntry` when first opened.
 */
export function renderRequestRow(
  row: IJournalRequestRow,
  time: (entry: { time?: string }) => HTMLElement,
  renderEntry: (entry: IJournalEntry) => HTMLElement
): HTMLLIElement {
  const item = el('li', 'jpa-Sidebar-entry jpa-Sidebar-request', {
    testid: 'jpa-sidebar-history-request'
  });
  item.dataset.outcome = row.outcome;
  if (row.request_id) {
    item.dataset.requestId = row.request_id;
  }
  const header = el('div', 'jpa-Sidebar-entryHeader');
  header.append(
    el('span', `jpa-Sidebar-event jpa-Sidebar-outcome jpa-mod-${row.outcome}`, {
      text: outcomeWords(row.outcome),
      testid: 'jpa-sidebar-history-outcome-word'
    }),
    el('span', 'jpa-Sidebar-action', { text: row.action ?? '' }),
    time({ time: row.ended })
  );
  item.append(header);
  const summary = row.summary ?? (row.agent ? `agent ${row.agent}` : (row.events[0]?.event ?? ''));
  item.append(el('div', 'jpa-Sidebar-summary', { text: summary }));
  const about = [
    decisionWords(row),
    row.notebook_path && fileName(row.notebook_path),
    row.agent && `agent ${row.agent}`,
    row.held_at === 'server' && 'held by the server'
  ].filter(Boolean);
  if (about.length) {
    item.append(
      el('div', 'jpa-Sidebar-meta', {
        text: about.join(' · '),
        testid: 'jpa-sidebar-history-request-about'
      })
    );
  }
  if (row.reason) {
    item.append(el('div', 'jpa-Sidebar-meta jpa-Sidebar-note', { text: `reason: ${row.reason}` }));
  }
  const count = row.events.length;
  const toggle = el('button', 'jpa-Sidebar-linkButton', {
    text: `${count} journal ${count === 1 ? 'line' : 'lines'}${row.complete ? '' : ' (older ones not found)'}`,
    testid: 'jpa-sidebar-history-request-toggle'
  });
  toggle.setAttribute('aria-expanded', 'false');
  const events = el('ul', 'jpa-Sidebar-list jpa-Sidebar-requestEvents', {
    testid: 'jpa-sidebar-history-request-events'
  });
  events.hidden = true;
  toggle.addEventListener('click', () => {
    const open = events.hidden;
    if (open && !events.childElementCount) {
      events.append(...row.events.map(renderEntry));
    }
    events.hidden = !open;
    toggle.setAttribute('aria-expanded', String(open));
  });
  item.append(toggle, events);
  return item;
}
