// Autoscroll of the transcript: it follows new content while the reader is at the bottom,
// and offers "Jump to latest" once they scrolled up and something new arrived.

import { $ } from './dom.js';
import { app } from './state.js';

/** Pixels from the bottom that still count as "at the bottom" for autoscroll. */
const STICK_SLACK_PX = 48;

/** The autoscroll state of one open session. */
export class Autoscroll {
  /** Starts stuck to the bottom. */
  constructor() {
    this.stick = true;
    this.unseen = false;
    this.lastScrollTop = 0;
    this.lastChangeAt = 0;
  }

  /** Notes new content: unseen while the reader is scrolled up. */
  grew() {
    if (!this.stick) this.unseen = true;
  }

  /** After a batch of events: scrolls to the newest item when the reader was at the bottom. */
  follow(changed) {
    if (changed) this.lastChangeAt = performance.now();
    const transcript = $('transcript');
    if (this.stick) {
      if (changed) transcript.scrollTop = transcript.scrollHeight;
      this.unseen = false;
    }
    $('jump').hidden = this.stick || !this.unseen;
  }

  /** Follows the reader's scrolling: autoscroll stays on only at the bottom. */
  onScroll() {
    const transcript = $('transcript');
    const top = transcript.scrollTop;
    const atBottom = transcript.scrollHeight - top - transcript.clientHeight <= STICK_SLACK_PX;
    // Only an upward move unsticks: content that grows under a programmatic scroll to the
    // bottom (content-visibility sizes items as they render) must not.
    if (atBottom) this.stick = true;
    else if (top < this.lastScrollTop - 2) this.stick = false;
    this.lastScrollTop = top;
    if (this.stick) this.unseen = false;
    $('jump').hidden = this.stick || !this.unseen;
  }
}

/** Wires the transcript's scrolling, its resize follow-up and the "Jump to latest" button. */
export function bindScrolling() {
  $('transcript').addEventListener('scroll', () => app.view?.scroll.onScroll(), { passive: true });
  // Items change size after they are appended (text streams in, content-visibility renders
  // them): keep the bottom in view while the reader is there and events are arriving (not
  // when the reader merely opens a <details> in a quiet transcript).
  new ResizeObserver(() => {
    const view = app.view;
    if (!view?.scroll.stick || !(view.running || performance.now() - view.scroll.lastChangeAt < 1000)) return;
    scrollToBottom();
  }).observe($('transcript-items'));
  $('jump').addEventListener('click', () => {
    scrollToBottom();
    if (app.view) app.view.scroll.stick = true;
    $('jump').hidden = true;
  });
}

/** Scrolls the transcript to its end. */
function scrollToBottom() {
  const transcript = $('transcript');
  transcript.scrollTop = transcript.scrollHeight;
}
