// The sidebar: the session list (fetched from the server, then patched in place, never
// rebuilt) and its drawer on narrow windows.

import { api } from './api.js';
import { $, h, setText } from './dom.js';
import { relativeTime, shortId } from './format.js';
import { app } from './state.js';

/** Session id → its <li> in the sidebar. */
const items = new Map();

/** Fetches the session list and updates the sidebar; returns the list (or null on error). */
export async function refreshSessions() {
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
export function listedSession(id) {
  return app.sessions.find((session) => session.id === id) ?? null;
}

/** The title shown for session `id` (listed as `session`): its listed title, else its short id. */
export function sessionTitle(id, session = listedSession(id)) {
  return session?.title || shortId(id);
}

/** Updates the sidebar in place: one <li> per session, reordered and patched, never rebuilt. */
export function renderSessionList() {
  const list = $('session-list');
  const seen = new Set();
  app.sessions.forEach((session, index) => {
    seen.add(session.id);
    let item = items.get(session.id);
    if (!item) {
      item = createSessionItem(session.id);
      items.set(session.id, item);
    }
    updateSessionItem(item, session);
    if (list.children[index] !== item) list.insertBefore(item, list.children[index] ?? null);
  });
  for (const [id, item] of items) {
    if (!seen.has(id)) {
      item.remove();
      items.delete(id);
    }
  }
  $('session-list-empty').hidden = !app.sessionsLoaded || app.sessions.length > 0;
}

/** Repaints one sidebar entry from its listed facts (e.g. after a new title was patched in). */
export function repaintSessionItem(id) {
  const item = items.get(id);
  const session = listedSession(id);
  if (item && session) updateSessionItem(item, session);
}

/** Closes the sidebar drawer. */
export function closeSidebar() {
  document.body.classList.remove('sidebar-open');
  $('scrim').hidden = true;
}

/** Wires the sidebar: a click on an entry calls `onSelect(id)`; the drawer's toggle and scrim. */
export function bindSidebar(onSelect) {
  $('session-list').addEventListener('click', (event) => {
    const item = event.target.closest('.session-link')?.closest('.session-item');
    if (item) onSelect(item.dataset.sessionId);
  });
  $('toggle-sidebar').addEventListener('click', () => {
    if (document.body.classList.contains('sidebar-open')) closeSidebar();
    else openSidebar();
  });
  $('scrim').addEventListener('click', closeSidebar);
}

/** Opens the sidebar drawer on narrow windows. */
function openSidebar() {
  document.body.classList.add('sidebar-open');
  $('scrim').hidden = false;
}

/** The badge word for a listed status. */
function statusWord(status) {
  return status === 'running' || status === 'idle' ? status : 'stored';
}

/** Creates the sidebar entry of one session (clicks are handled on the list). */
function createSessionItem(id) {
  const button = h(
    'button',
    { type: 'button', class: 'session-link' },
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
  setText(item.querySelector('.session-item-title'), sessionTitle(session.id, session));
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
