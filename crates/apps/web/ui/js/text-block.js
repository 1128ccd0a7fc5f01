// One streamed text or reasoning block of an assistant step: text is queued as it streams
// and written to the DOM once per frame; reasoning collapses to "Thinking" when done.

import { h } from './dom.js';

/** A text or reasoning block: its DOM, its written text and the text still queued. */
export class TextBlock {
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
