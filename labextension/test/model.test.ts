// Unit tests of the sidebar's model (src/model.ts, and the models it is made of: pending list,
// agents, decisions, last decision, server clock). The REST layer is mocked: the functions
// that call the server (fetchPending, fetchAgents, postDecision, postPause) are replaced by
// a fake server below; the error classes and describeError stay the real ones, since the
// model tells errors apart by them. Timers and the clock are faked, so the Lumino Polls are
// driven by the tests: even a refresh runs on a timer (of 0 ms), hence `refreshed`.

import { ServerConnection } from '@jupyterlab/services';
import { ISignal } from '@lumino/signaling';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../src/request', async importOriginal => ({
  ...(await importOriginal<typeof import('../src/request')>()),
  fetchPending: vi.fn(),
  fetchAgents: vi.fn(),
  postDecision: vi.fn(),
  postPause: vi.fn()
}));

import { ApprovalsModel } from '../src/model';
import {
  ApprovalsError,
  fetchAgents,
  fetchPending,
  IAnswer,
  postDecision,
  postPause,
  ServerExtensionMissing
} from '../src/request';
import { IAgent, IDecisionReply, IPendingReply, IPendingRequest } from '../src/tokens';

/** The local clock at the start of every test. */
const T0 = Date.parse('2024-05-01T12:00:00Z');

/** Passed to the model; every REST call must get this very object. */
const SETTINGS = { baseUrl: 'http://server.test/' } as ServerConnection.ISettings;

/** What the fake server answers to `GET pending` and `GET agents`. */
const server = {
  pending: [] as IPendingRequest[],
  extra: {} as Partial<IPendingReply>,
  /** The `Date` header's time, or null for an answer without one. */
  date: null as number | null,
  /** Thrown by `GET pending` instead of answering. */
  error: null as unknown,
  agents: [] as IAgent[],
  /** When `GET pending` was asked, in ms after T0. */
  polledAt: [] as number[]
};

function request(id: string, fields: Partial<IPendingRequest> = {}): IPendingRequest {
  return {
    kernel_id: 'k1',
    id,
    action: 'table.write',
    summary: `request ${id}`,
    preview: `write(${id})`,
    preview_omitted: 0,
    fingerprint: `sha256:${id}`,
    function: 'tables.write',
    status: 'pending',
    created_at: '2024-05-01T11:59:00Z',
    expires_at: '2024-05-01T12:05:00Z',
    ...fields
  };
}

/** Every value `signal` emits from now on. */
function record<S, T>(signal: ISignal<S, T>): T[] {
  const seen: T[] = [];
  signal.connect((_, args) => {
    seen.push(args);
  });
  return seen;
}

/** A promise the test settles when it wants to. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(e: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const models: ApprovalsModel[] = [];

function newModel(): ApprovalsModel {
  const model = new ApprovalsModel({ serverSettings: SETTINGS });
  models.push(model);
  return model;
}

/**
 * Wait for `promise`, running the 0 ms timers the polls schedule on the way. The promise
 * callbacks run first, outside the fake clock's tick: a 0 ms timer set during a tick would be
 * due 1 ms later, and the clock must not move.
 */
async function settled<T>(promise: Promise<T>): Promise<T> {
  let done = false;
  const mark = () => {
    done = true;
  };
  promise.then(mark, mark);
  for (let turn = 0; turn < 10 && !done; turn++) {
    for (let job = 0; job < 20; job++) {
      await Promise.resolve();
    }
    await vi.advanceTimersByTimeAsync(0);
  }
  return promise;
}

/** `model.refresh()`, answered and applied. */
function refreshed(model: ApprovalsModel): Promise<void> {
  return settled(model.refresh());
}

/** A model that has polled once, with `items` listed. */
async function polledModel(...items: IPendingRequest[]): Promise<ApprovalsModel> {
  server.pending = items;
  const model = newModel();
  await refreshed(model);
  return model;
}

/** Hide or show the page, as a browser does: its visibility changes, then the event. */
function setHidden(hidden: boolean): void {
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  Object.defineProperty(document, 'visibilityState', {
    configurable: true,
    get: () => (hidden ? 'hidden' : 'visible')
  });
  document.dispatchEvent(new Event('visibilitychange'));
}

/** The gaps in ms between the polls from the `from`th on. */
function gaps(from = 0): number[] {
  const at = server.polledAt.slice(from);
  return at.slice(1).map((time, index) => time - at[index]);
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.resetAllMocks();
  setHidden(false);
  Object.assign(server, {
    pending: [],
    extra: {},
    date: null,
    error: null,
    agents: [],
    polledAt: []
  });
  vi.mocked(fetchPending).mockImplementation(async (): Promise<IAnswer<IPendingReply>> => {
    server.polledAt.push(Date.now() - T0);
    if (server.error) {
      throw server.error;
    }
    // A fresh copy per answer, as JSON from the network would be.
    const body: IPendingReply = structuredClone({
      pending: server.pending,
      unanswered_kernels: [],
      kernels_without_approvals: [],
      journal_errors: [],
      ...server.extra
    });
    return { body, date: server.date };
  });
  vi.mocked(fetchAgents).mockImplementation(async () => structuredClone(server.agents));
  vi.mocked(postPause).mockResolvedValue(undefined);
});

afterEach(() => {
  for (const model of models.splice(0)) {
    model.dispose();
  }
  vi.useRealTimers();
  vi.restoreAllMocks();
  // Back to jsdom's own getters
  delete (document as { hidden?: boolean }).hidden;
  delete (document as { visibilityState?: string }).visibilityState;
});

describe('the pending list', () => {
  it('emits the added keys once, in the server order, on the first poll', async () => {
    // Given a server listing two requests, the newer kernel's first
    server.pending = [request('b', { kernel_id: 'k2' }), request('a')];
    const model = newModel();
    const changes = record(model.changed);

    // When the model polls
    await refreshed(model);

    // Then one change adds both keys (kernel_id/id), in the server's order
    expect(changes).toEqual([
      { added: ['k2/b', 'k1/a'], removed: [], updated: [], reordered: false }
    ]);
    expect(model.keys).toEqual(['k2/b', 'k1/a']);
    expect(model.get('k1/a')).toEqual(request('a'));
    expect(model.get('a')).toBeUndefined();
    expect(fetchPending).toHaveBeenCalledWith(SETTINGS);
  });

  it('emits nothing for polls that change nothing', async () => {
    // Given a model that has polled a list of two requests
    const model = await polledModel(request('a'), request('b'));
    const changes = record(model.changed);

    // When it polls twice more and the server answers the same (as new objects)
    await refreshed(model);
    await refreshed(model);

    // Then it asked the server but emitted no change, and kept its keys
    expect(fetchPending).toHaveBeenCalledTimes(3);
    expect(changes).toEqual([]);
    expect(model.keys).toEqual(['k1/a', 'k1/b']);
  });

  it('emits what was added, removed and changed in one change per poll', async () => {
    // Given a model showing a, b and c
    const model = await polledModel(request('a'), request('b'), request('c'));
    const changes = record(model.changed);

    // When the server then lists b as busy, c as before, and a new d
    server.pending = [request('b', { kernel_busy: true }), request('c'), request('d')];
    await refreshed(model);

    // Then exactly one change names d added, a removed and b updated
    expect(changes).toEqual([
      { added: ['k1/d'], removed: ['k1/a'], updated: ['k1/b'], reordered: false }
    ]);
    expect(model.keys).toEqual(['k1/b', 'k1/c', 'k1/d']);
    expect(model.get('k1/a')).toBeUndefined();
    expect(model.get('k1/b')?.kernel_busy).toBe(true);
  });

  it('reports a new order of the kept keys as reordered', async () => {
    // Given a model showing a then b
    const model = await polledModel(request('a'), request('b'));
    const changes = record(model.changed);

    // When the server lists b then a, unchanged otherwise
    server.pending = [request('b'), request('a')];
    await refreshed(model);

    // Then the change adds, removes and updates nothing but says the order changed
    expect(changes).toEqual([{ added: [], removed: [], updated: [], reordered: true }]);
    expect(model.keys).toEqual(['k1/b', 'k1/a']);
  });

  it('does not call an insertion before the kept keys a reorder', async () => {
    // Given a model showing a then b
    const model = await polledModel(request('a'), request('b'));
    const changes = record(model.changed);

    // When the server lists a new c first, then a and b
    server.pending = [request('c'), request('a'), request('b')];
    await refreshed(model);

    // Then c is added, in front, and a and b kept their order
    expect(changes).toEqual([{ added: ['k1/c'], removed: [], updated: [], reordered: false }]);
    expect(model.keys).toEqual(['k1/c', 'k1/a', 'k1/b']);
  });

  it('keys by kernel and id: one id in two kernels is two items; a repeated key keeps the first', async () => {
    // Given a server listing r1 of two kernels, and k1's r1 a second time
    server.pending = [
      request('r1'),
      request('r1', { kernel_id: 'k2' }),
      request('r1', { summary: 'listed twice' })
    ];
    const model = newModel();

    // When the model polls
    await refreshed(model);

    // Then there are two items, and k1/r1 is the one listed first
    expect(model.keys).toEqual(['k1/r1', 'k2/r1']);
    expect(model.get('k1/r1')?.summary).toBe('request r1');
  });
});

describe('polling', () => {
  it('polls at once when started, then every second while the server answers', async () => {
    // Given a server that answers
    const model = newModel();

    // When the model starts, and 3.5 s pass
    model.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(model.connection.state).toBe('ok');
    await vi.advanceTimersByTimeAsync(3500);

    // Then it polled at once, and every second from each answer on
    expect(server.polledAt).toEqual([0, 1000, 2000, 3000]);
  });

  it.each([
    ['error', new ApprovalsError(503, 'HTTP_503', 'unavailable')],
    ['missing', new ServerExtensionMissing('/jupyter-approvals/api/pending', 404)]
  ])(
    'backs off while the server fails (%s), up to 15 s, and polls every second once it answers',
    async (state, error) => {
      // Given a started model that had an answer, and the longest wait the backoff may pick
      vi.spyOn(Math, 'random').mockReturnValue(0.999999);
      const model = newModel();
      model.start();
      await vi.advanceTimersByTimeAsync(0);

      // When the server fails from the next poll on, for a while
      server.error = error;
      await vi.advanceTimersByTimeAsync(1000 + 3000 + 9000 + 15_000 + 15_000);
      expect(model.connection.state).toBe(state);

      // Then each wait was longer, by up to 3 times, and none longer than 15 s
      expect(gaps()).toEqual([1000, 3000, 9000, 15_000, 15_000]);

      // And when the server answers again, it polls every second again
      server.error = null;
      const answered = server.polledAt.length;
      await vi.advanceTimersByTimeAsync(15_000 + 2000);
      expect(model.connection.state).toBe('ok');
      expect(gaps(answered - 1)).toEqual([15_000, 1000, 1000]);
    }
  );

  it('never waits less than a second after an error', async () => {
    // Given the shortest wait the backoff may pick, and a started model that had an answer
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const model = newModel();
    model.start();
    await vi.advanceTimersByTimeAsync(0);

    // When the server fails
    server.error = new ApprovalsError(500, 'APPROVAL_INTERNAL', 'boom');
    await vi.advanceTimersByTimeAsync(5000);

    // Then it polls again every second, no sooner
    expect(gaps()).toEqual([1000, 1000, 1000, 1000, 1000]);
  });

  it('stops polling when disposed', async () => {
    // Given a started model
    const model = newModel();
    model.start();
    await vi.advanceTimersByTimeAsync(0);

    // When it is disposed
    model.dispose();
    await vi.advanceTimersByTimeAsync(60_000);

    // Then it never polls again, even when the page is shown again
    document.dispatchEvent(new Event('visibilitychange'));
    await vi.advanceTimersByTimeAsync(0);
    expect(fetchPending).toHaveBeenCalledTimes(1);
    expect(model.isDisposed).toBe(true);
    // And a refresh asked of it now resolves without asking the server
    await model.refresh();
    expect(fetchPending).toHaveBeenCalledTimes(1);
  });

  it('pauses while the page is hidden and polls at once when it is shown', async () => {
    // Given a model started on a hidden page
    setHidden(true);
    const model = newModel();
    model.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fetchPending).toHaveBeenCalledTimes(1); // the first poll, then none while hidden
    expect(fetchAgents).toHaveBeenCalledTimes(1);

    // When the page is shown
    setHidden(false);
    await vi.advanceTimersByTimeAsync(0);

    // Then it polls the list and the agents at once, and the list every second again
    expect(fetchPending).toHaveBeenCalledTimes(2);
    expect(fetchAgents).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fetchPending).toHaveBeenCalledTimes(3);
  });

  it('stands by once the page is hidden while it polls', async () => {
    // Given a model polling on a shown page
    const model = newModel();
    model.start();
    await vi.advanceTimersByTimeAsync(2000);
    expect(fetchPending).toHaveBeenCalledTimes(3);

    // When the page is hidden for a minute
    setHidden(true);
    await vi.advanceTimersByTimeAsync(60_000);

    // Then it asked once more at most (the poll lingers a tick), and then nothing
    expect(fetchPending).toHaveBeenCalledTimes(4);
  });

  it('shares a refresh in flight instead of starting another', async () => {
    // Given a refresh the server has not answered yet
    const answer = deferred<IAnswer<IPendingReply>>();
    vi.mocked(fetchPending).mockReturnValueOnce(answer.promise);
    const model = newModel();
    const first = model.refresh();
    await vi.advanceTimersByTimeAsync(0);

    // When the model is asked to refresh again
    const second = model.refresh();
    await vi.advanceTimersByTimeAsync(0);

    // Then no second request is sent, and both wait for the same answer
    expect(fetchPending).toHaveBeenCalledTimes(1);
    answer.resolve({
      body: {
        pending: [request('a')],
        unanswered_kernels: [],
        kernels_without_approvals: [],
        journal_errors: []
      },
      date: null
    });
    await settled(Promise.all([first, second]));
    expect(model.keys).toEqual(['k1/a']);
    expect(fetchPending).toHaveBeenCalledTimes(1);
  });

  it('never applies an answer older than the one a refresh got', async () => {
    // Given a started model whose scheduled poll waits for its answer
    const model = await polledModel();
    model.start();
    const late = deferred<IAnswer<IPendingReply>>();
    vi.mocked(fetchPending).mockReturnValueOnce(late.promise);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fetchPending).toHaveBeenCalledTimes(2);

    // When a refresh asks again, and its answer lists b
    server.pending = [request('b')];
    await refreshed(model);
    expect(model.keys).toEqual(['k1/b']);

    // Then the older answer, listing a, arriving after it, is dropped
    late.resolve({
      body: {
        pending: [request('a')],
        unanswered_kernels: [],
        kernels_without_approvals: [],
        journal_errors: []
      },
      date: null
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(model.keys).toEqual(['k1/b']);
  });
});

describe('the connection', () => {
  it('turns from connecting to ok, with the silent kernels and journal errors, once', async () => {
    // Given a new model, and a server where one kernel did not answer and a journal failed
    const model = newModel();
    const connections = record(model.connectionChanged);
    expect(model.connection.state).toBe('connecting');
    server.extra = {
      unanswered_kernels: ['k9'],
      journal_errors: [{ kernel_id: 'k1', error: 'disk full' }]
    };

    // When it polls, twice with the same answer
    await refreshed(model);
    await refreshed(model);

    // Then the connection changed once, to ok with what the server reported
    const ok = {
      state: 'ok',
      message: '',
      unansweredKernels: ['k9'],
      journalErrors: [{ kernel_id: 'k1', error: 'disk full' }]
    };
    expect(connections).toEqual([ok]);
    expect(model.connection).toEqual(ok);
  });

  it('reports a missing server extension with the fix, and empties the list', async () => {
    // Given a model showing request a
    const model = await polledModel(request('a'));
    const changes = record(model.changed);
    const connections = record(model.connectionChanged);

    // When the server answers `GET pending` with its own 404
    const error = new ServerExtensionMissing('/jupyter-approvals/api/pending', 404);
    server.error = error;
    await refreshed(model);

    // Then the state is missing, the message says how to install it, the detail what answered
    expect(connections).toHaveLength(1);
    expect(model.connection).toMatchObject({
      state: 'missing',
      message: error.message,
      detail: '/jupyter-approvals/api/pending answered 404',
      unansweredKernels: [],
      journalErrors: []
    });
    expect(model.connection.message).toContain(
      'pip install /path/to/your/clone/of/jupyter-approvals'
    );
    expect(model.connection.message).not.toContain('pip install jupyter-approvals');
    expect(model.connection.message).toContain('on no package index');
    // And the requests are gone: none can be decided without the extension
    expect(model.keys).toEqual([]);
    expect(changes).toEqual([{ added: [], removed: ['k1/a'], updated: [], reordered: false }]);
  });

  it('reports a server error as code: message and keeps the list', async () => {
    // Given a model showing request a
    const model = await polledModel(request('a'));
    const changes = record(model.changed);

    // When the server answers with an error
    server.error = new ApprovalsError(500, 'APPROVAL_INTERNAL', 'boom');
    await refreshed(model);

    // Then the state is error with its code, and the list is as it was
    expect(model.connection).toMatchObject({
      state: 'error',
      message: 'APPROVAL_INTERNAL: boom',
      unansweredKernels: [],
      journalErrors: []
    });
    expect(model.connection.detail).toBeUndefined();
    expect(model.keys).toEqual(['k1/a']);
    expect(changes).toEqual([]);
  });

  it('reports a server that does not answer as a network error', async () => {
    // Given a server that cannot be reached
    server.error = new ServerConnection.NetworkError(new TypeError('Failed to fetch'));
    const model = newModel();

    // When the model polls
    await refreshed(model);

    // Then the state is error and says the server did not answer
    expect(model.connection.state).toBe('error');
    expect(model.connection.message).toBe(
      'NETWORK_ERROR: The Jupyter server did not answer: Failed to fetch'
    );
  });

  it('is ok again, and emits so, once the server answers again', async () => {
    // Given a model whose last poll failed
    server.error = new ApprovalsError(503, 'HTTP_503', 'unavailable');
    const model = newModel();
    const states = record(model.connectionChanged);
    await refreshed(model);

    // When the server answers again
    server.error = null;
    await refreshed(model);

    // Then the connection went error, then ok
    expect(states.map(connection => connection.state)).toEqual(['error', 'ok']);
    expect(model.connection.message).toBe('');
  });
});

describe('the server clock (Date header)', () => {
  it('follows a server clock ahead or behind by more than SKEW_THRESHOLD', async () => {
    // Given a server whose clock is a minute ahead (the Date header truncates to seconds)
    server.date = T0 + 60_000;
    const model = newModel();

    // When the model polls
    await refreshed(model);

    // Then now() is the server's, the header's truncation counted as half a second
    expect(model.now()).toBe(T0 + 60_500);
    // and it runs on with the local clock (moved without running the poll timer)
    vi.setSystemTime(T0 + 5000);
    expect(model.now()).toBe(T0 + 5000 + 60_500);

    // And when the server's clock turns out 30 s behind, now() follows it
    server.date = T0 + 5000 - 30_000;
    await refreshed(model);
    expect(model.now()).toBe(T0 + 5000 - 29_500);
  });

  it.each([-1900, -1000, 0, 900])(
    'takes a difference under SKEW_THRESHOLD (server at %i ms) for the header resolution',
    async difference => {
      // Given a server clock a little off (|difference + 500| < 1500 ms)
      server.date = T0 + difference;
      const model = newModel();

      // When the model polls
      await refreshed(model);

      // Then it keeps the local clock
      expect(model.now()).toBe(T0);
    }
  );

  it('counts a difference of SKEW_THRESHOLD (1500 ms) as skew', async () => {
    // Given a server clock 1 s ahead in its header: 1.5 s with the truncation
    server.date = T0 + 1000;
    const model = newModel();

    // When the model polls
    await refreshed(model);

    // Then it follows the server
    expect(model.now()).toBe(T0 + 1500);
  });

  it('keeps its estimate while the skew wobbles by up to a second, follows bigger moves', async () => {
    // Given a model that follows a server a minute ahead
    server.date = T0 + 60_000;
    const model = newModel();
    await refreshed(model);

    // When later answers put the server 1 s later, then 0.5 s earlier
    server.date = T0 + 61_000;
    await refreshed(model);
    const afterLater = model.now();
    server.date = T0 + 59_500;
    await refreshed(model);
    const afterEarlier = model.now();
    // and then 2 s later
    server.date = T0 + 62_000;
    await refreshed(model);

    // Then the small moves left now() alone (no jitter), the big one moved it
    expect(afterLater).toBe(T0 + 60_500);
    expect(afterEarlier).toBe(T0 + 60_500);
    expect(model.now()).toBe(T0 + 62_500);
  });

  it('returns to the local clock once the skew is gone', async () => {
    // Given a model that follows a server a minute ahead
    server.date = T0 + 60_000;
    const model = newModel();
    await refreshed(model);

    // When the server's clock agrees with the local one again
    server.date = T0;
    await refreshed(model);

    // Then now() is the local clock
    expect(model.now()).toBe(T0);
  });

  it('keeps its estimate when an answer has no Date header', async () => {
    // Given a model that follows a server a minute ahead
    server.date = T0 + 60_000;
    const model = newModel();
    await refreshed(model);

    // When an answer comes without a Date header
    server.date = null;
    await refreshed(model);

    // Then the estimate stands
    expect(model.now()).toBe(T0 + 60_500);
  });
});

describe('decisions', () => {
  const approved: IDecisionReply = { ok: true, code: null, message: '', status: 'approved' };

  it('posts the decision, the displayed fingerprint and the reason for the item', async () => {
    // Given a model showing request a, and a server that accepts decisions
    const item = request('a', { decide_url: 'jupyter-approvals/api/pending/k1/a' });
    const model = await polledModel(item);
    vi.mocked(postDecision).mockResolvedValue(approved);

    // When the person approves it with a reason
    const verdict = await model.decide(item, 'approve', 'looks right');

    // Then the item is posted once with its fingerprint and the reason, with the settings
    expect(postDecision).toHaveBeenCalledTimes(1);
    expect(postDecision).toHaveBeenCalledWith(
      item,
      { decision: 'approve', fingerprint: 'sha256:a', reason: 'looks right' },
      SETTINGS
    );
    // And the verdict is ok, with the status the server answered
    expect(verdict).toEqual({ state: 'ok', decision: 'approve', status: 'approved' });
    expect(model.verdict('k1/a')).toEqual(verdict);
  });

  it('says a decision was made in a card only for code the server holds', async () => {
    // Given a model showing held agent code and a kernel's request
    const held = request('h', {
      held_at: 'server',
      decide_url: 'jupyter-approvals/api/held/h'
    });
    const kernels = request('k');
    const model = await polledModel(held, kernels);
    vi.mocked(postDecision).mockResolvedValue(approved);

    // When the person approves each in a card
    await model.decide(held, 'approve', '', 'card');
    await model.decide(kernels, 'approve', '', 'card');

    // Then the held code's decision names the card; the kernel's route gets no such field
    // (the kernel records its own card's decisions, and refuses fields it does not know)
    expect(vi.mocked(postDecision).mock.calls.map(call => call[1])).toEqual([
      { decision: 'approve', fingerprint: 'sha256:h', reason: '', channel: 'card' },
      { decision: 'approve', fingerprint: 'sha256:k', reason: '' }
    ]);
  });

  it('shows sending until the server answers, signalling the key each time', async () => {
    // Given a model showing request a, and a decision the server has not answered yet
    const item = request('a');
    const model = await polledModel(item);
    const reply = deferred<IDecisionReply>();
    vi.mocked(postDecision).mockReturnValue(reply.promise);
    const keys = record(model.verdictChanged);

    // When the person rejects it
    const decided = model.decide(item, 'reject', '');

    // Then the verdict is sending at once
    expect(model.verdict('k1/a')).toEqual({ state: 'sending', decision: 'reject' });
    expect(keys).toEqual(['k1/a']);
    // And when the server answers, it is ok (without a status: null)
    reply.resolve({ ok: true, code: null, message: '' });
    await decided;
    expect(model.verdict('k1/a')).toEqual({ state: 'ok', decision: 'reject', status: null });
    expect(keys).toEqual(['k1/a', 'k1/a']);
  });

  it('does not post again while a decision for the item is being sent', async () => {
    // Given a decision for a that is being sent
    const item = request('a');
    const model = await polledModel(item);
    const reply = deferred<IDecisionReply>();
    vi.mocked(postDecision).mockReturnValue(reply.promise);
    const first = model.decide(item, 'approve', '');

    // When the person clicks again, even the other button
    const second = await model.decide(item, 'reject', '');

    // Then nothing more is posted, and the answer is the verdict in flight
    expect(second).toEqual({ state: 'sending', decision: 'approve' });
    expect(postDecision).toHaveBeenCalledTimes(1);
    reply.resolve(approved);
    expect(await first).toEqual({ state: 'ok', decision: 'approve', status: 'approved' });
  });

  it.each([
    [
      { ok: false, code: 'APPROVAL_FINGERPRINT_MISMATCH', message: 'the call changed' },
      'APPROVAL_FINGERPRINT_MISMATCH',
      'the call changed'
    ],
    [{ ok: false, code: null, message: 'refused' }, 'APPROVAL_ERROR', 'refused']
  ])('turns a refusal (%j) into an error verdict', async (reply, code, message) => {
    // Given a model showing request a, and a server that refuses the decision
    const item = request('a');
    const model = await polledModel(item);
    vi.mocked(postDecision).mockResolvedValue(reply);

    // When the person approves it
    const verdict = await model.decide(item, 'approve', '');

    // Then the verdict is an error with the server's code (APPROVAL_ERROR when it has none)
    expect(verdict).toEqual({ state: 'error', decision: 'approve', code, message });
    expect(model.verdict('k1/a')).toEqual(verdict);
  });

  it.each([
    [
      'an ApprovalsError',
      new ApprovalsError(409, 'APPROVAL_ALREADY_DECIDED', 'decided elsewhere'),
      'APPROVAL_ALREADY_DECIDED'
    ],
    [
      'a missing server extension',
      new ServerExtensionMissing('/jupyter-approvals/api/pending/k1/a', 404),
      'SERVER_EXTENSION_MISSING'
    ]
  ])('turns a failed post (%s) into an error verdict', async (_, error, code) => {
    // Given a model showing request a, and a post that fails
    const item = request('a');
    const model = await polledModel(item);
    vi.mocked(postDecision).mockRejectedValue(error);

    // When the person rejects it
    const verdict = await model.decide(item, 'reject', 'no');

    // Then the verdict is an error with the failure's code and message
    expect(verdict).toEqual({ state: 'error', decision: 'reject', code, message: error.message });
  });

  it('keeps the last decision after its item left the list, until it is cleared', async () => {
    // Given a decision for a being sent
    const item = request('a', { action: 'shell.run', summary: 'rm -rf build' });
    const model = await polledModel(item);
    const reply = deferred<IDecisionReply>();
    vi.mocked(postDecision).mockReturnValue(reply.promise);
    const last = record(model.lastDecisionChanged);
    const decided = model.decide(item, 'approve', '');

    // When a poll no longer lists a (it ended at once), and then the server answers
    server.pending = [];
    await refreshed(model);
    reply.resolve(approved);
    await decided;

    // Then a has no verdict any more, but the last decision holds what it was and how it ended
    expect(model.verdict('k1/a')).toBeUndefined();
    const expected = {
      action: 'shell.run',
      summary: 'rm -rf build',
      verdict: { state: 'ok', decision: 'approve', status: 'approved' }
    };
    expect(model.lastDecision).toEqual(expected);
    expect(last).toEqual([expected]);

    // And when the person dismisses it, it is forgotten, signalled once
    model.clearLastDecision();
    model.clearLastDecision();
    expect(model.lastDecision).toBeNull();
    expect(last).toEqual([expected, null]);
  });

  it('follows a decision made elsewhere, but not one made before it started', async () => {
    // Given a server whose latest decision was made before the sidebar started
    const before = {
      id: 'old',
      action: 'file.delete',
      summary: 'Delete old.csv',
      status: 'approved',
      channel: 'card',
      decided_at: '2024-05-01T11:00:00.000Z',
      kernel_id: 'k1'
    };
    server.extra = { last_decision: before };
    const model = await polledModel();
    const last = record(model.lastDecisionChanged);
    expect(model.lastDecision).toBeNull();

    // When a person rejects another request in its card, and the next poll names it
    server.extra = {
      last_decision: {
        ...before,
        id: 'new',
        summary: 'Delete new.csv',
        status: 'rejected',
        decided_at: '2024-05-01T12:00:01.000Z'
      }
    };
    await refreshed(model);
    await refreshed(model);

    // Then the last decision says so, and where it was made, once
    const expected = {
      action: 'file.delete',
      summary: 'Delete new.csv',
      verdict: { state: 'ok', decision: 'reject', status: 'rejected' },
      elsewhere: 'in the card'
    };
    expect(model.lastDecision).toEqual(expected);
    expect(last).toEqual([expected]);
  });

  it('does not repeat as news a decision this sidebar made', async () => {
    // Given a decision sent from this sidebar
    const item = request('a');
    server.extra = { last_decision: null };
    const model = await polledModel(item);
    vi.mocked(postDecision).mockResolvedValue(approved);
    await model.decide(item, 'approve', '');
    const last = record(model.lastDecisionChanged);

    // When the server names it as the latest decision
    server.extra = {
      last_decision: {
        id: 'a',
        action: item.action,
        summary: item.summary,
        status: 'approved',
        channel: 'sidebar',
        decided_at: '2024-05-01T12:00:02.000Z',
        kernel_id: 'k1'
      }
    };
    await refreshed(model);

    // Then the sidebar's own verdict stays, without a second note
    expect(last).toEqual([]);
    expect(model.lastDecision?.elsewhere).toBeUndefined();
  });

  it('polls at once when the server has answered a decision', async () => {
    // Given a model showing request a, whose next poll is a second away
    const item = request('a');
    const model = await polledModel(item);
    vi.mocked(postDecision).mockResolvedValue(approved);
    const changes = record(model.changed);

    // When the person approves it, and the server takes it off the list
    server.pending = [];
    await model.decide(item, 'approve', '');
    await vi.advanceTimersByTimeAsync(0);

    // Then the model asked again at once, and the request is gone
    expect(fetchPending).toHaveBeenCalledTimes(2);
    expect(changes).toEqual([{ added: [], removed: ['k1/a'], updated: [], reordered: false }]);
    expect(model.lastDecision?.verdict).toEqual({
      state: 'ok',
      decision: 'approve',
      status: 'approved'
    });
  });

  it('does not poll for a press that sent nothing', async () => {
    // Given a decision for a that is being sent
    const item = request('a');
    const model = await polledModel(item);
    const reply = deferred<IDecisionReply>();
    vi.mocked(postDecision).mockReturnValue(reply.promise);
    void model.decide(item, 'approve', '');

    // When the person presses again
    await model.decide(item, 'approve', '');
    await vi.advanceTimersByTimeAsync(0);

    // Then nothing more was asked of the server
    expect(fetchPending).toHaveBeenCalledTimes(1);
    reply.resolve(approved);
  });

  it('forgets the verdict of an item the server no longer lists', async () => {
    // Given an item that was approved
    const item = request('a');
    const model = await polledModel(item, request('b'));
    vi.mocked(postDecision).mockResolvedValue(approved);
    await model.decide(item, 'approve', '');
    expect(model.verdict('k1/a')?.state).toBe('ok');

    // When the next poll no longer lists it
    server.pending = [request('b')];
    await refreshed(model);

    // Then its verdict is gone
    expect(model.verdict('k1/a')).toBeUndefined();
  });
});

describe('agents', () => {
  const bot: IAgent = {
    name: 'bot',
    created_at: '2024-05-01T10:00:00Z',
    paused: false,
    pending: 1
  };

  it('polls the agents at once and every 5 s, emitting only changes', async () => {
    // Given a server with one agent
    server.agents = [bot];
    const model = newModel();
    const emitted = record(model.agentsChanged);

    // When the model starts, and almost 5 s pass
    model.start();
    await vi.advanceTimersByTimeAsync(4999);

    // Then it asked for the agents once, while it polled the list every second
    expect(fetchAgents).toHaveBeenCalledTimes(1);
    expect(fetchAgents).toHaveBeenCalledWith(SETTINGS);
    expect(fetchPending).toHaveBeenCalledTimes(5);
    // And asks again at 5 s, emitting nothing when they did not change
    await vi.advanceTimersByTimeAsync(1);
    expect(fetchAgents).toHaveBeenCalledTimes(2);
    expect(emitted).toEqual([[bot]]);
    expect(model.agents).toEqual([bot]);
  });

  it('keeps the pending list and the connection when the agents cannot be read', async () => {
    // Given a server whose `GET agents` fails
    vi.mocked(fetchAgents).mockRejectedValue(new ApprovalsError(500, 'APPROVAL_INTERNAL', 'x'));
    server.pending = [request('a')];
    const model = newModel();

    // When the model starts
    model.start();
    await vi.advanceTimersByTimeAsync(0);

    // Then the list is there and the connection ok
    expect(fetchAgents).toHaveBeenCalledTimes(1);
    expect(model.keys).toEqual(['k1/a']);
    expect(model.connection.state).toBe('ok');
    expect(model.agents).toEqual([]);
  });

  it('pauses an agent, then polls the agents and the list at once', async () => {
    // Given a started model that read the agents
    server.agents = [bot];
    const model = newModel();
    model.start();
    await vi.advanceTimersByTimeAsync(0);
    const emitted = record(model.agentsChanged);

    // When the person pauses the agent (its held requests end)
    server.agents = [{ ...bot, paused: true, pending: 0 }];
    await settled(model.setPaused('bot', true));

    // Then the pause is posted, and the agents and the list are read again at once
    expect(postPause).toHaveBeenCalledWith('bot', true, SETTINGS);
    expect(fetchAgents).toHaveBeenCalledTimes(2);
    expect(fetchPending).toHaveBeenCalledTimes(2);
    expect(emitted).toEqual([[{ ...bot, paused: true, pending: 0 }]]);
  });
});
