// dsh web: the browser UI of `dsh web`. This is its entry point: it wires the modules in
// js/ to the page and starts up.
//
// Plain ES modules with no build step and no dependencies. The UI lists sessions, opens
// one, streams its events over server-sent events and renders them incrementally; the
// composer sends messages, stops turns and answers approval questions. Everything the model
// or a tool wrote is untrusted: it only ever reaches the page through textContent / text
// nodes.
//
//   js/dom.js, js/format.js      small DOM helpers; readable numbers, times and text
//   js/hash.js                   the URL fragment's parameters, read without throwing
//   js/token.js, js/token-banner.js   the launch token (fragment → localStorage); its banner
//   js/login.js                  trades the one-time `#login=` code for the token
//   js/api.js                    the JSON API client (sends the token)
//   js/state.js                  the state the modules share
//   js/sidebar.js                the session list and its drawer
//   js/sessions.js               selection, hash routing, opening, creating, resuming
//   js/session-view.js           one open session: stream + transcript + page chrome
//   js/stream.js                 EventSource, dedupe by seq, per-frame batches, __dsh hook
//   js/transcript.js             events → transcript items (messages, approvals, turn ends)
//   js/steps.js                  assistant steps: text blocks and tool cards
//   js/text-block.js, js/tool-cards.js, js/approvals.js   the items' building blocks
//   js/tool-output.js            a tool's output text, collapsed when long
//   js/file-present.js           the file tools' cards: what they show (arguments, meta)
//   js/file-views.js, js/line-diff.js   read, diff and search views; the LCS line diff
//   js/scroll.js                 autoscroll and "Jump to latest"
//   js/composer.js, js/composer-error.js                  send, steer, stop; error line

import { bindComposer } from './js/composer.js';
import { bindScrolling } from './js/scroll.js';
import { bindSessions, hashSession, openSession, selectSession, showNoSession } from './js/sessions.js';
import { bindSidebar, refreshSessions } from './js/sidebar.js';
import { resetAppliedLog } from './js/stream.js';
import { showTokenBanner } from './js/token-banner.js';
import { bindToken } from './js/token.js';

/** How often the session list is refreshed while the page is visible. */
const LIST_REFRESH_MS = 5000;

/** Refreshes the session list every LIST_REFRESH_MS while the page is visible, and on showing it. */
function pollSessions() {
  setInterval(() => {
    if (!document.hidden) refreshSessions();
  }, LIST_REFRESH_MS);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) refreshSessions();
  });
}

/** Start-up: the token, controls, the session list and its refresh, the session in the hash. */
async function start() {
  // First, so the token or login code leaves the address bar at once (and before the hash
  // is routed).
  const notSignedIn = await bindToken(refreshSessions);
  if (notSignedIn) showTokenBanner(notSignedIn);
  resetAppliedLog(null);
  bindSidebar(selectSession);
  bindSessions();
  bindComposer();
  bindScrolling();
  const id = hashSession();
  if (id) await openSession(id);
  else {
    showNoSession();
    await refreshSessions();
  }
  pollSessions();
}

start();
