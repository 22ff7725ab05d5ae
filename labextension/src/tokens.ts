// Public types of the sidebar: the REST contract of docs/protocol.md section 6, and the model
// other plugins may read (the IApprovalsModel token).

import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';

import type {
  Decision as SchemaDecision,
  JournalError,
  LastDecision,
  PendingReply,
  PendingRow
} from './schemaTypes';

/** Where the server extension serves its REST API, under the server's base URL. */
export const API_NAMESPACE = 'jupyter-approvals/api';

/** `T` with only the keys `K` required; the sidebar reads every other field as possibly
 * absent (and its tests build rows with only what they need). */
type WithRequired<T, K extends keyof T> = Pick<T, K> & Partial<Omit<T, K>>;

/** One pending request, as `GET pending` lists it (section 6.1): a row of
 * jupyter_approvals/core/schemas/pending.schema.json, whose types src/schemaTypes.ts has. */
export type IPendingRequest = WithRequired<
  PendingRow,
  | 'kernel_id'
  | 'id'
  | 'action'
  | 'summary'
  | 'preview'
  | 'preview_omitted'
  | 'fingerprint'
  | 'function'
  | 'status'
  | 'created_at'
  | 'expires_at'
>;

/** A kernel whose journal cannot be written, or is kept outside this server's state directory. */
export type IJournalError = JournalError;

/** The latest decision the server knows of, wherever it was made (section 6.1). */
export type IDecided = LastDecision;

/** The answer of `GET pending`. */
export type IPendingReply = WithRequired<
  Omit<PendingReply, 'pending'> & { pending: IPendingRequest[] },
  'pending' | 'unanswered_kernels' | 'kernels_without_approvals' | 'journal_errors'
>;

export type Decision = SchemaDecision;

/** One registered agent, as `GET agents` lists it (section 6.2.2). */
export interface IAgent {
  name: string;
  created_at: string;
  paused: boolean;
  /** Requests of this agent that the server holds. */
  pending: number;
}

/** A file's bytes as the server saw them (docs/protocol.md 6.5). */
export interface IFileState {
  size: number;
  sha256: string;
  /** Permission bits, octal, e.g. "0644". */
  mode: string;
}

/** One changed path of a sandboxed kernel's change set (docs/protocol.md 6.5). */
export interface IFileChange {
  path: string;
  kind: 'created' | 'modified' | 'deleted' | 'renamed' | 'unsupported';
  before: IFileState | null;
  after: IFileState | null;
  /** The old path of a rename; what an unsupported entry is. */
  detail: string;
}

/** A sandboxed kernel's change set, as `GET changes` lists it (docs/protocol.md 6.5). */
export interface IChangeSet {
  kernel_id: string;
  fingerprint: string;
  counts: Partial<Record<IFileChange['kind'], number>>;
  changes: IFileChange[];
  /** Files of the set not listed (the counts cover them). */
  changes_left_out?: number;
  /** Seconds left of the reading floor when the server answered. */
  decide_after_s: number;
  /** Seconds left to decide when the server answered. */
  expires_in_s: number;
}

/** What the agent code policy amounts to on this server (`GET changes`' `sandbox`). */
export interface ISandboxState {
  policy: string;
  /** `ask` where the policy is `sandbox` and no sandboxed kernel can start. */
  effective_policy: string;
  /** Why no sandboxed kernel can start here, or null. */
  unavailable: string | null;
}

/** The answer of `GET changes`. */
export interface IChangesReply {
  change_sets: IChangeSet[];
  sandbox?: ISandboxState;
}

/** The answer of `GET changes/{kernel_id}/files`: more files of a listed change set. */
export interface IChangePage {
  kernel_id: string;
  fingerprint: string;
  offset: number;
  changes: IFileChange[];
  changes_left_out: number;
}

/** The answer of `POST changes/{kernel_id}`. */
export interface IChangeDecisionReply {
  ok: boolean;
  kernel_id: string;
  decision: 'apply' | 'discard';
  done: string[];
  refused: Record<string, string>;
}

/** Where a person decided: the sidebar, or a card in the notebook (recorded in the journal). */
export type DecisionPlace = 'sidebar' | 'card';

/** The body of `POST pending/{kernel_id}/{request_id}` (section 6.2) and `POST held/...`. */
export interface IDecisionBody {
  decision: Decision;
  /** The full fingerprint the sidebar displayed for the request. */
  fingerprint: string;
  reason: string;
  /** Only for code the server holds (section 6.2.1): decided in its card at the cell. */
  channel?: 'card';
}

/** The answer of `POST pending/...`, and the shape of every REST error. */
export interface IDecisionReply {
  ok: boolean;
  code: string | null;
  message: string;
  status?: string | null;
  kernel_id?: string;
  id?: string;
}

/** One line of the decision journal (section 5); unknown keys are left out. */
export interface IJournalEntry {
  event: string;
  time: string;
  request_id?: string;
  action?: string;
  summary?: string;
  fingerprint?: string;
  channel?: string;
  reason?: string;
  code?: string;
  error?: string;
  latency_ms?: number;
  notebook_path?: string;
  cell_id?: string;
  kernel_id?: string;
  username?: string;
  /** Set when the entry comes from a journal outside the server's state directory. */
  recorded_in?: string;
  /** `relayed` lines (written by the server): the answer relayed, and the row shown. */
  decision?: string;
  decided_by?: string;
  shown_summary?: string;
  recorded_by?: string;
  [key: string]: unknown;
}

/** Query parameters of `GET journal` (section 6.3). */
export interface IJournalQuery {
  limit?: number;
  offset?: number;
  /** A previous page's `next_before`: the page of entries older than it. */
  before?: string;
  outcome?: string;
  action?: string;
  path?: string;
}

/** The answer of `GET journal`, newest entries first. */
export interface IJournalReply {
  entries: IJournalEntry[];
  has_more: boolean;
  /** The `before` of the next (older) page; null on the last page. */
  next_before?: string | null;
  offset: number;
  limit: number;
  journal: string;
  /** Journals of the same project outside the server's state directory, kept by kernels
   * whose state directory was moved; their entries carry `recorded_in`. */
  other_journals?: string[];
  project_root: string;
  corrupt_lines: number;
  /** Where a kernel's lines disagree with the server's record of what it relayed. */
  disagreements?: IDisagreement[];
}

/** One place where a kernel's record and the server's record of a request disagree. */
export interface IDisagreement {
  request_id: string;
  kind: string;
  detail: string;
}

/** Query parameters of `GET journal/requests` (section 6.3.1). */
export interface IJournalRequestsQuery {
  limit?: number;
  before?: string;
  outcome?: string;
  notebook?: string;
  agent?: string;
  q?: string;
  path?: string;
  /** Only these requests: their ids, separated by commas (at most 200). */
  request?: string;
}

/** One request as `GET journal/requests` rows it: its lines gathered, newest first. */
export interface IJournalRequestRow {
  request_id: string | null;
  outcome: string;
  started?: string;
  ended?: string;
  complete: boolean;
  events: IJournalEntry[];
  action?: string;
  summary?: string;
  notebook_path?: string;
  agent?: string;
  kernel_id?: string;
  held_at?: string;
  decision?: string;
  decided_by?: string;
  channel?: string;
  latency_ms?: number;
  reason?: string;
}

/** The answer of `GET journal/requests`. */
export interface IJournalRequestsReply {
  requests: IJournalRequestRow[];
  disagreements?: IDisagreement[];
  has_more: boolean;
  next_before: string | null;
  limit: number;
  journal: string;
  project_root: string;
  corrupt_lines: number;
}

/** What a request row's `outcome` can be (section 6.3.1), for the history filter. */
export const REQUEST_OUTCOMES: readonly string[] = [
  'pending',
  'approved',
  'staged',
  'auto_answered',
  'dismissed',
  'executed',
  'expired',
  'failed',
  'lost',
  'refused',
  'rejected',
  'timed_out',
  'withdrawn',
  'agent_paused',
  'agent_resumed'
];

/** The journal `event`s of section 5, for the history filter. */
export const JOURNAL_EVENTS: readonly string[] = [
  'requested',
  'approved',
  'rejected',
  'auto_answered',
  'refused',
  'withdrawn',
  'dismissed',
  'timed_out',
  'expired',
  'executed',
  'failed',
  'lost',
  'agent_paused',
  'agent_resumed',
  'staged',
  'relayed'
];

/** How the sidebar's last `GET pending` went. */
export interface IConnection {
  /** `missing`: the server extension is not installed or not enabled on this server. */
  state: 'connecting' | 'ok' | 'missing' | 'error';
  /** Empty when `ok`; else what a person should know (and do). */
  message: string;
  /** For `missing`: what answered instead of the extension. */
  detail?: string;
  unansweredKernels: readonly string[];
  journalErrors: readonly IJournalError[];
}

/** What changed in the pending list at one poll; keys are `kernel_id/id`. */
export interface IPendingChange {
  added: readonly string[];
  removed: readonly string[];
  updated: readonly string[];
  /** The order of the keys that stayed changed. */
  reordered: boolean;
}

/** Where a decision sent from the sidebar stands. */
export type Verdict =
  | { state: 'sending'; decision: Decision }
  | { state: 'ok'; decision: Decision; status: string | null }
  | { state: 'error'; decision: Decision; code: string; message: string };

/** A decision sent from the sidebar, with what it was about and its verdict. */
export interface ILastDecision {
  action: string;
  summary: string;
  verdict: Verdict;
  /** Where it was made, when not in this sidebar (`card`, another frontend, a pause). */
  elsewhere?: string;
}

/** The pending requests of every kernel, polled from the server extension. */
export interface IApprovalsModel {
  /** Keys (`kernel_id/id`) in the server's order: oldest request first. */
  readonly keys: readonly string[];
  get(key: string): IPendingRequest | undefined;
  readonly connection: IConnection;
  /** Emitted after a poll that changed the pending list (not on every poll). */
  readonly changed: ISignal<IApprovalsModel, IPendingChange>;
  readonly connectionChanged: ISignal<IApprovalsModel, IConnection>;
  /** Emitted with the key of the request whose verdict changed. */
  readonly verdictChanged: ISignal<IApprovalsModel, string>;
  verdict(key: string): Verdict | undefined;
  /** The latest decision sent from this sidebar and how it ended, kept after its item is gone. */
  readonly lastDecision: ILastDecision | null;
  readonly lastDecisionChanged: ISignal<IApprovalsModel, ILastDecision | null>;
  /** Forget the latest decision (the person dismissed its note). */
  clearLastDecision(): void;
  /** Send a decision for `item` exactly as displayed (its fingerprint is the one sent), made
   * in the sidebar unless `place` says it was made in a card. */
  decide(
    item: IPendingRequest,
    decision: Decision,
    reason: string,
    place?: DecisionPlace
  ): Promise<Verdict>;
  /** The registered agents, as last fetched (refreshed every few polls and after a pause). */
  readonly agents: readonly IAgent[];
  readonly agentsChanged: ISignal<IApprovalsModel, readonly IAgent[]>;
  /** Pause an agent (its held requests rejected, its token refused) or resume it. */
  setPaused(agent: string, paused: boolean): Promise<void>;
  /** Poll now. */
  refresh(): Promise<void>;
  /** The server's clock in ms since the epoch, as estimated from its answers. */
  now(): number;
}

export const IApprovalsModel = new Token<IApprovalsModel>(
  'jupyter-approvals:IApprovalsModel',
  'The pending approval requests of the running kernels.'
);

/** The key of a pending request: request ids are unique per kernel. */
export function itemKey(item: Pick<IPendingRequest, 'kernel_id' | 'id'>): string {
  return `${item.kernel_id}/${item.id}`;
}

/** True for a request id as the kernel makes them: 16 lowercase hex digits (docs/protocol.md). */
export function isRequestId(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{16}$/.test(value);
}
