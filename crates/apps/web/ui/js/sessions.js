// Which session is open: selection through the URL hash (`#session=<id>`), opening one (a
// live one streams, a stored one offers Resume), creating and resuming sessions, and the
// empty state.

import { api, ApiError } from './api.js';
import { clearComposerError, showComposerError } from './composer-error.js';
import { $, setText } from './dom.js';
import { hashParams } from './hash.js';
import { SessionView } from './session-view.js';
import { closeSidebar, listedSession, refreshSessions, renderSessionList } from './sidebar.js';
import { app } from './state.js';
import { resetAppliedLog } from './stream.js';

/** Puts the session in the URL hash; the hashchange handler opens it. */
export function selectSession(id) {
  closeSidebar();
  const hash = `#session=${encodeURIComponent(id)}`;
  if (location.hash === hash) openSession(id);
  else location.hash = hash;
}

/** The session id in the URL hash, or null (also for a malformed hash). */
export function hashSession() {
  return hashParams().get('session') || null;
}

/**
 * Opens a session (a live one streams; a stored one offers Resume). Concurrent calls for the
 * same id share one promise; a later call for another id wins over an earlier one.
 */
export function openSession(id) {
  if (app.view?.id === id && !app.view.closed) return Promise.resolve(app.view);
  if (app.opening?.id === id) return app.opening.promise;
  const opening = { id, promise: null };
  app.opening = opening;
  opening.promise = loadSession(id, opening).finally(() => {
    if (app.opening === opening) app.opening = null;
  });
  return opening.promise;
}

/** Shows the empty state (no session open). */
export function showNoSession() {
  app.opening = null;
  if (app.view) app.view.close();
  app.view = null;
  resetAppliedLog(null);
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
export async function createSession() {
  const data = await api('POST', '/api/agents', {});
  const id = data?.sessionId;
  if (!id) throw new ApiError(500, 'the server did not return a session id');
  await refreshSessions();
  const opened = openSession(id);
  selectSession(id);
  await opened;
  return id;
}

/** Wires New session, Resume and the URL hash. */
export function bindSessions() {
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
  window.addEventListener('hashchange', () => {
    const id = hashSession();
    if (id) openSession(id);
    else showNoSession();
  });
}

/** The work of openSession: closes the old view, looks the session up, starts the new one. */
async function loadSession(id, opening) {
  if (app.view) app.view.close();
  app.view = null;
  resetAppliedLog(id);
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
