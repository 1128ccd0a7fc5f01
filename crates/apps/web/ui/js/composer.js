// The composer: sends a message (a followup, or a steer while a turn runs, creating a
// session first when none is open), stops the running turn, and grows with its text.

import { api, ApiError } from './api.js';
import { clearComposerError, showComposerError } from './composer-error.js';
import { $ } from './dom.js';
import { createSession } from './sessions.js';
import { refreshSessions } from './sidebar.js';
import { app } from './state.js';

/** Wires the composer: Send (or Enter), Stop, and autosizing. */
export function bindComposer() {
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
    view.scroll.stick = true;
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

/** Grows the textarea with its content, up to a limit. */
function autosizeComposer() {
  const input = $('composer-input');
  input.style.height = 'auto';
  input.style.height = `${Math.min(input.scrollHeight, 220)}px`;
}
