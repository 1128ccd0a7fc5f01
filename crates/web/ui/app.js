// dsh web: the browser UI of `dsh web`.
//
// A plain ES module with no build step and no dependencies. It lists sessions, opens one,
// streams its events over server-sent events and renders them incrementally; the composer
// sends messages, stops turns and answers approval questions. Everything the model or a tool
// wrote is untrusted: it only ever reaches the page through textContent / text nodes.
//
// Layout of this file:
//   1. Small helpers (DOM building, formatting)
//   2. The API client and the token banner
//   3. The session list (sidebar)
//   4. SessionView: one open session: its event stream, the batching of events per frame,
//      and the transcript renderer (steps, text blocks, tool cards, approvals, turn ends)
//   5. The composer and the page controller (selection, hash routing, start-up)

// ---------------------------------------------------------------------------------------
// 1. Helpers
// ---------------------------------------------------------------------------------------

/** Milliseconds of event application per animation frame before yielding to the browser. */
const FRAME_BUDGET_MS = 8;
/** How often the session list is refreshed. */
const LIST_REFRESH_MS = 5000;
/** Tool output longer than this (lines or characters) starts collapsed. */
const LONG_OUTPUT_LINES = 24;
const LONG_OUTPUT_CHARS = 4000;
/** Pixels from the bottom that still count as "at the bottom" for autoscroll. */
const STICK_SLACK_PX = 48;

const numberFormat = new Intl.NumberFormat('en-US');
const relativeFormat = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** The element with this id. */
function $(id) {
  return document.getElementById(id);
}

/**
 * Builds an element. `attrs` keys: `class`, `text` (textContent), `on<event>` (listener),
 * anything else becomes an attribute (true → empty attribute, false/null/undefined → none).
 * Children may be nodes or strings (added as text nodes, never parsed as HTML).
 */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return el;
}

/** Sets an element's text only when it changed (avoids needless style/layout work). */
function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** A session id without its `session-` prefix, cut to 8 characters. */
function shortId(id) {
  return String(id).replace(/^session-/, '').slice(0, 8);
}

/** "5 minutes ago" style time for a millisecond timestamp. */
function relativeTime(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  const seconds = Math.round((ms - Date.now()) / 1000);
  const units = [['year', 31536000], ['month', 2592000], ['day', 86400], ['hour', 3600], ['minute', 60]];
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return relativeFormat.format(Math.round(seconds / size), unit);
  }
  return relativeFormat.format(seconds, 'second');
}

/** The text blocks of a message's content, joined; other blocks become a short tag. */
function messageText(content) {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  return content
    .map((block) => {
      if (!block || typeof block !== 'object') return '';
      if (block.type === 'text') return String(block.text ?? '');
      if (block.type === 'image') return '[image]';
      return '';
    })
    .filter((text) => text !== '')
    .join('\n');
}

/** Parses a tool call's JSON arguments; null when they are not a JSON object. */
function parseArguments(raw) {
  if (raw && typeof raw === 'object') return raw;
  try {
    const value = JSON.parse(String(raw ?? ''));
    return value && typeof value === 'object' ? value : null;
  } catch {
    return null;
  }
}

/**
 * The exit status a bash result ends with: its final marker lines (`[exit code: N]`,
 * `[timed out after Nms]`, `[killed by signal: X]`); no marker and no error is exit 0.
 */
function exitStatus(text, isError) {
  const lines = String(text).replace(/\n+$/, '').split('\n');
  const markers = [];
  for (let i = lines.length - 1; i >= 0 && /^\[[^\]\n]*\]$/.test(lines[i]); i--) markers.unshift(lines[i]);
  const timedOut = markers.find((line) => /^\[timed out after \d+ms\]$/.test(line));
  if (timedOut) return { label: timedOut.slice(1, -1), ok: false };
  const signal = markers.find((line) => line.startsWith('[killed by signal: '));
  if (signal) return { label: signal.slice(1, -1), ok: false };
  const code = markers.map((line) => /^\[exit code: (-?\d+|null)\]$/.exec(line)).find(Boolean);
  if (code) return { label: code[1] === 'null' ? 'no exit code' : `exit ${code[1]}`, ok: false };
  if (isError) return { label: 'error', ok: false };
  return { label: 'exit 0', ok: true };
}

/** Readable text for a turn/end reason object. */
function turnEndText(reason) {
  const kind = reason?.kind ?? 'unknown';
  switch (kind) {
    case 'completed':
      return 'Turn complete';
    case 'aborted': {
      const cause = reason.reason ?? reason.cause ?? {};
      const causeKind = typeof cause === 'string' ? cause : cause.kind;
      if (causeKind === 'user') return 'Stopped by you';
      if (causeKind === 'parent') return 'Stopped by the parent agent';
      if (causeKind === 'disposed') return 'Stopped: the agent was closed';
      if (causeKind === 'hook') return `Stopped by a hook${cause.reason ? `: ${cause.reason}` : ''}`;
      return 'Stopped';
    }
    case 'error': {
      const failure = reason.error ?? reason.failure ?? {};
      const code = failure.code ?? 'UNKNOWN';
      return `Error ${code}: ${failure.message ?? 'the model call failed'}`;
    }
    case 'max-tokens':
      return 'Stopped: the reply hit the token limit';
    case 'blocked':
      return 'Blocked by a policy';
    case 'interrupted':
      return 'Interrupted: dsh stopped during this turn';
    default:
      return `Turn ended (${kind})`;
  }
}

/** Readable text for an approval outcome. */
function outcomeText(outcome) {
  switch (outcome) {
    case 'allowed-once':
      return 'Allowed once';
    case 'rejected':
      return 'Rejected';
    case 'cancelled':
      return 'Cancelled';
    case 'unavailable':
      return 'No one could answer';
    case 'expired':
      return 'No longer pending';
    default:
      return String(outcome);
  }
}

// ---------------------------------------------------------------------------------------
// 2. API client and token banner
// ---------------------------------------------------------------------------------------

/** An API failure: HTTP status (0 for a network error) and the server's message. */
class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Calls the JSON API. Same-origin fetch: the token cookie and (for POSTs) the Origin header
 * ride along. Throws ApiError; a 403 about the token also shows the banner.
 */
async function api(method, path, body) {
  const init = { method, headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, `cannot reach dsh web (${error.message})`);
  }
  const raw = await response.text();
  let data = null;
  try {
    data = raw ? JSON.parse(raw) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const message = (data && typeof data.error === 'string' && data.error) || `${response.status} ${response.statusText}`;
    if (response.status === 403 && /token/i.test(message)) showTokenBanner(message);
    throw new ApiError(response.status, message);
  }
  hideTokenBanner();
  return data;
}

/** Shows the banner telling the user to open the URL `dsh web` printed. */
function showTokenBanner(detail) {
  const banner = $('banner');
  banner.replaceChildren(
    h('strong', { text: 'This page is not signed in to this dsh web launch. ' }),
    'Open the URL that ',
    h('code', { text: 'dsh web' }),
    ' printed in your terminal: it carries this launch\u2019s token. ',
    h('span', { class: 'banner-detail', text: `(${detail})` }),
  );
  banner.hidden = false;
}

/** Hides the token banner once a call succeeds. */
function hideTokenBanner() {
  $('banner').hidden = true;
}

// ---------------------------------------------------------------------------------------
// 3. Session list
// ---------------------------------------------------------------------------------------

const app = {
  /** The last list from the server, newest first. */
  sessions: [],
  /** Whether a list has been loaded at least once. */
  sessionsLoaded: false,
  /** Session id → title seen in its events (the list has no titles). */
  titles: new Map(),
  /** Session id → its <li> in the sidebar. */
  items: new Map(),
  /** The open session, or null. */
  view: null,
  /** A send or create is in flight. */
  sending: false,
};

/** Fetches the session list and updates the sidebar; returns the list (or null on error). */
async function refreshSessions() {
  try {
    const data = await api('GET', '/api/sessions');
    app.sessions = Array.isArray(data?.sessions) ? data.sessions : [];
    app.sessionsLoaded = true;
    renderSessionList();
    return app.sessions;
  } catch (error) {
    console.warn('dsh: listing sessions failed:', error.message);
    return null;
  }
}

/** The list entry of a session id, if listed. */
function listedSession(id) {
  return app.sessions.find((session) => session.id === id) ?? null;
}

/** The badge word for a listed status. */
function statusWord(status) {
  return status === 'running' || status === 'idle' ? status : 'stored';
}

/** Updates the sidebar in place: one <li> per session, reordered and patched, never rebuilt. */
function renderSessionList() {
  const list = $('session-list');
  const seen = new Set();
  app.sessions.forEach((session, index) => {
    seen.add(session.id);
    let item = app.items.get(session.id);
    if (!item) {
      item = createSessionItem(session.id);
      app.items.set(session.id, item);
    }
    updateSessionItem(item, session);
    if (list.children[index] !== item) list.insertBefore(item, list.children[index] ?? null);
  });
  for (const [id, item] of app.items) {
    if (!seen.has(id)) {
      item.remove();
      app.items.delete(id);
    }
  }
  $('session-list-empty').hidden = !app.sessionsLoaded || app.sessions.length > 0;
}

/** Creates the sidebar entry of one session. */
function createSessionItem(id) {
  const button = h(
    'button',
    { type: 'button', class: 'session-link', onclick: () => selectSession(id) },
    h('span', { class: 'session-item-title' }),
    h('span', { class: 'badge', 'data-testid': 'session-item-status' }),
    h('span', { class: 'session-item-cwd' }),
    h('span', { class: 'session-item-time' }),
  );
  return h('li', { class: 'session-item', 'data-testid': 'session-item', 'data-session-id': id }, button);
}

/** Patches one sidebar entry with the session's current facts. */
function updateSessionItem(item, session) {
  const word = statusWord(session.status);
  const title = app.titles.get(session.id) ?? shortId(session.id);
  setText(item.querySelector('.session-item-title'), title);
  const badge = item.querySelector('.badge');
  setText(badge, word);
  badge.dataset.status = word;
  item.dataset.status = word;
  const cwd = item.querySelector('.session-item-cwd');
  setText(cwd, session.cwd ?? '');
  cwd.title = session.cwd ?? '';
  const time = item.querySelector('.session-item-time');
  setText(time, relativeTime(session.createdAt));
  time.title = typeof session.createdAt === 'number' ? new Date(session.createdAt).toLocaleString() : '';
  item.querySelector('.session-link').title = session.id;
  const current = app.view?.id === session.id;
  item.classList.toggle('current', current);
  if (current) item.setAttribute('aria-current', 'true');
  else item.removeAttribute('aria-current');
}

/** Refreshes the title shown in a sidebar entry. */
function updateSessionItemTitle(id) {
  const item = app.items.get(id);
  const session = listedSession(id);
  if (item && session) updateSessionItem(item, session);
}

// ---------------------------------------------------------------------------------------
// 4. SessionView: stream, batching and transcript rendering of one session
// ---------------------------------------------------------------------------------------

/** One streamed text or reasoning block of an assistant step. */
class TextBlock {
  /** Creates the block's DOM: a text div, or a <details> "Thinking" for reasoning. */
  constructor(type) {
    this.type = type;
    this.text = '';
    this.pending = '';
    this.node = document.createTextNode('');
    if (type === 'reasoning') {
      this.summary = h('summary', { text: 'Thinking\u2026' });
      this.el = h(
        'details',
        { class: 'reasoning streaming', 'data-testid': 'reasoning', open: true },
        this.summary,
        h('div', { class: 'reasoning-text' }, this.node),
      );
    } else {
      this.el = h('div', { class: 'assistant-text', 'data-testid': 'assistant-text' }, this.node);
    }
    this.done = false;
  }

  /** Queues streamed text; written to the DOM by flushText (once per frame). */
  append(text) {
    this.pending += text;
  }

  /** Writes the queued text with one text-node update. */
  flushText() {
    if (!this.pending) return;
    this.node.appendData(this.pending);
    this.text += this.pending;
    this.pending = '';
  }

  /** Replaces the whole text (the final message is the truth). */
  setText(text) {
    this.pending = '';
    if (this.text !== text) {
      this.text = text;
      this.node.data = text;
    }
  }

  /** Marks the block complete: reasoning collapses. */
  finish() {
    if (this.done) return;
    this.done = true;
    if (this.type === 'reasoning') {
      this.el.open = false;
      this.el.classList.remove('streaming');
      this.summary.textContent = 'Thinking';
    }
  }
}

/** A tool call's card: name, arguments (bash: command and description), output, exit. */
class ToolCard {
  /** Creates an empty card for a call id. */
  constructor(callId, name, seq) {
    this.callId = callId;
    this.name = name || 'tool';
    this.hasResult = false;
    this.nameEl = h('span', { class: 'tool-name', 'data-testid': 'tool-name', text: this.name });
    this.descEl = h('span', { class: 'tool-desc', 'data-testid': 'tool-description' });
    this.exitEl = h('span', { class: 'tool-exit pending', 'data-testid': 'tool-exit', text: 'running\u2026' });
    this.argsEl = h('div', { class: 'tool-args' });
    this.resultEl = h('div', { class: 'tool-result' });
    this.approvalsEl = h('div', { class: 'tool-approvals' });
    this.el = h(
      'div',
      { class: 'tool-card', 'data-testid': 'tool-card', 'data-call-id': callId, 'data-seq': seq },
      h('div', { class: 'tool-head' }, this.nameEl, this.descEl, this.exitEl),
      this.argsEl,
      this.approvalsEl,
      this.resultEl,
    );
  }

  /** Sets the tool name (known from the first stream fragment or the tool/call event). */
  setName(name) {
    if (!name || name === this.name) return;
    this.name = name;
    setText(this.nameEl, name);
  }

  /** Shows the call's arguments: bash gets `$ command` and its description; others JSON. */
  setArguments(raw) {
    if (raw === this.rawArguments) return;
    this.rawArguments = raw;
    const args = parseArguments(raw);
    if (this.name === 'bash' && args && typeof args.command === 'string') {
      setText(this.descEl, typeof args.description === 'string' ? args.description : '');
      const extras = [];
      if (args.workdir) extras.push(`in ${args.workdir}`);
      if (args.run_in_background) extras.push('in the background');
      if (args.sandbox_permissions) extras.push(`asks for ${args.sandbox_permissions}`);
      const parts = [
        h('pre', { class: 'tool-command' }, h('span', { class: 'prompt', text: '$ ' }), h('code', { 'data-testid': 'tool-command', text: args.command })),
      ];
      if (extras.length) parts.push(h('div', { class: 'tool-extras muted', text: extras.join(' · ') }));
      if (typeof args.justification === 'string') parts.push(h('div', { class: 'tool-extras muted', text: `Why: ${args.justification}` }));
      this.argsEl.replaceChildren(...parts);
    } else {
      setText(this.descEl, typeof args?.description === 'string' ? args.description : '');
      const pretty = args ? JSON.stringify(args, null, 2) : String(raw ?? '');
      this.argsEl.replaceChildren(
        h('details', { class: 'tool-json' }, h('summary', { text: 'Arguments' }), h('pre', { 'data-testid': 'tool-arguments', text: pretty })),
      );
    }
  }

  /** Shows the result: output (collapsed when long) and the exit status. */
  setResult(text, isError, error) {
    this.hasResult = true;
    const status = this.name === 'bash' ? exitStatus(text, isError) : { label: isError ? 'error' : 'ok', ok: !isError };
    if (error && typeof error.code === 'string') status.label += ` (${error.code})`;
    setText(this.exitEl, status.label);
    this.exitEl.className = `tool-exit ${status.ok ? 'ok' : 'failed'}`;
    this.el.classList.toggle('failed', !status.ok);
    const output = h('pre', { class: 'tool-output', 'data-testid': 'tool-output', text: text });
    const lines = text.split('\n').length;
    if (lines > LONG_OUTPUT_LINES || text.length > LONG_OUTPUT_CHARS) {
      this.resultEl.replaceChildren(h('details', { class: 'tool-long' }, h('summary', { text: `Output (${numberFormat.format(lines)} lines)` }), output));
    } else {
      this.resultEl.replaceChildren(output);
    }
  }

  /** Marks a call that never got a result before its turn ended. */
  markUnfinished() {
    if (this.hasResult) return;
    setText(this.exitEl, 'no result');
    this.exitEl.className = 'tool-exit failed';
  }
}

/** An approval question: the reason, then buttons while pending, then the outcome. */
class ApprovalPrompt {
  /** Creates the prompt; `answer(outcome)` posts the user's choice. */
  constructor(data, seq, answer) {
    this.id = String(data.id);
    this.pending = true;
    this.answer = answer;
    this.allow = h('button', { type: 'button', class: 'primary', 'data-testid': 'approval-allow', text: 'Allow once', onclick: () => this.choose('allowed-once') });
    this.reject = h('button', { type: 'button', class: 'danger', 'data-testid': 'approval-reject', text: 'Reject', onclick: () => this.choose('rejected') });
    this.actions = h('div', { class: 'approval-actions' }, this.allow, this.reject);
    this.errorEl = h('div', { class: 'approval-error', hidden: true });
    this.tool = data.toolName ? `\u201c${data.toolName}\u201d` : 'A tool';
    this.titleEl = h('div', { class: 'approval-title', text: `${this.tool} needs your approval` });
    this.el = h(
      'div',
      { class: 'approval pending', 'data-testid': 'approval', 'data-approval-id': this.id, 'data-seq': seq, role: 'group', 'aria-label': 'Approval needed' },
      this.titleEl,
      data.reason ? h('div', { class: 'approval-reason', 'data-testid': 'approval-reason', text: String(data.reason) }) : null,
      this.actions,
      this.errorEl,
    );
  }

  /** Posts a choice; buttons stay disabled until the decided event (or an error). */
  async choose(outcome) {
    if (!this.pending) return;
    this.allow.disabled = true;
    this.reject.disabled = true;
    this.errorEl.hidden = true;
    try {
      await this.answer(this.id, outcome);
    } catch (error) {
      if (error.status === 404) {
        this.decide('expired');
        return;
      }
      this.errorEl.textContent = `Could not answer: ${error.message}`;
      this.errorEl.hidden = false;
      this.allow.disabled = false;
      this.reject.disabled = false;
    }
  }

  /** Replaces the buttons with the outcome. */
  decide(outcome) {
    if (!this.pending && this.outcome === outcome) return;
    this.pending = false;
    this.outcome = outcome;
    this.el.classList.remove('pending');
    this.el.dataset.outcome = outcome;
    this.titleEl.textContent = `${this.tool} asked for approval`;
    this.actions.replaceWith(h('div', { class: `approval-outcome ${outcome}`, 'data-testid': 'approval-outcome', text: outcomeText(outcome) }));
    this.actions = this.el.querySelector('.approval-outcome');
    this.errorEl.hidden = true;
  }
}

/** One open session: its stream, its event queue and the transcript it renders. */
class SessionView {
  /** Prepares an empty view for `id`; `live` says whether it can stream now. */
  constructor(id, live) {
    this.id = id;
    this.live = live;
    this.closed = false;
    // Stream and batching.
    this.source = null;
    this.queue = [];
    this.queueHead = 0;
    this.lastSeq = -1;
    this.lastReceived = -1;
    this.flushScheduled = false;
    this.retryTimer = 0;
    this.retryDelay = 1000;
    this.connection = 'connecting';
    // Transcript state.
    this.running = false;
    this.turn = null;
    this.step = null;
    this.steps = new Map();
    this.cards = new Map();
    this.latestCards = new Map();
    this.approvals = new Map();
    this.dirtyBlocks = new Set();
    this.openBlocks = new Set();
    this.openCards = new Set();
    this.usage = { input: 0, output: 0, cached: 0 };
    this.title = app.titles.get(id) ?? null;
    this.list = $('transcript-items');
    this.stick = true;
    this.unseen = false;
    this.lastScrollTop = 0;
    this.lastAppliedAt = 0;
    window.__dsh = { applied: [], sessionId: id };
  }

  // --- Stream --------------------------------------------------------------------------

  /** Opens the event stream after the last event received. */
  connect() {
    if (this.closed || this.source) return;
    clearTimeout(this.retryTimer);
    const from = this.lastReceived + 1;
    const source = new EventSource(`/api/sessions/${encodeURIComponent(this.id)}/events?from=${from}`);
    this.source = source;
    source.addEventListener('open', () => {
      if (this.source !== source) return;
      this.retryDelay = 1000;
      this.setConnection('connected');
    });
    source.addEventListener('session-event', (event) => {
      if (this.source !== source) return;
      const seq = event.lastEventId === '' ? NaN : Number(event.lastEventId);
      if (Number.isFinite(seq) && seq > this.lastReceived) this.lastReceived = seq;
      this.queue.push(event.data);
      this.scheduleFlush();
    });
    source.addEventListener('error', () => {
      if (this.source !== source) return;
      if (source.readyState === EventSource.CONNECTING) {
        // The browser reconnects by itself with Last-Event-ID.
        this.setConnection('reconnecting');
        return;
      }
      // Closed: the server refused (not live, bad token) or answered something else.
      source.close();
      this.source = null;
      this.setConnection('reconnecting');
      this.retryTimer = setTimeout(() => this.recover(), this.retryDelay);
      this.retryDelay = Math.min(this.retryDelay * 2, 15000);
    });
  }

  /** After a refused stream: finds out why (token, stored session) and reconnects if it can. */
  async recover() {
    if (this.closed) return;
    const sessions = await refreshSessions();
    if (this.closed) return;
    if (sessions) {
      const session = listedSession(this.id);
      if (!session || session.status === null || session.status === undefined) {
        this.live = false;
        this.running = false;
        this.setConnection('disconnected');
        this.updateChrome();
        return;
      }
    }
    this.connect();
    if (!this.source) this.setConnection('reconnecting');
  }

  /** Shows the connection state in the header. */
  setConnection(state) {
    this.connection = state;
    if (app.view !== this) return;
    const el = $('connection');
    el.hidden = false;
    setText(el, state);
    el.dataset.state = state;
  }

  /** Stops streaming and forgets the view (another session is opened). */
  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    if (this.source) this.source.close();
    this.source = null;
    this.queue = [];
  }

  // --- Batching ------------------------------------------------------------------------

  /** Applies the queue on the next animation frame (a timer covers hidden tabs). */
  scheduleFlush() {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    let frame = 0;
    let timer = 0;
    const run = () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
      if (!this.flushScheduled) return;
      this.flushScheduled = false;
      this.flush();
    };
    frame = requestAnimationFrame(run);
    timer = setTimeout(run, 250);
  }

  /** Applies queued events for up to one frame's budget, then updates text and chrome once. */
  flush() {
    if (this.closed) return;
    const deadline = performance.now() + FRAME_BUDGET_MS;
    let count = 0;
    while (this.queueHead < this.queue.length) {
      const raw = this.queue[this.queueHead];
      this.queue[this.queueHead++] = undefined;
      this.applyRaw(raw);
      if (++count % 32 === 0 && performance.now() > deadline) break;
    }
    if (this.queueHead >= this.queue.length) {
      this.queue = [];
      this.queueHead = 0;
    } else if (this.queueHead > 4096) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
    for (const block of this.dirtyBlocks) block.flushText();
    this.dirtyBlocks.clear();
    this.updateChrome();
    if (count > 0) this.lastAppliedAt = performance.now();
    this.followBottom(count > 0);
    if (this.queue.length > this.queueHead) this.scheduleFlush();
  }

  /** Parses one event, drops duplicates (seq not after the last applied) and applies it. */
  applyRaw(raw) {
    let event;
    try {
      event = JSON.parse(raw);
    } catch {
      console.warn('dsh: an event that is not JSON was skipped');
      return;
    }
    const seq = event?.seq;
    if (typeof seq !== 'number' || seq <= this.lastSeq) return;
    this.lastSeq = seq;
    window.__dsh.applied.push(seq);
    try {
      this.apply(event);
    } catch (error) {
      console.error(`dsh: rendering event ${seq} (${event.type}) failed:`, error);
    }
  }

  /** Dispatches one event to its renderer. */
  apply(event) {
    const data = event.data ?? {};
    switch (event.type) {
      case 'turn/start':
        return this.onTurnStart(event, data);
      case 'step/start':
        this.step = data.step ?? null;
        if (data.turn !== undefined) this.turn = data.turn;
        return;
      case 'step/end':
        return this.finishStep(data.turn, data.step);
      case 'user/message':
        return this.onUserMessage(event, data);
      case 'assistant/chunk':
        return this.onChunk(event, data);
      case 'assistant/message':
        return this.onAssistantMessage(event, data);
      case 'tool/call':
        return this.onToolCall(event, data);
      case 'tool/result':
        return this.onToolResult(event, data);
      case 'approval/asked':
        return this.onApprovalAsked(event, data);
      case 'approval/decided':
        return this.approvals.get(String(data.id))?.decide(data.outcome);
      case 'turn/end':
        return this.onTurnEnd(event, data);
      case 'llm/retry':
        return this.onRetry(event, data);
      case 'session/title':
        return this.onTitle(data);
      default:
        return undefined;
    }
  }

  // --- Transcript items ----------------------------------------------------------------

  /** Appends a transcript item tagged with its first event's seq (and turn when known). */
  addItem(el, seq, turn = this.turn) {
    el.classList.add('item');
    el.dataset.seq = String(seq);
    if (turn !== null && turn !== undefined) el.dataset.turn = String(turn);
    this.list.append(el);
    if (!this.stick) this.unseen = true;
    return el;
  }

  /** The container of one assistant step, created on its first content. */
  stepView(turn, step, seq) {
    const key = `${turn}:${step}`;
    let view = this.steps.get(key);
    if (!view) {
      const blocksEl = h('div', { class: 'step-blocks' });
      const toolsEl = h('div', { class: 'step-tools' });
      const el = h('div', { class: 'step', 'data-testid': 'assistant-step', 'data-step': step ?? '' }, blocksEl, toolsEl);
      this.addItem(el, seq, turn);
      view = { el, blocksEl, toolsEl, blocks: [], byIndex: new Map(), toolIndex: new Map() };
      this.steps.set(key, view);
    }
    return view;
  }

  /** Adds a text or reasoning block to a step. */
  addBlock(step, type) {
    const block = new TextBlock(type);
    step.blocks.push(block);
    step.blocksEl.append(block.el);
    this.openBlocks.add(block);
    return block;
  }

  /** Collapses a step's reasoning and writes out its queued text. */
  finishStep(turn, stepNumber) {
    const step = this.steps.get(`${turn}:${stepNumber}`);
    if (!step) return;
    for (const block of step.blocks) this.finishBlock(block);
  }

  /** Writes out a block's queued text and marks it complete. */
  finishBlock(block) {
    block.flushText();
    block.finish();
    this.dirtyBlocks.delete(block);
    this.openBlocks.delete(block);
  }

  /**
   * The card of a call in a step, created (in its step, or standalone) when first seen. Cards
   * are keyed by turn, step and call id: providers (and test fakes) may reuse call ids.
   */
  toolCard(callId, name, seq, turn, stepNumber) {
    const key = `${turn}:${stepNumber}:${callId}`;
    let card = this.cards.get(key);
    if (card) {
      card.setName(name);
      return card;
    }
    card = new ToolCard(callId, name, seq);
    this.cards.set(key, card);
    this.latestCards.set(callId, card);
    this.openCards.add(card);
    if (turn !== undefined && turn !== null && stepNumber !== undefined && stepNumber !== null) {
      this.stepView(turn, stepNumber, seq).toolsEl.append(card.el);
      if (!this.stick) this.unseen = true;
    } else {
      this.addItem(card.el, seq);
      card.el.classList.add('standalone');
    }
    return card;
  }

  /** turn/start: the turn is running (Stop enabled, Send steers). */
  onTurnStart(event, data) {
    this.running = true;
    this.turn = data.turn ?? null;
    this.step = null;
  }

  /** user/message: the user's words as a bubble; plugin notes collapsed; snapshots hidden. */
  onUserMessage(event, data) {
    const source = data.source ?? {};
    const text = messageText(data.content);
    if (source.kind === 'user') {
      this.addItem(h('div', { class: 'user-message', 'data-testid': 'user-message' }, h('div', { class: 'bubble', text })), event.seq);
      return;
    }
    // Runtime-context snapshots repeat every step; they are for the model only.
    if (source.form === 'snapshot' || text.startsWith('Current runtime context.')) return;
    const who = source.plugin ? String(source.plugin) : String(source.kind ?? 'note');
    const summary = typeof source.summary === 'string' ? source.summary : `Note from ${who}`;
    this.addItem(
      h('details', { class: 'note', 'data-testid': 'note' }, h('summary', { text: summary }), h('pre', { class: 'note-text', text })),
      event.seq,
    );
  }

  /** assistant/chunk: streams text and reasoning, tracks tool-call blocks, sums usage. */
  onChunk(event, data) {
    const chunk = data.chunk ?? {};
    switch (chunk.type) {
      case 'block-start': {
        const step = this.stepView(data.turn, data.step, event.seq);
        if (chunk.blockType === 'text' || chunk.blockType === 'reasoning') {
          step.byIndex.set(chunk.index, this.addBlock(step, chunk.blockType));
        }
        return;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const step = this.stepView(data.turn, data.step, event.seq);
        let block = step.byIndex.get(chunk.index);
        if (!block) {
          block = this.addBlock(step, chunk.type === 'text-delta' ? 'text' : 'reasoning');
          step.byIndex.set(chunk.index, block);
        }
        block.append(String(chunk.text ?? ''));
        this.dirtyBlocks.add(block);
        return;
      }
      case 'tool-call-delta': {
        const step = this.stepView(data.turn, data.step, event.seq);
        const callId = chunk.id ?? step.toolIndex.get(chunk.index);
        if (!callId) return;
        step.toolIndex.set(chunk.index, callId);
        this.toolCard(String(callId), chunk.name, event.seq, data.turn, data.step);
        return;
      }
      case 'block-end': {
        const step = this.stepView(data.turn, data.step, event.seq);
        const block = chunk.block ?? {};
        const streamed = step.byIndex.get(chunk.index);
        if (streamed && typeof block.text === 'string') {
          streamed.setText(block.text);
          this.finishBlock(streamed);
        } else if (block.type === 'tool-call' && block.id) {
          this.toolCard(String(block.id), block.name, event.seq, data.turn, data.step).setArguments(block.arguments);
        }
        return;
      }
      case 'usage': {
        const usage = chunk.usage ?? {};
        this.usage.input += Number(usage.inputTokens) || 0;
        this.usage.output += Number(usage.outputTokens) || 0;
        this.usage.cached += Number(usage.cacheReadTokens) || 0;
        return;
      }
      default:
        return;
    }
  }

  /** assistant/message: the step's final content replaces what was streamed. */
  onAssistantMessage(event, data) {
    const content = Array.isArray(data.message?.content) ? data.message.content : [];
    const finals = content.filter((block) => block?.type === 'text' || block?.type === 'reasoning');
    const tools = content.filter((block) => block?.type === 'tool-call');
    if (!finals.length && !tools.length && !this.steps.has(`${data.turn}:${data.step}`)) return;
    const step = this.stepView(data.turn, data.step, event.seq);
    const streamed = step.blocks;
    const same = streamed.length === finals.length && streamed.every((block, i) => block.type === finals[i].type);
    if (same) {
      streamed.forEach((block, i) => block.setText(String(finals[i].text ?? '')));
    } else {
      for (const block of streamed) {
        this.finishBlock(block);
        block.el.remove();
      }
      step.blocks = [];
      step.byIndex.clear();
      for (const final of finals) this.addBlock(step, final.type).setText(String(final.text ?? ''));
    }
    for (const block of step.blocks) this.finishBlock(block);
    for (const call of tools) {
      if (call.id) this.toolCard(String(call.id), call.name, event.seq, data.turn, data.step).setArguments(call.arguments);
    }
    if (data.interrupted) step.el.classList.add('interrupted');
  }

  /** tool/call: the card gets its name and full arguments. */
  onToolCall(event, data) {
    if (!data.callId) return;
    this.toolCard(String(data.callId), data.name, event.seq, data.turn, data.step).setArguments(data.arguments);
  }

  /** tool/result: output and exit status on the matching card. */
  onToolResult(event, data) {
    const message = data.message ?? {};
    const results = Array.isArray(message.content) ? message.content.filter((block) => block?.type === 'tool-result') : [];
    for (const result of results) {
      const callId = String(result.toolCallId ?? message.source?.callId ?? '');
      if (!callId) continue;
      const card = this.toolCard(callId, undefined, event.seq, data.turn, data.step);
      card.setResult(messageText(result.content), Boolean(result.isError), data.error);
      this.openCards.delete(card);
    }
  }

  /** approval/asked: a prompt on the call's card (or standalone) with Allow / Reject. */
  onApprovalAsked(event, data) {
    if (data.id === undefined || data.id === null) return;
    const id = String(data.id);
    if (this.approvals.has(id)) return;
    const prompt = new ApprovalPrompt(data, event.seq, (approvalId, outcome) => this.answerApproval(approvalId, outcome));
    this.approvals.set(id, prompt);
    if (data.callId) {
      // The question has no step: it belongs to the running step's call, else the latest
      // call with that id.
      const callId = String(data.callId);
      const card = this.cards.get(`${this.turn}:${this.step}:${callId}`) ?? this.latestCards.get(callId) ?? this.toolCard(callId, data.toolName, event.seq, this.turn, this.step);
      card.approvalsEl.append(prompt.el);
      if (!this.stick) this.unseen = true;
    } else {
      this.addItem(prompt.el, event.seq);
    }
  }

  /** Posts an approval answer; the decided event then updates the prompt. */
  async answerApproval(approvalId, outcome) {
    const path = `/api/agents/${encodeURIComponent(this.id)}/approvals/${encodeURIComponent(approvalId)}`;
    const data = await api('POST', path, { outcome });
    this.approvals.get(approvalId)?.decide(data?.outcome ?? outcome);
  }

  /** turn/end: the marker with its reason; the turn's open questions and blocks close. */
  onTurnEnd(event, data) {
    const reason = data.reason && typeof data.reason === 'object' ? data.reason : { kind: String(data.reason ?? 'unknown') };
    const kind = String(reason.kind ?? 'unknown');
    for (const prompt of this.approvals.values()) if (prompt.pending) prompt.decide('expired');
    for (const block of this.openBlocks) this.finishBlock(block);
    for (const card of this.openCards) card.markUnfinished();
    this.openCards.clear();
    const marker = h(
      'div',
      { class: `turn-end ${kind}`, 'data-testid': 'turn-end', 'data-reason': kind, role: 'status' },
      h('span', { class: 'turn-end-text', text: turnEndText(reason) }),
    );
    this.addItem(marker, event.seq, data.turn ?? this.turn);
    this.running = false;
    this.step = null;
  }

  /** llm/retry: a small notice that the model call is retried. */
  onRetry(event, data) {
    const delay = Number(data.delayMs);
    const wait = Number.isFinite(delay) ? ` in ${(delay / 1000).toFixed(delay < 10000 ? 1 : 0)} s` : '';
    const count = data.maxRetries ? `${data.retry} of ${data.maxRetries}` : String(data.retry ?? '');
    const why = data.failure?.message ? `: ${data.failure.code ? `${data.failure.code} ` : ''}${data.failure.message}` : '';
    this.addItem(h('div', { class: 'notice', 'data-testid': 'retry', text: `Retrying the model call (${count})${wait}${why}` }), event.seq);
  }

  /** session/title: the header and the sidebar show it. */
  onTitle(data) {
    if (typeof data.title !== 'string' || !data.title.trim()) return;
    this.title = data.title;
    app.titles.set(this.id, data.title);
    updateSessionItemTitle(this.id);
  }

  // --- Header, composer state and scrolling --------------------------------------------

  /** Updates title, status, usage, Stop and the working indicator (once per frame). */
  updateChrome() {
    if (app.view !== this) return;
    setText($('session-title'), this.title ?? shortId(this.id));
    const pending = [...this.approvals.values()].some((prompt) => prompt.pending);
    const status = !this.live ? 'stored' : pending ? 'waiting' : this.running ? 'running' : 'idle';
    const badge = $('session-status');
    badge.hidden = false;
    setText(badge, status === 'waiting' ? 'waiting for approval' : status);
    badge.dataset.status = status;
    const { input, output, cached } = this.usage;
    setText($('usage'), `in ${numberFormat.format(input)} · out ${numberFormat.format(output)} · cached ${numberFormat.format(cached)}`);
    $('resume').hidden = this.live;
    $('composer-stop').disabled = !(this.live && this.running);
    $('composer-input').disabled = !this.live;
    $('composer-send').disabled = !this.live || app.sending;
    $('working').hidden = !(this.live && this.running) || pending;
    $('placeholder').hidden = this.list.childElementCount > 0;
    setText(
      $('placeholder').firstElementChild,
      this.live ? 'Send a message to start.' : 'This session is stored on disk. Resume it to load its transcript and continue it.',
    );
    if (this.live && this.running !== this.listedRunning) {
      // Keep the sidebar badge of the open session in step with its stream.
      this.listedRunning = this.running;
      const session = listedSession(this.id);
      if (session) {
        session.status = this.running ? 'running' : 'idle';
        updateSessionItemTitle(this.id);
      }
    }
  }

  /** Scrolls to the newest item when the reader was already at the bottom. */
  followBottom(changed) {
    const transcript = $('transcript');
    if (this.stick) {
      if (changed) transcript.scrollTop = transcript.scrollHeight;
      this.unseen = false;
    }
    $('jump').hidden = this.stick || !this.unseen;
  }
}

// ---------------------------------------------------------------------------------------
// 5. Composer and page controller
// ---------------------------------------------------------------------------------------

/** Puts the session in the URL hash; the hashchange handler opens it. */
function selectSession(id) {
  closeSidebar();
  const hash = `#session=${encodeURIComponent(id)}`;
  if (location.hash === hash) openSession(id);
  else location.hash = hash;
}

/** The session id in the URL hash, or null. */
function hashSession() {
  const match = /^#session=(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

/**
 * Opens a session (a live one streams; a stored one offers Resume). Concurrent calls for the
 * same id share one promise; a later call for another id wins over an earlier one.
 */
function openSession(id) {
  if (app.view?.id === id && !app.view.closed) return Promise.resolve(app.view);
  if (app.opening?.id === id) return app.opening.promise;
  const opening = { id, promise: null };
  app.opening = opening;
  opening.promise = loadSession(id, opening).finally(() => {
    if (app.opening === opening) app.opening = null;
  });
  return opening.promise;
}

/** The work of openSession: closes the old view, looks the session up, starts the new one. */
async function loadSession(id, opening) {
  if (app.view) app.view.close();
  app.view = null;
  window.__dsh = { applied: [], sessionId: id };
  $('transcript-items').replaceChildren();
  $('jump').hidden = true;
  clearComposerError();
  if (!app.sessionsLoaded || !listedSession(id)) await refreshSessions();
  if (app.opening !== opening) return app.view;
  const session = listedSession(id);
  const live = session ? session.status === 'running' || session.status === 'idle' : false;
  const view = new SessionView(id, live);
  app.view = view;
  renderSessionList();
  $('transcript').scrollTop = 0;
  view.updateChrome();
  if (!session && app.sessionsLoaded) {
    setText($('placeholder').firstElementChild, `No session ${id} is known to this server.`);
    $('resume').hidden = true;
  }
  if (live) {
    view.setConnection('connecting');
    view.connect();
  } else {
    $('connection').hidden = true;
  }
  return view;
}

/** Shows the empty state (no session open). */
function showNoSession() {
  app.opening = null;
  if (app.view) app.view.close();
  app.view = null;
  window.__dsh = { applied: [], sessionId: null };
  $('transcript-items').replaceChildren();
  setText($('session-title'), 'No session open');
  $('session-status').hidden = true;
  setText($('usage'), '');
  $('resume').hidden = true;
  $('connection').hidden = true;
  $('working').hidden = true;
  $('placeholder').hidden = false;
  setText($('placeholder').firstElementChild, 'Start a new session, or pick one on the left.');
  $('composer-stop').disabled = true;
  $('composer-input').disabled = false;
  $('composer-send').disabled = app.sending;
  renderSessionList();
}

/** Creates a new live session and opens it; returns its id. */
async function createSession() {
  const data = await api('POST', '/api/agents', {});
  const id = data?.sessionId;
  if (!id) throw new ApiError(500, 'the server did not return a session id');
  await refreshSessions();
  const opened = openSession(id);
  selectSession(id);
  await opened;
  return id;
}

/** Resumes the open stored session and starts streaming it. */
async function resumeOpenSession() {
  const view = app.view;
  if (!view || view.live) return;
  const button = $('resume');
  button.disabled = true;
  clearComposerError();
  try {
    const data = await api('POST', `/api/sessions/${encodeURIComponent(view.id)}/resume`, {});
    await refreshSessions();
    if (data?.sessionId && data.sessionId !== view.id) {
      selectSession(data.sessionId);
      return;
    }
    if (app.view !== view) return;
    view.live = true;
    view.setConnection('connecting');
    view.updateChrome();
    view.connect();
    $('composer-input').focus();
  } catch (error) {
    showComposerError(`Resume failed: ${error.message}`);
  } finally {
    button.disabled = false;
  }
}

/** Sends the composer's text: steer while a turn runs, followup otherwise. */
async function sendMessage() {
  const input = $('composer-input');
  const text = input.value;
  if (!text.trim() || app.sending) return;
  clearComposerError();
  app.sending = true;
  $('composer-send').disabled = true;
  try {
    if (!app.view) await createSession();
    const view = app.view;
    if (!view.live) throw new ApiError(409, 'this session is stored: resume it first');
    const mode = view.running ? 'steer' : 'followup';
    await api('POST', `/api/agents/${encodeURIComponent(view.id)}/messages`, { text, mode });
    if (input.value === text) input.value = '';
    autosizeComposer();
    view.stick = true;
    refreshSessions();
  } catch (error) {
    showComposerError(`Not sent: ${error.message}`);
  } finally {
    app.sending = false;
    if (app.view) app.view.updateChrome();
    else $('composer-send').disabled = false;
  }
}

/** Asks the server to stop the running turn. */
async function stopTurn() {
  const view = app.view;
  if (!view?.live) return;
  $('composer-stop').disabled = true;
  try {
    await api('POST', `/api/agents/${encodeURIComponent(view.id)}/cancel`, {});
  } catch (error) {
    showComposerError(`Stop failed: ${error.message}`);
    view.updateChrome();
  }
}

/** Shows an error above the composer. */
function showComposerError(message) {
  const el = $('composer-error');
  el.textContent = message;
  el.hidden = false;
}

/** Clears the composer error. */
function clearComposerError() {
  $('composer-error').hidden = true;
}

/** Grows the textarea with its content, up to a limit. */
function autosizeComposer() {
  const input = $('composer-input');
  input.style.height = 'auto';
  input.style.height = `${Math.min(input.scrollHeight, 220)}px`;
}

/** Opens the sidebar drawer on narrow windows. */
function openSidebar() {
  document.body.classList.add('sidebar-open');
  $('scrim').hidden = false;
}

/** Closes the sidebar drawer. */
function closeSidebar() {
  document.body.classList.remove('sidebar-open');
  $('scrim').hidden = true;
}

/** Follows the reader's scrolling: autoscroll stays on only at the bottom. */
function onTranscriptScroll() {
  const transcript = $('transcript');
  const view = app.view;
  if (!view) return;
  const top = transcript.scrollTop;
  const atBottom = transcript.scrollHeight - top - transcript.clientHeight <= STICK_SLACK_PX;
  // Only an upward move unsticks: content that grows under a programmatic scroll to the
  // bottom (content-visibility sizes items as they render) must not.
  if (atBottom) view.stick = true;
  else if (top < view.lastScrollTop - 2) view.stick = false;
  view.lastScrollTop = top;
  if (view.stick) view.unseen = false;
  $('jump').hidden = view.stick || !view.unseen;
}

/** Wires the page's controls. */
function bindControls() {
  $('new-session').addEventListener('click', async () => {
    const button = $('new-session');
    button.disabled = true;
    clearComposerError();
    try {
      await createSession();
      $('composer-input').focus();
    } catch (error) {
      showComposerError(`Could not start a session: ${error.message}`);
    } finally {
      button.disabled = false;
    }
  });
  $('resume').addEventListener('click', resumeOpenSession);
  $('composer').addEventListener('submit', (event) => {
    event.preventDefault();
    sendMessage();
  });
  $('composer-stop').addEventListener('click', stopTurn);
  const input = $('composer-input');
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey && !event.isComposing) {
      event.preventDefault();
      sendMessage();
    }
  });
  input.addEventListener('input', autosizeComposer);
  $('transcript').addEventListener('scroll', onTranscriptScroll, { passive: true });
  // Items change size after they are appended (text streams in, content-visibility renders
  // them): keep the bottom in view while the reader is there and events are arriving (not
  // when the reader merely opens a <details> in a quiet transcript).
  new ResizeObserver(() => {
    const view = app.view;
    if (!view?.stick || !(view.running || performance.now() - view.lastAppliedAt < 1000)) return;
    const transcript = $('transcript');
    transcript.scrollTop = transcript.scrollHeight;
  }).observe($('transcript-items'));
  $('jump').addEventListener('click', () => {
    const transcript = $('transcript');
    transcript.scrollTop = transcript.scrollHeight;
    if (app.view) app.view.stick = true;
    $('jump').hidden = true;
  });
  $('toggle-sidebar').addEventListener('click', () => {
    if (document.body.classList.contains('sidebar-open')) closeSidebar();
    else openSidebar();
  });
  $('scrim').addEventListener('click', closeSidebar);
  window.addEventListener('hashchange', () => {
    const id = hashSession();
    if (id) openSession(id);
    else showNoSession();
  });
}

/** Start-up: controls, the session list and its refresh, and the session in the hash. */
async function start() {
  window.__dsh = { applied: [], sessionId: null };
  bindControls();
  const id = hashSession();
  if (id) await openSession(id);
  else {
    showNoSession();
    await refreshSessions();
  }
  setInterval(refreshSessions, LIST_REFRESH_MS);
}

start();
