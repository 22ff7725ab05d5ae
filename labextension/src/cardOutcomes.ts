// How the requests of a notebook's cards ended, read from the decision journal of the
// notebook's project (`GET journal/requests?request=...`, docs/protocol.md 6.3.1). A notebook
// reopened with many cards asks once for all of them: the ids asked within a short moment
// are looked up together, a page at a time, until all are found or the journal's start.
// For display only: what is read here decides nothing.

import { ServerConnection } from '@jupyterlab/services';

import { fetchJournalRequests } from './request';
import { IJournalRequestRow } from './tokens';

/** How long ids are collected before one lookup (ms). */
const GATHER_MS = 50;
/** Ids per lookup, the server's limit. */
const IDS_PER_LOOKUP = 200;
/** Pages read per lookup at most: a long journal is not read to its start for a few cards. */
const PAGES_PER_LOOKUP = 20;

/** What the journal says of one request: its row, or null when the journal has none. */
export type CardOutcome = IJournalRequestRow | null;

/** The lookups of the cards of every open notebook, by notebook path. */
export class CardOutcomes {
  constructor(settings?: ServerConnection.ISettings) {
    this._settings = settings;
  }

  /** How request `id` of a card in the notebook at `path` ended (cached once found). */
  lookup(path: string, id: string): Promise<CardOutcome> {
    const key = `${path}\n${id}`;
    let answer = this._answers.get(key);
    if (!answer) {
      answer = new Promise<CardOutcome>((resolve, reject) => {
        const batch = this._gathering.get(path) ?? new Map();
        batch.set(id, { resolve, reject });
        if (!this._gathering.has(path)) {
          this._gathering.set(path, batch);
          setTimeout(() => void this._send(path), GATHER_MS);
        }
      });
      // A failed lookup is asked again next time a card renders.
      answer.catch(() => this._answers.delete(key));
      this._answers.set(key, answer);
    }
    return answer;
  }

  private async _send(path: string): Promise<void> {
    const batch = this._gathering.get(path);
    this._gathering.delete(path);
    if (!batch) {
      return;
    }
    const ids = Array.from(batch.keys());
    for (let start = 0; start < ids.length; start += IDS_PER_LOOKUP) {
      const some = ids.slice(start, start + IDS_PER_LOOKUP);
      try {
        const found = await this._find(path, some);
        for (const id of some) {
          batch.get(id)?.resolve(found.get(id) ?? null);
        }
      } catch (error) {
        for (const id of some) {
          batch.get(id)?.reject(error);
        }
      }
    }
  }

  private async _find(path: string, ids: string[]): Promise<Map<string, IJournalRequestRow>> {
    const found = new Map<string, IJournalRequestRow>();
    let before: string | undefined;
    for (let page = 0; page < PAGES_PER_LOOKUP && found.size < ids.length; page++) {
      const reply = await fetchJournalRequests(
        { request: ids.join(','), path, limit: ids.length, before },
        this._settings
      );
      for (const row of reply.requests) {
        // The newest row of a request: the one that says how it ended.
        if (row.request_id && !found.has(row.request_id)) {
          found.set(row.request_id, row);
        }
      }
      if (!reply.has_more || !reply.next_before) {
        break;
      }
      before = reply.next_before;
    }
    return found;
  }

  private _settings?: ServerConnection.ISettings;
  private _answers = new Map<string, Promise<CardOutcome>>();
  private _gathering = new Map<
    string,
    Map<string, { resolve: (row: CardOutcome) => void; reject: (error: unknown) => void }>
  >();
}
