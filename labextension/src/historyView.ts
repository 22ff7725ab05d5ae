// The history tab: the project's decision journal (`GET journal`), newest first, a page at a
// time, filtered by outcome and action. Read when shown and on Refresh; never polled.

import { ServerConnection } from '@jupyterlab/services';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { el } from './dom';
import { shortFingerprint } from './pendingItem';
import { outcomeWords, renderRequestRow } from './historyRequests';
import { describeError, fetchJournal, fetchJournalRequests } from './request';
import {
  IJournalEntry,
  IJournalReply,
  IJournalRequestRow,
  IJournalRequestsReply,
  JOURNAL_EVENTS,
  REQUEST_OUTCOMES
} from './tokens';

const PAGE_SIZE = 50;

/** Local time of a journal entry: the time alone for today's, else date and time. */
function formatTime(time: Date, raw: string): string {
  if (Number.isNaN(time.getTime())) {
    return raw;
  }
  const today = time.toDateString() === new Date().toDateString();
  return today
    ? time.toLocaleTimeString()
    : time.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });
}

export class HistoryView extends Widget {
  constructor(options: HistoryView.IOptions = {}) {
    super();
    this._settings = options.serverSettings;
    this._paths = options.paths ?? (() => []);
    this.addClass('jpa-Sidebar-history');
    this.node.dataset.testid = 'jpa-sidebar-history';

    // Whose journal: one per project (a notebook's git top-level, else its directory).
    this._path.setAttribute('aria-label', 'Project of');
    this._path.title = 'Show the journal of the project of this notebook';
    this._path.addEventListener('change', () => {
      this._pathChosen = true;
      this._restart();
    });

    // Requests (one row each, its lines folded) or the journal's lines one by one.
    const modes = el('div', 'jpa-Sidebar-modes');
    modes.setAttribute('role', 'group');
    modes.setAttribute('aria-label', 'Show');
    for (const [mode, label] of [
      ['requests', 'Requests'],
      ['events', 'Journal lines']
    ] as const) {
      const button = el('button', 'jpa-Sidebar-button jpa-Sidebar-mode', {
        text: label,
        testid: `jpa-sidebar-history-mode-${mode}`
      });
      button.addEventListener('click', () => this._setMode(mode));
      this._modeButtons.set(mode, button);
      modes.append(button);
    }

    this._outcome.setAttribute('aria-label', 'Outcome');
    this._outcome.addEventListener('change', () => this._restart());
    this._action.type = 'search';
    this._action.addEventListener('change', () => this._restart());
    this._agent.type = 'search';
    this._agent.placeholder = 'Agent';
    this._agent.setAttribute('aria-label', 'Agent');
    this._agent.addEventListener('change', () => this._restart());
    const refresh = el('button', 'jpa-Sidebar-button', {
      text: 'Refresh',
      testid: 'jpa-sidebar-history-refresh'
    });
    refresh.addEventListener('click', () => this.load(this._page));
    const filters = el('div', 'jpa-Sidebar-filters');
    filters.append(this._path, this._outcome, this._action, this._agent, refresh);

    this._newer.addEventListener('click', () => this.load(Math.max(0, this._page - 1)));
    this._older.addEventListener('click', () => this.load(this._page + 1));
    const pager = el('div', 'jpa-Sidebar-pager');
    pager.append(this._newer, this._range, this._older);

    this._error.hidden = true;
    this.node.append(modes, filters, this._error, this._list, pager, this._about);
    this._showMode();
  }

  /** Show requests or journal lines; the filters follow, the pages start again. */
  private _setMode(mode: 'requests' | 'events'): void {
    if (mode !== this._mode) {
      this._mode = mode;
      this._showMode();
      this._restart();
    }
  }

  private _showMode(): void {
    const requests = this._mode === 'requests';
    for (const [mode, button] of this._modeButtons) {
      button.setAttribute('aria-pressed', String(mode === this._mode));
    }
    const outcomes = requests ? REQUEST_OUTCOMES : JOURNAL_EVENTS;
    this._outcome.replaceChildren(
      new Option('All outcomes', ''),
      ...outcomes.map(
        outcome =>
          new Option(requests ? outcomeWords(outcome) : outcome.replace(/_/g, ' '), outcome)
      )
    );
    this._action.value = '';
    this._action.placeholder = requests ? 'Search: file, summary, id' : 'Action, e.g. table.write';
    this._action.setAttribute('aria-label', requests ? 'Search' : 'Action');
    this._agent.hidden = !requests;
    this._path.title = requests
      ? "Show this notebook's requests (Server root: every request of its project)"
      : 'Show the journal of the project of this notebook';
  }

  /**
   * Read page `page` (0: the newest) with the current filters. Pages are read by the cursor
   * the page before gave (`next_before`), so an old page costs the server what the first does.
   */
  async load(page = 0): Promise<void> {
    page = Math.min(page, this._cursors.length - 1);
    const request = ++this._request;
    this.node.classList.add('jpa-mod-loading');
    let reply: IJournalReply | null = null;
    let requests: IJournalRequestsReply | null = null;
    let error = '';
    try {
      const before = this._cursors[page] ?? undefined;
      if (this._mode === 'requests') {
        requests = await fetchJournalRequests(
          {
            limit: PAGE_SIZE,
            before,
            outcome: this._outcome.value,
            q: this._action.value.trim(),
            agent: this._agent.value.trim(),
            notebook: this._path.value
          },
          this._settings
        );
      } else {
        const query = {
          limit: PAGE_SIZE,
          before,
          outcome: this._outcome.value,
          action: this._action.value.trim(),
          path: this._path.value
        };
        reply = await fetchJournal(query, this._settings);
      }
    } catch (err) {
      const { code, message } = describeError(err);
      error =
        code === 'SERVER_EXTENSION_MISSING'
          ? 'The journal is read through the server extension, which is not running.'
          : `${code}: ${message}`;
    }
    if (request !== this._request || this.isDisposed) {
      return; // a later load superseded this one
    }
    this.node.classList.remove('jpa-mod-loading');
    this._error.textContent = error;
    this._error.hidden = !error;
    if (error.startsWith('APPROVAL_MALFORMED_MESSAGE') && page > 0) {
      // The cursor no longer fits (the journals changed): start again from the newest page.
      this._restart();
      return;
    }
    const answered = requests ?? reply;
    if (answered) {
      this._cursors.length = page + 1;
      if (answered.next_before) {
        this._cursors.push(answered.next_before);
      }
    }
    this._render(answered, requests ? requests.requests : null, page);
  }

  /** Forget the pages read so far and read the newest one (the filters changed). */
  private _restart(): void {
    this._cursors = [null];
    void this.load(0);
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._syncPaths();
    void this.load(this._page);
  }

  /** Offer the notebooks known now; keep the person's choice, else follow the first one. */
  private _syncPaths(): void {
    const chosen = this._path.value;
    const paths = [...new Set(this._paths())];
    const options = [...paths.map(path => new Option(path, path)), new Option('Server root', '')];
    this._path.replaceChildren(...options);
    const keep = this._pathChosen && (chosen === '' || paths.includes(chosen));
    this._path.value = keep ? chosen : (paths[0] ?? '');
    if (this._path.value !== chosen) {
      this._cursors = [null];
      this._page = 0;
    }
  }

  private _render(
    reply: IJournalReply | IJournalRequestsReply | null,
    rows: IJournalRequestRow[] | null,
    page: number
  ): void {
    const entries = reply && 'entries' in reply ? reply.entries : [];
    this._page = reply ? page : this._page;
    const offset = this._page * PAGE_SIZE;
    const disagreements = (reply?.disagreements ?? []).map(found =>
      el('li', 'jpa-Sidebar-entry jpa-Sidebar-disagreement', {
        text: `${found.request_id}: ${found.kind.replace(/_/g, ' ')}: ${found.detail}`,
        testid: 'jpa-sidebar-history-disagreement'
      })
    );
    const items = rows
      ? rows.map(row =>
          renderRequestRow(
            row,
            entry => this._time(entry.time),
            entry => this._renderEntry(entry)
          )
        )
      : entries.map(entry => this._renderEntry(entry));
    this._list.replaceChildren(...disagreements, ...items);
    if (reply && !items.length) {
      this._list.append(
        el('li', 'jpa-Sidebar-empty', {
          text: rows ? 'No requests.' : 'No journal entries.'
        })
      );
    }
    this._newer.disabled = !reply || this._page === 0;
    this._older.disabled = !reply || !reply.has_more;
    this._range.textContent = items.length ? `${offset + 1}–${offset + items.length}` : '';
    const about: string[] = [];
    if (reply) {
      about.push(`Project ${reply.project_root}`, `journal ${reply.journal}`);
      for (const other of ('other_journals' in reply ? reply.other_journals : null) ?? []) {
        about.push(`also ${other} (kept by a kernel whose state directory was moved)`);
      }
      if (reply.corrupt_lines) {
        about.push(`${reply.corrupt_lines} unreadable lines skipped`);
      }
    }
    this._about.textContent = about.join(' · ');
  }

  /** A `<time>` of a journal time, in local time. */
  private _time(raw: string | undefined): HTMLElement {
    const time = el('time', 'jpa-Sidebar-time', {
      text: raw ? formatTime(new Date(raw), raw) : ''
    });
    time.dateTime = raw ?? '';
    return time;
  }

  private _renderEntry(entry: IJournalEntry): HTMLLIElement {
    const item = el('li', 'jpa-Sidebar-entry', { testid: 'jpa-sidebar-history-entry' });
    item.dataset.event = entry.event;
    if (entry.request_id) {
      item.dataset.requestId = entry.request_id;
    }
    const time = this._time(entry.time);
    const header = el('div', 'jpa-Sidebar-entryHeader');
    header.append(
      el('span', `jpa-Sidebar-event jpa-mod-${entry.event}`, {
        text: entry.event.replace('_', ' ')
      }),
      el('span', 'jpa-Sidebar-action', { text: entry.action ?? '' }),
      time
    );
    item.append(header);
    // A relayed line carries the summary of the row the person was shown.
    const summary = entry.summary ?? entry.shown_summary;
    if (summary) {
      item.append(el('div', 'jpa-Sidebar-summary', { text: summary }));
    }
    const details: string[] = [];
    if (entry.event === 'relayed' && entry.decision) {
      details.push(`${entry.decision} sent by ${entry.decided_by ?? 'a person'}`);
    }
    if (entry.recorded_by) {
      details.push(`recorded by the ${entry.recorded_by}`);
    }
    if (entry.channel) {
      details.push(`via ${entry.channel}`);
    }
    if (typeof entry.latency_ms === 'number') {
      details.push(`after ${(entry.latency_ms / 1000).toFixed(1)} s`);
    }
    if (entry.code) {
      details.push(entry.code);
    }
    if (entry.fingerprint) {
      details.push(shortFingerprint(entry.fingerprint));
    }
    if (entry.notebook_path) {
      details.push(entry.notebook_path);
    }
    if (details.length) {
      item.append(el('div', 'jpa-Sidebar-meta', { text: details.join(' · ') }));
    }
    for (const text of [
      entry.reason && `reason: ${entry.reason}`,
      entry.error && `error: ${entry.error}`,
      entry.recorded_in && `recorded in ${entry.recorded_in}`
    ]) {
      if (text) {
        item.append(el('div', 'jpa-Sidebar-meta jpa-Sidebar-note', { text }));
      }
    }
    return item;
  }

  private _settings: ServerConnection.ISettings | undefined;
  private _paths: () => string[];
  private _pathChosen = false;
  private _page = 0;
  private _mode: 'requests' | 'events' = 'requests';
  private _modeButtons = new Map<'requests' | 'events', HTMLButtonElement>();
  private _agent = el('input', 'jpa-Sidebar-input', { testid: 'jpa-sidebar-history-agent' });
  /** The `before` of each page read so far (null: the newest page), and of the next one. */
  private _cursors: (string | null)[] = [null];
  private _request = 0;
  private _path = el('select', 'jpa-Sidebar-select', { testid: 'jpa-sidebar-history-path' });
  private _outcome = el('select', 'jpa-Sidebar-select', { testid: 'jpa-sidebar-history-outcome' });
  private _action = el('input', 'jpa-Sidebar-input', { testid: 'jpa-sidebar-history-action' });
  private _error = el('div', 'jpa-Sidebar-error', { testid: 'jpa-sidebar-history-error' });
  private _list = el('ul', 'jpa-Sidebar-list', { testid: 'jpa-sidebar-history-list' });
  private _newer = el('button', 'jpa-Sidebar-button', {
    text: 'Newer',
    testid: 'jpa-sidebar-history-newer'
  });
  private _older = el('button', 'jpa-Sidebar-button', {
    text: 'Older',
    testid: 'jpa-sidebar-history-older'
  });
  private _range = el('span', 'jpa-Sidebar-range');
  private _about = el('div', 'jpa-Sidebar-about');
}

export namespace HistoryView {
  export interface IOptions {
    serverSettings?: ServerConnection.ISettings;
    /** Notebook paths (relative to the server root) whose project journals to offer. */
    paths?: () => string[];
  }
}
