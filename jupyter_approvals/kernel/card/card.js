// View of the approval card (anywidget ES module).
// It only displays what the kernel synced, and sends back the decision together with what it
// displayed (the kernel compares that with its own record); every check happens in the kernel.

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function short(fp) {
  return fp.startsWith('sha256:') ? fp.slice(7, 19) : fp;
}

function timeLeft(iso) {
  const ms = iso ? Date.parse(iso) - Date.now() : NaN;
  if (Number.isNaN(ms)) return '';
  if (ms <= 0) return '0:00';
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

// The DOM event the sidebar listens for to open a preview in a main-area tab; the sidebar
// sets window[OPEN_PREVIEW_EVENT] = true once it listens.
const OPEN_PREVIEW_EVENT = 'jupyter-approvals:open-preview';

// How tall a preview is shown before the rest waits behind a button: with the card's header
// and its buttons, a card fits a notebook at 900 pixels high.
const PREVIEW_FOLD_PX = 480;

// A card still pending or approved this long after its deadline has not heard from a kernel
// (a kernel ends a request at its deadline and syncs that within seconds): it was restored
// from a notebook's saved widget state, or its kernel is gone. The margin is wide so that a
// browser clock running ahead of the kernel's never takes a live card's buttons away.
const UNHEARD_AFTER_MS = 10 * 60 * 1000;

function utcMinute(ms) {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function render({ model, el: root }) {
  const card = el('div', 'jpa-card');
  card.setAttribute('data-testid', 'jpa-card');
  card.dataset.requestId = model.get('request_id');
  // Focusable: the sidebar's keyboard commands approve or reject the card that has the focus.
  card.tabIndex = 0;
  root.appendChild(card);

  const header = el('div', 'jpa-header');
  const title = el('span', 'jpa-action');
  const clock = el('span', 'jpa-clock');
  const dismiss = el('button', 'jpa-dismiss', '×');
  dismiss.title = 'Close without deciding (nothing runs)';
  dismiss.setAttribute('aria-label', dismiss.title);
  header.append(title, clock, dismiss);

  const summary = el('div', 'jpa-summary');
  const origin = el('div', 'jpa-origin');
  origin.title =
    'Who ran the cell is the name its client sent with it; nothing checks it (name not verified).';

  const fpRow = el('div', 'jpa-fingerprint');
  const fpLabel = el('span', '', 'fingerprint ');
  const fpValue = el('code', 'jpa-fp');
  const fpToggle = el('button', 'jpa-link', 'show full');
  let fullShown = false;
  fpToggle.addEventListener('click', () => {
    fullShown = !fullShown;
    sync();
  });
  fpRow.append(fpLabel, fpValue, fpToggle);

  const details = el('details', 'jpa-preview');
  details.open = true;
  const detailsSummary = el('summary', '', 'Preview');
  // The structured preview (rendered by views/preview.js) when the request has one, with the
  // text form one click away; otherwise the text form.
  const body = el('div', 'jpa-preview-body');
  const textToggle = el('button', 'jpa-link jpa-text-toggle', 'show as text');
  let asText = false;
  textToggle.addEventListener('click', () => {
    asText = !asText;
    sync();
  });
  // Full size in a main-area tab: the card cannot reach JupyterLab's shell, so it asks the
  // sidebar through a DOM event (docs/protocol.md 4.1); without the sidebar nothing listens
  // and the button stays hidden.
  const fullSize = el('button', 'jpa-link jpa-full-size', 'open full size');
  fullSize.title = 'Open this preview in a tab of the main area';
  fullSize.addEventListener('click', () => {
    // It names the request; the sidebar shows its own row of it, as the server listed it.
    const detail = {
      request_id: model.get('request_id'),
      fingerprint: model.get('fingerprint')
    };
    window.dispatchEvent(new CustomEvent(OPEN_PREVIEW_EVENT, { detail }));
  });
  fullSize.style.display = window[OPEN_PREVIEW_EVENT] ? '' : 'none';
  const pre = el('pre');
  const omitted = el('div', 'jpa-omitted');
  // Both forms share one place that never scrolls on its own (views/preview.js foldTall).
  const shown = el('div', 'jpa-preview-shown');
  shown.append(body, pre);
  details.append(
    detailsSummary,
    fullSize,
    textToggle,
    shown,
    foldTall(shown, PREVIEW_FOLD_PX),
    omitted
  );
  let renderedDoc;
  let failedDoc = null;

  const actions = el('div', 'jpa-actions');
  const reason = el('input', 'jpa-reason');
  reason.placeholder = 'Reason (optional, shown to the caller if you reject)';
  reason.setAttribute('aria-label', 'Reason');
  const approve = el('button', 'jpa-approve', 'Approve');
  const reject = el('button', 'jpa-reject', 'Reject');
  // The reading floor: Approve and Reject wait until a person could have read the card, with
  // a countdown. The kernel refuses sooner answers on every path anyway; here nobody can run
  // into that dead end by clicking too soon.
  const readableAt = Date.now() + (model.get('min_answer_ms') || 0);
  const floor = el('span', 'jpa-floor');
  actions.append(reason, approve, reject, floor);

  const status = el('div', 'jpa-status');
  const notice = el('div', 'jpa-notice');
  const journal = el('div', 'jpa-journal-error');

  card.append(header, summary, origin, fpRow, details, actions, status, notice, journal);

  const SHOWN = [
    'action',
    'summary',
    'preview',
    'preview_omitted',
    'structured',
    'fingerprint',
    'function'
  ];

  // One decision per press. A double click would otherwise send a second decision while the
  // kernel answers the first; the kernel refuses it, and that refusal used to show as an error
  // notice on a card that was decided fine. The buttons come back when the kernel answers
  // (any synced change) or, if nothing changes (a repeated refusal), after a few seconds.
  let inFlight = null;
  function settle() {
    clearTimeout(inFlight);
    inFlight = null;
    const reading = Math.max(0, readableAt - Date.now());
    approve.disabled = reading > 0;
    reject.disabled = reading > 0;
    floor.textContent = reading > 0 ? `read first: ${Math.ceil(reading / 1000)} s` : '';
  }
  // Opens the buttons when the floor ends, unless a decision is already in flight: the
  // floor can end (on a tick) just before this fires, and a press in between must keep its
  // buttons off until the kernel answers.
  const opens = setTimeout(
    () => {
      if (inFlight === null) settle();
    },
    Math.max(0, readableAt - Date.now()) + 20
  );

  function decide(decision) {
    if (inFlight !== null) return;
    approve.disabled = true;
    reject.disabled = true;
    inFlight = setTimeout(settle, 3000);
    const shown = {};
    for (const name of SHOWN) shown[name] = model.get(name);
    model.send({
      op: 'decide',
      id: model.get('request_id'),
      decision,
      fingerprint: model.get('fingerprint'),
      reason: reason.value || '',
      shown
    });
  }
  approve.addEventListener('click', () => decide('approve'));
  reject.addEventListener('click', () => decide('reject'));
  dismiss.addEventListener('click', () => model.send({ op: 'dismiss' }));

  // The deadline, if the card has not heard from a kernel since well past it; else null.
  function unheardSince() {
    const state = model.get('state');
    const end = Date.parse(model.get('expires_at'));
    const over = (state === 'pending' || state === 'approved') && !Number.isNaN(end);
    return over && Date.now() - end > UNHEARD_AFTER_MS ? end : null;
  }
  let unheard = null;

  function sync() {
    settle();
    const state = model.get('state');
    const fp = model.get('fingerprint');
    unheard = unheardSince();
    card.dataset.state = unheard === null ? state : 'unheard';
    title.textContent = model.get('action');
    summary.textContent = model.get('summary');
    const fn = model.get('function');
    // "requested from notebook sales/clean.ipynb, cell [5], run by ana (name not verified)"
    origin.textContent = `${fn ? `runs ${fn}, ` : ''}${model.get('origin')}`;
    fpValue.textContent = fullShown ? fp : short(fp);
    fpToggle.textContent = fullShown ? 'show short' : 'show full';
    pre.textContent = model.get('preview') || '(no preview)';
    let doc = model.get('structured');
    if (doc !== renderedDoc) {
      let drawn = null;
      try {
        drawn = doc ? renderStructured(doc) : null;
      } catch (error) {
        // Not of the documented shape (code in a kernel can send a card anything):
        // the card shows the text form, and its buttons keep working.
        console.warn('jupyter-approvals: a structured preview that cannot be shown', error);
      }
      body.replaceChildren(...(drawn ? [drawn] : []));
      renderedDoc = doc;
      failedDoc = drawn || !doc ? null : doc;
    }
    if (doc === failedDoc) doc = null;
    textToggle.style.display = doc ? '' : 'none';
    textToggle.textContent = asText ? 'show structured' : 'show as text';
    body.style.display = doc && !asText ? '' : 'none';
    pre.style.display = doc && !asText ? 'none' : '';
    omitted.style.display = pre.style.display;
    const left = model.get('preview_omitted');
    omitted.textContent = left ? `… ${left} more characters left out of this preview` : '';
    const live = state === 'pending' && unheard === null;
    actions.style.display = live ? '' : 'none';
    dismiss.style.display = live ? '' : 'none';
    const why = model.get('reason');
    status.textContent =
      unheard !== null
        ? `No kernel answers for this card: it is a saved copy, or its kernel is gone. Its ` +
          `${state === 'pending' ? 'request' : 'approval'} ended at ${utcMinute(unheard)}; ` +
          'nothing runs from it. The History in the sidebar says how it ended.'
        : model.get('message') + (state === 'rejected' && why ? ` Reason: ${why}` : '');
    notice.textContent = model.get('notice');
    journal.textContent = model.get('journal_error');
    tick();
  }

  function tick() {
    if ((unheardSince() === null) !== (unheard === null)) {
      sync(); // it has just gone unheard: sync redraws the card and ticks
      return;
    }
    const state = model.get('state');
    // Say what the clock counts: the time to answer, then the time to use the approval.
    const counts = unheard === null && { pending: 'answer within', approved: 'use within' }[state];
    clock.textContent = counts ? `${counts} ${timeLeft(model.get('expires_at'))}` : '';
    if (inFlight === null) settle(); // the floor's countdown
  }

  model.on('change', sync);
  sync();
  const timer = setInterval(tick, 1000);
  return () => {
    clearInterval(timer);
    clearTimeout(inFlight);
    clearTimeout(opens);
    model.off('change', sync);
  };
}

export default { render };
