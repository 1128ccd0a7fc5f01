// One open session: connects its event stream to its transcript and shows its state in the
// header (title, status, usage, connection), the composer's buttons and its sidebar badge.

import { $, setText } from './dom.js';
import { formatNumber } from './format.js';
import { Autoscroll } from './scroll.js';
import { listedSession, refreshSessions, repaintSessionItem, sessionTitle } from './sidebar.js';
import { app } from './state.js';
import { EventStream } from './stream.js';
import { Transcript } from './transcript.js';

/** One open session: its stream, its transcript, its autoscroll and the page chrome. */
export class SessionView {
  /** Prepares an empty view for `id`; `live` says whether it can stream now. */
  constructor(id, live) {
    this.id = id;
    this.live = live;
    this.scroll = new Autoscroll();
    this.transcript = new Transcript($('transcript-items'), id, {
      onGrow: () => this.scroll.grew(),
      onTitle: (title) => this.setTitle(title),
    });
    this.stream = new EventStream(id, {
      onEvent: (event) => this.transcript.apply(event),
      onBatch: (count) => this.afterBatch(count),
      onState: (state) => this.setConnection(state),
      onRefused: () => this.streamRefused(),
    });
  }

  /** Whether the view was closed (another session was opened). */
  get closed() {
    return this.stream.closed;
  }

  /** Whether a turn is running. */
  get running() {
    return this.transcript.running;
  }

  /** Starts (or resumes) streaming the session's events. */
  connect() {
    this.stream.connect();
  }

  /** Stops streaming and forgets the view (another session is opened). */
  close() {
    this.stream.close();
  }

  /** Shows the connection state in the header. */
  setConnection(state) {
    if (app.view !== this) return;
    const el = $('connection');
    el.hidden = false;
    setText(el, state);
    el.dataset.state = state;
  }

  /** Updates title, status, usage, Stop and the working indicator (once per frame). */
  updateChrome() {
    if (app.view !== this) return;
    setText($('session-title'), sessionTitle(this.id));
    const pending = this.transcript.hasPendingApproval();
    const status = !this.live ? 'stored' : pending ? 'waiting' : this.running ? 'running' : 'idle';
    const badge = $('session-status');
    badge.hidden = false;
    setText(badge, status === 'waiting' ? 'waiting for approval' : status);
    badge.dataset.status = status;
    const { input, output, cached } = this.transcript.usage;
    setText($('usage'), `in ${formatNumber(input)} · out ${formatNumber(output)} · cached ${formatNumber(cached)}`);
    $('resume').hidden = this.live;
    $('composer-stop').disabled = !(this.live && this.running);
    $('composer-input').disabled = !this.live;
    $('composer-send').disabled = !this.live || app.sending;
    $('working').hidden = !(this.live && this.running) || pending;
    $('placeholder').hidden = !this.transcript.isEmpty();
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
        repaintSessionItem(this.id);
      }
    }
  }

  /** After a batch of events: writes streamed text, updates the chrome, follows the bottom. */
  afterBatch(count) {
    this.transcript.flushText();
    this.updateChrome();
    this.scroll.follow(count > 0);
  }

  /** session/title: set on the listed session; the sidebar repaints now, the header after the batch. */
  setTitle(title) {
    const session = listedSession(this.id);
    if (!session) return;
    session.title = title;
    repaintSessionItem(this.id);
  }

  /** After a refused stream: finds out why (token, stored session); true to reconnect. */
  async streamRefused() {
    const sessions = await refreshSessions();
    if (this.closed) return false;
    if (sessions) {
      const session = listedSession(this.id);
      if (!session || session.status === null || session.status === undefined) {
        this.live = false;
        this.transcript.running = false;
        this.setConnection('disconnected');
        this.updateChrome();
        return false;
      }
    }
    return true;
  }
}
