// The error line above the composer: why a send, a stop, a new session or a resume failed.

import { $ } from './dom.js';

/** Shows an error above the composer. */
export function showComposerError(message) {
  const el = $('composer-error');
  el.textContent = message;
  el.hidden = false;
}

/** Clears the composer error. */
export function clearComposerError() {
  $('composer-error').hidden = true;
}
