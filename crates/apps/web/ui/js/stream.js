// The event stream of one session: an EventSource that resumes after the last event
// received, drops events already applied (by seq) and applies the rest in per-frame
// batches. When a test installed the hook `window.__dsh` (before the page's scripts), it
// records in `window.__dsh.applied` every seq applied, in order, since the open session was
// selected. EventSource cannot set headers, so the token rides in the URL's query (the
// server takes it there for GETs only).

import { currentToken } from './token.js';

/** Milliseconds of event application per animation frame before yielding to the browser. */
const FRAME_BUDGET_MS = 8;

/** Starts a fresh `window.__dsh` log for the selected session (null: none), if a test installed it. */
export function resetAppliedLog(sessionId) {
  if (!window.__dsh) return;
  window.__dsh.applied = [];
  window.__dsh.sessionId = sessionId;
}

/** A session's event stream and the queue of events it received but has not applied. */
export class EventStream {
  /**
   * Prepares the stream of session `id`. Hooks: `onEvent(event)` applies one event,
   * `onBatch(count)` runs after each batch, `onState(state)` reports the connection, and
   * `onRefused()` (awaited after the server refused the stream) says whether to retry.
   */
  constructor(id, hooks) {
    this.id = id;
    this.hooks = hooks;
    this.closed = false;
    this.source = null;
    this.queue = [];
    this.queueHead = 0;
    this.lastSeq = -1;
    this.lastReceived = -1;
    this.flushScheduled = false;
    this.retryTimer = 0;
    this.retryDelay = 1000;
    resetAppliedLog(id);
  }

  /** Opens the event stream after the last event received. */
  connect() {
    if (this.closed || this.source) return;
    clearTimeout(this.retryTimer);
    const from = this.lastReceived + 1;
    const token = currentToken();
    const auth = token ? `&token=${encodeURIComponent(token)}` : '';
    const source = new EventSource(`/api/sessions/${encodeURIComponent(this.id)}/events?from=${from}${auth}`);
    this.source = source;
    source.addEventListener('open', () => {
      if (this.source !== source) return;
      this.retryDelay = 1000;
      this.hooks.onState('connected');
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
        this.hooks.onState('reconnecting');
        return;
      }
      // Closed: the server refused (not live, bad token) or answered something else.
      source.close();
      this.source = null;
      this.hooks.onState('reconnecting');
      this.retryTimer = setTimeout(() => this.recover(), this.retryDelay);
      this.retryDelay = Math.min(this.retryDelay * 2, 15000);
    });
  }

  /** Stops streaming for good (another session is opened). */
  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    if (this.source) this.source.close();
    this.source = null;
    this.queue = [];
  }

  /** After a refused stream: reconnects when the owner says the session can still stream. */
  async recover() {
    if (this.closed) return;
    const retry = await this.hooks.onRefused();
    if (this.closed || !retry) return;
    this.connect();
  }

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

  /** Applies queued events for up to one frame's budget, then runs the batch hook once. */
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
    this.hooks.onBatch(count);
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
    window.__dsh?.applied.push(seq);
    try {
      this.hooks.onEvent(event);
    } catch (error) {
      console.error(`dsh: rendering event ${seq} (${event.type}) failed:`, error);
    }
  }
}
