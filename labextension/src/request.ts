// Calls to the REST API of the server extension (docs/protocol.md section 6).
// A server without the extension answers its paths with a 404 page, or something that is not
// JSON: that becomes a ServerExtensionMissing error whose message says how to fix it.

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import {
  API_NAMESPACE,
  IAgent,
  IChangeDecisionReply,
  IChangePage,
  IChangesReply,
  IDecisionBody,
  IDecisionReply,
  IJournalQuery,
  IJournalReply,
  IJournalRequestsQuery,
  IJournalRequestsReply,
  IPendingReply,
  IPendingRequest
} from './tokens';

/**
 * The commands that install and enable the server extension, in order. jupyter-approvals is
 * on no package index (a package of that name there would be someone else's): it is installed
 * from a clone, as its README says.
 */
export const INSTALL_COMMANDS: readonly string[] = [
  'pip install /path/to/your/clone/of/jupyter-approvals',
  'jupyter server extension enable jupyter_approvals'
];

/** The jupyter-approvals server extension does not answer on this Jupyter server. */
export class ServerExtensionMissing extends Error {
  constructor(
    readonly url: string,
    readonly status: number
  ) {
    const detail = `${url} answered ${status === 200 ? 'with something other than JSON' : status}`;
    super(
      `The jupyter-approvals server extension is not running on this Jupyter server (${detail}). ` +
        'Install it from a clone of jupyter-approvals (it is on no package index: see its README) ' +
        'and enable it, in the environment that runs Jupyter: ' +
        `${INSTALL_COMMANDS.map(command => `\`${command}\``).join(' then ')}; then restart Jupyter.`
    );
    this.name = 'ServerExtensionMissing';
    this.detail = detail;
  }

  /** What answered instead, e.g. `/jupyter-approvals/api/pending answered 404`. */
  readonly detail: string;
}

/** The server extension answered with an error (`{"ok": false, "code", "message"}`). */
export class ApprovalsError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string
  ) {
    super(message);
    this.name = 'ApprovalsError';
  }
}

/** A JSON answer and the server's clock when it sent it (its `Date` header, if any). */
export interface IAnswer<T> {
  body: T;
  date: number | null;
}

/**
 * Call `endPoint` under the API namespace with the token/XSRF handling of ServerConnection.
 *
 * Throws ServerExtensionMissing, ApprovalsError, or ServerConnection.NetworkError.
 */
export async function requestAPI<T>(
  endPoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<IAnswer<T>> {
  return requestPath<T>(URLExt.join(API_NAMESPACE, endPoint), init, settings);
}

/** Like requestAPI, for a path below the server's base URL (an item's `decide_url`). */
export async function requestPath<T>(
  path: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<IAnswer<T>> {
  const url = URLExt.join(settings.baseUrl, path);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  const text = await response.text();
  let body: unknown;
  let isJSON = false;
  try {
    body = JSON.parse(text);
    isJSON = true;
  } catch {
    // An HTML error page or an empty body: handled below.
  }
  const error = isJSON ? approvalsErrorFields(body) : null;
  if (!error && (response.status === 404 || (response.ok && !isJSON))) {
    // Our own 404s always carry an APPROVAL_ code; any other 404 is the server's own.
    throw new ServerExtensionMissing(URLExt.join('/', path), response.status);
  }
  if (!response.ok) {
    const message = error?.message || text.slice(0, 300) || response.statusText;
    throw new ApprovalsError(response.status, error?.code ?? `HTTP_${response.status}`, message);
  }
  const date = Date.parse(response.headers.get('Date') ?? '');
  return { body: body as T, date: Number.isNaN(date) ? null : date };
}

function approvalsErrorFields(body: unknown): { code: string; message: string } | null {
  if (typeof body !== 'object' || body === null) {
    return null;
  }
  const { code, message } = body as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || !code.startsWith('APPROVAL_')) {
    return null;
  }
  return { code, message: typeof message === 'string' ? message : '' };
}

/** `GET pending`: every kernel's pending requests. */
export async function fetchPending(
  settings?: ServerConnection.ISettings
): Promise<IAnswer<IPendingReply>> {
  const answer = await requestAPI<IPendingReply>('pending', { method: 'GET' }, settings);
  if (!answer.body || !Array.isArray(answer.body.pending)) {
    throw new ApprovalsError(
      200,
      'HTTP_UNEXPECTED',
      'GET pending answered without a "pending" list.'
    );
  }
  return answer;
}

/** The path below the base URL where `item` is decided: its `decide_url` (section 6.1). */
export function decisionPath(
  item: Pick<IPendingRequest, 'kernel_id' | 'id' | 'decide_url'>
): string {
  if (item.decide_url) {
    return item.decide_url;
  }
  const ids = `${encodeURIComponent(item.kernel_id ?? '')}/${encodeURIComponent(item.id)}`;
  return URLExt.join(API_NAMESPACE, 'pending', ids);
}

/** POST a decision to the item's `decide_url`: a kernel's request or code the server holds. */
export async function postDecision(
  item: Pick<IPendingRequest, 'kernel_id' | 'id' | 'decide_url'>,
  body: IDecisionBody,
  settings?: ServerConnection.ISettings
): Promise<IDecisionReply> {
  const init = {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json' }
  };
  return (await requestPath<IDecisionReply>(decisionPath(item), init, settings)).body;
}

/** `GET journal`: a page of the project's journal, newest first. */
export async function fetchJournal(
  query: IJournalQuery,
  settings?: ServerConnection.ISettings
): Promise<IJournalReply> {
  const answer = await requestAPI<IJournalReply>(
    `journal?${queryString(query)}`,
    { method: 'GET' },
    settings
  );
  return answer.body;
}

/** Query parameters as a URL's query, the empty and unset ones left out. */
function queryString(query: object): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') {
      params.set(name, String(value));
    }
  }
  return params;
}

/** `GET journal/requests`: the journal as one row per request (docs/protocol.md 6.3.1). */
export async function fetchJournalRequests(
  query: IJournalRequestsQuery,
  settings?: ServerConnection.ISettings
): Promise<IJournalRequestsReply> {
  const answer = await requestAPI<IJournalRequestsReply>(
    `journal/requests?${queryString(query)}`,
    { method: 'GET' },
    settings
  );
  return answer.body;
}

/** A short code and a message for anything a REST call threw. */
export function describeError(error: unknown): { code: string; message: string } {
  if (error instanceof ApprovalsError) {
    return { code: error.code, message: error.message };
  }
  if (error instanceof ServerExtensionMissing) {
    return { code: 'SERVER_EXTENSION_MISSING', message: error.message };
  }
  if (error instanceof ServerConnection.NetworkError) {
    return {
      code: 'NETWORK_ERROR',
      message: `The Jupyter server did not answer: ${error.message}`
    };
  }
  return { code: 'ERROR', message: String(error) };
}

/** `GET agents`: the registered agents, paused or not (section 6.2.2). */
export async function fetchAgents(settings?: ServerConnection.ISettings): Promise<IAgent[]> {
  const answer = await requestAPI<{ agents: IAgent[] }>('agents', { method: 'GET' }, settings);
  return answer.body.agents ?? [];
}

/** `POST agents/{name}/pause` or `.../resume`. */
export async function postPause(
  agent: string,
  paused: boolean,
  settings?: ServerConnection.ISettings
): Promise<void> {
  const path = `agents/${encodeURIComponent(agent)}/${paused ? 'pause' : 'resume'}`;
  await requestAPI<unknown>(path, { method: 'POST' }, settings);
}

/** `GET changes`: the change sets of the sandboxed kernels (docs/protocol.md 6.5). */
export async function fetchChangeSets(
  settings?: ServerConnection.ISettings
): Promise<IChangesReply> {
  const answer = await requestAPI<IChangesReply>('changes', { method: 'GET' }, settings);
  return { change_sets: answer.body.change_sets ?? [], sandbox: answer.body.sandbox };
}

/** `POST changes/{kernel_id}`: apply or discard the change set listed as `fingerprint`. */
export async function postChangeDecision(
  kernelId: string,
  decision: 'apply' | 'discard',
  fingerprint: string,
  settings?: ServerConnection.ISettings
): Promise<IChangeDecisionReply> {
  const answer = await requestAPI<IChangeDecisionReply>(
    `changes/${encodeURIComponent(kernelId)}`,
    { method: 'POST', body: JSON.stringify({ decision, fingerprint }) },
    settings
  );
  return answer.body;
}

/** One listed file's change, from `GET changes/{kernel_id}/preview` (docs/protocol.md 6.5). */
export interface IChangePreview {
  path: string;
  kind: string;
  summary: string;
  preview: string;
  structured: IPendingRequest['structured'];
}

/** `GET changes/{kernel_id}/preview?path=...`. */
/** `GET changes/{kernel_id}/files`: the files of a listed change set from `offset` on. */
export async function fetchChangePage(
  kernelId: string,
  fingerprint: string,
  offset: number,
  settings?: ServerConnection.ISettings
): Promise<IChangePage> {
  const query = new URLSearchParams({ fingerprint, offset: String(offset) }).toString();
  const answer = await requestAPI<IChangePage>(
    `changes/${encodeURIComponent(kernelId)}/files?${query}`,
    { method: 'GET' },
    settings
  );
  return answer.body;
}

export async function fetchChangePreview(
  kernelId: string,
  path: string,
  settings?: ServerConnection.ISettings
): Promise<IChangePreview> {
  const query = new URLSearchParams({ path }).toString();
  const answer = await requestAPI<IChangePreview>(
    `changes/${encodeURIComponent(kernelId)}/preview?${query}`,
    { method: 'GET' },
    settings
  );
  return answer.body;
}
